import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gufo } from '../../support/cli';
import { RawGguf } from '../../support/raw-gguf';
import { tempDir } from '../../support/temp';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { llamaTokenize, openTokenizerPair, type TokenizerPair } from '../../support/tokenizer-parity';
import { vocabPath } from '../../support/tokenizer-vectors';

const LLAMA_SPM = vocabPath('ggml-vocab-llama-spm');
const PHI3 = vocabPath('ggml-vocab-phi-3');

function json(args: string[]): unknown {
  const r = gufo(args);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return JSON.parse(r.stdout);
}

describe('gufo tokenize', () => {
  let pair: TokenizerPair;
  beforeAll(async () => {
    pair = await openTokenizerPair(PHI3);
  });
  afterAll(async () => {
    await pair?.close();
  });

  it('prints ids and pieces as JSON', () => {
    expect(json(['tokenize', LLAMA_SPM, 'Hello world', '--json'])).toEqual({
      ids: [15043, 3186],
      pieces: [' Hello', ' world'],
    });
    // Byte tokens of one emoji: each piece alone is not UTF-8.
    const emoji = json(['tokenize', LLAMA_SPM, '😀', '--json']) as { ids: number[]; pieces: string[] };
    expect(emoji.ids).toEqual([29871, 243, 162, 155, 131]);
    expect(emoji.pieces.slice(1)).toEqual(['\ufffd', '\ufffd', '\ufffd', '\ufffd']);
  });

  it('--special parses control tokens and --bos adds BOS as the vocabulary asks, as llama.cpp does', () => {
    const text = '<|user|>\nHi there<|end|>\n<|assistant|>';
    const plain = json(['tokenize', PHI3, text, '--json']) as { ids: number[] };
    expect(plain.ids).toEqual(llamaTokenize(pair.model, text, false));
    const special = json(['tokenize', PHI3, text, '--special', '--json']) as { ids: number[]; pieces: string[] };
    expect(special.ids).toEqual(llamaTokenize(pair.model, text, true));
    expect(special.pieces[0]).toBe('<|user|>');
    const bos = json(['tokenize', PHI3, text, '--special', '--bos', '--json']) as { ids: number[]; pieces: string[] };
    expect(bos.ids).toEqual([1, ...special.ids]);
    expect(bos.pieces[0]).toBe('<s>');
  });

  it('--in tokenizes one JSON string per line, in order', () => {
    const dir = tempDir();
    const texts = tokenizerCorpus().slice(0, 150);
    const file = join(dir, 'texts.jsonl');
    writeFileSync(file, texts.map((t) => JSON.stringify(t)).join('\n') + '\n\n');
    for (const special of [false, true]) {
      const out = json(['tokenize', PHI3, '--in', file, '--json', ...(special ? ['--special'] : [])]) as {
        ids: number[];
      }[];
      expect(out).toEqual(texts.map((t) => ({ ids: llamaTokenize(pair.model, t, special) })));
    }
    const withBos = json(['tokenize', PHI3, '--in', file, '--bos', '--json']) as { ids: number[] }[];
    expect(
      withBos.every(
        (r, i) => r.ids[0] === 1 && r.ids.length === llamaTokenize(pair.model, texts[i]!, false).length + 1,
      ),
    ).toBe(true);
  });

  it('prints ids and pieces readably without --json', () => {
    const r = gufo(['tokenize', LLAMA_SPM, 'Hello 😀']);
    expect(r.status).toBe(0);
    expect(r.stdout).toContain('6 tokens');
    expect(r.stdout).toMatch(/15043 {2}" Hello"/);
    expect(r.stdout).toContain('<0xF0>');
  });

  it('fails clearly on bad input and on tokenizers it does not support', () => {
    const dir = tempDir();
    const t5 = join(dir, 't5.gguf');
    const raw = new RawGguf().header(0, 2).kvString('tokenizer.ggml.model', 't5');
    raw.str('tokenizer.ggml.tokens').u32(9).u32(8).u64(3).str('<pad>').str('</s>').str('<unk>');
    writeFileSync(t5, raw.build());
    let r = gufo(['tokenize', t5, 'hi']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/unsupported tokenizer "t5"/);

    r = gufo(['tokenize', LLAMA_SPM]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/expected a text or --in/);

    const bad = join(dir, 'bad.jsonl');
    writeFileSync(bad, '"ok"\n{"not": "a string"}\n');
    r = gufo(['tokenize', LLAMA_SPM, '--in', bad, '--json']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/bad\.jsonl:2: expected a JSON string/);
  });
});
