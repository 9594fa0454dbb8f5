import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Llama } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufType } from '../../../src-main/core/gguf/values';
import {
  BYTE_TO_CHAR,
  BYTE_TO_CODEPOINT,
  byteLevelDecode,
  byteLevelEncode,
} from '../../../src-main/core/tokenizer/byte-unicode';
import { createTokenizer } from '../../../src-main/core/tokenizer/index';
import {
  KNOWN_UNSUPPORTED_PRE_TOKENIZERS,
  resolvePreTokenizer,
  SUPPORTED_PRE_TOKENIZERS,
} from '../../../src-main/core/tokenizer/pre-tokenizers';
import {
  ACCENT_MARK,
  CATEGORY_MASK,
  codepointFlags,
  CONTROL,
  LETTER,
  NUMBER,
  PUNCTUATION,
  SEPARATOR,
  SYMBOL,
  UNDEFINED,
  WHITESPACE,
} from '../../../src-main/core/tokenizer/unicode-flags';
import { readVocab, VocabError } from '../../../src-main/core/tokenizer/vocab';
import { openGguf, writeGguf } from '../../../src-main/node/gguf-io';
import { llamaCpp } from '../../support/llama';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { addonOf, firstDifference, llamaDetokenize } from '../../support/tokenizer-parity';
import { vocabPath } from '../../support/tokenizer-vectors';

// Every tokenizer.ggml.pre value llama.cpp knows: split examples, llama.cpp's settings per value,
// its Unicode classes, and the ids against llama.cpp with the GPT-2 vocabulary relabelled.

/** The words a pre-tokenizer splits `text` into. */
function words(pre: string | null, text: string): string[] {
  const cps = Int32Array.from(Array.from(text, (c) => c.codePointAt(0)!));
  const out: string[] = [];
  let at = 0;
  for (const length of resolvePreTokenizer(pre).split(cps, cps.length)) {
    out.push(String.fromCodePoint(...cps.subarray(at, at + length)));
    at += length;
  }
  return out;
}

describe('pre-tokenizers', () => {
  it('split as llama.cpp does', () => {
    expect(words('gpt-2', "Hello world's  foo\n\n bar 1234")).toEqual([
      'Hello',
      ' world',
      "'s",
      ' ',
      ' foo',
      '\n\n',
      ' bar',
      ' 1234',
    ]);
    // default: punctuation runs first, then GPT-2's regex, then digit runs, then groups of 3 ASCII digits.
    expect(words(null, "world's 1234 $x+=1;")).toEqual([
      'world',
      "'",
      's',
      ' ',
      '123',
      '4',
      ' ',
      '$',
      'x',
      '+=',
      '1',
      ';',
    ]);
    expect(words('llama-bpe', "1234567 abc'LL\n\n  x ¿¡Qué?")).toEqual([
      '123',
      '456',
      '7',
      ' abc',
      "'LL",
      '\n\n',
      ' ',
      ' x',
      ' ¿¡',
      'Qué',
      '?',
    ]);
    expect(words('qwen2', "1234 abc'LL")).toEqual(['1', '2', '3', '4', ' abc', "'LL"]);
    expect(words('starcoder', 'x = 123')).toEqual(['x', ' =', ' ', '1', '2', '3']);
    expect(words('deepseek-coder', 'Hello, 世界 123!')).toEqual(['Hello', ',', ' ', '世界', ' ', '1', '2', '3', '!']);
    expect(words('gpt-4o', 'HelloWorld abc')).toEqual(['Hello', 'World', ' abc']);
    expect(words('gpt-2', '')).toEqual([]);
  });

  it("classify code points by llama.cpp's Unicode table, not the JS engine's", () => {
    // U+1C89 (a letter since Unicode 16) and U+0378 (unassigned) are undefined in llama.cpp's table:
    // GPT-2's splitter treats them like punctuation.
    expect(words('gpt-2', 'A\u1c89B x\u0378y')).toEqual(['A', '\u1c89', 'B', ' x', '\u0378', 'y']);
  });

  it("carry llama.cpp's per-value settings", () => {
    const p = (name: string | null) => {
      const t = resolvePreTokenizer(name);
      return {
        type: t.type,
        ignoreMerges: t.ignoreMerges,
        addBos: t.addBosDefault,
        addSep: t.addSepDefault,
        cleanSpaces: t.cleanSpaces,
        noBos: t.noBos,
      };
    };
    const base = { ignoreMerges: false, addBos: false, addSep: false, cleanSpaces: true, noBos: false };
    expect(p(null)).toEqual({ ...base, type: 'default' });
    expect(p('llama-bpe')).toEqual({ ...base, type: 'llama3', ignoreMerges: true, addBos: true });
    expect(p('dbrx')).toEqual({ ...base, type: 'dbrx' });
    expect(p('qwen2')).toEqual({ ...base, type: 'qwen2', cleanSpaces: false });
    expect(p('stablelm2')).toEqual({ ...base, type: 'qwen2' });
    expect(p('tekken')).toEqual({ ...base, type: 'tekken', ignoreMerges: true, addBos: true, cleanSpaces: false });
    expect(p('jina-v2-code')).toEqual({ ...base, type: 'gpt2', addSep: true });
    expect(p('chatglm-bpe')).toEqual({ ...base, type: 'chatglm4', noBos: true });
    expect(p('command-r')).toEqual({ ...base, type: 'starcoder', cleanSpaces: false });
  });

  it('refuse what they do not tokenize, with a clear error', () => {
    expect(() => resolvePreTokenizer('no-such-pre', 'x.gguf')).toThrow(VocabError);
    expect(() => resolvePreTokenizer('no-such-pre', 'x.gguf')).toThrow(
      'x.gguf: unsupported pre-tokenizer "no-such-pre"',
    );
    for (const name of KNOWN_UNSUPPORTED_PRE_TOKENIZERS) {
      expect(() => resolvePreTokenizer(name)).toThrow(`unsupported pre-tokenizer "${name}"`);
    }
    expect(SUPPORTED_PRE_TOKENIZERS.filter((n) => KNOWN_UNSUPPORTED_PRE_TOKENIZERS.has(n))).toEqual([]);
    for (const name of [
      'default',
      'gpt-2',
      'llama-bpe',
      'qwen2',
      'deepseek-llm',
      'deepseek-coder',
      'falcon',
      'mpt',
      'starcoder',
      'refact',
      'command-r',
      'smollm',
      'gpt-4o',
      'tekken',
      'phi-2',
      'stablelm2',
      'olmo',
    ]) {
      expect(SUPPORTED_PRE_TOKENIZERS).toContain(name);
    }
  });
});

describe("llama.cpp's Unicode table", () => {
  it('differs from the JS engine only on code points it does not know (newer Unicode)', () => {
    const flags = codepointFlags();
    const js: [RegExp, number][] = [
      [/\p{L}/u, LETTER],
      [/\p{N}/u, NUMBER],
      [/\p{Z}/u, SEPARATOR],
      [/\p{M}/u, ACCENT_MARK],
      [/\p{P}/u, PUNCTUATION],
      [/\p{S}/u, SYMBOL],
      [/\p{Cn}/u, UNDEFINED],
      [/\p{C}/u, CONTROL],
    ];
    const unexpected: string[] = [];
    let newer = 0;
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ours = flags[cp]! & CATEGORY_MASK;
      const s = String.fromCodePoint(cp);
      const theirs = js.find(([re]) => re.test(s))![1];
      if (ours === theirs) continue;
      if (ours === UNDEFINED) newer++;
      else if (unexpected.length < 10) unexpected.push(cp.toString(16));
    }
    expect(unexpected).toEqual([]);
    expect(newer).toBeLessThan(20_000);
  });

  it("has llama.cpp's whitespace set", () => {
    const flags = codepointFlags();
    const spaces: number[] = [];
    for (let cp = 0; cp <= 0x10ffff; cp++) if (flags[cp]! & WHITESPACE) spaces.push(cp);
    expect(spaces).toEqual([
      0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006,
      0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000,
    ]);
    expect(flags[0xfeff]! & CATEGORY_MASK).toBe(CONTROL);
  });
});

describe("GPT-2's byte-level alphabet", () => {
  it('maps the 256 bytes to distinct printable characters and back', () => {
    expect(new Set(BYTE_TO_CODEPOINT).size).toBe(256);
    expect([BYTE_TO_CHAR[0x20], BYTE_TO_CHAR[0x0a], BYTE_TO_CHAR[0x41], BYTE_TO_CHAR[0xff]]).toEqual([
      'Ġ',
      'Ċ',
      'A',
      'ÿ',
    ]);
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(byteLevelDecode(byteLevelEncode(all))).toEqual(all);
  });

  it("decodes a character outside the alphabet as llama.cpp's llama_decode_text does", () => {
    expect(new TextDecoder().decode(byteLevelDecode('aĀ€'))).toBe('a\u0000[UNK_BYTE_0xe282acaĀ€]');
  });
});

// ---------------------------------------------------------------------------------------------
// Against llama.cpp: the GPT-2 vocabulary under every pre-tokenizer name.

/** Strings that tell the pre-tokenizers apart: whitespace classes, newer Unicode, digits, contractions. */
function edgeTexts(): string[] {
  const odd = [
    ...[
      '\u0085',
      '\u00a0',
      '\u1680',
      '\u2000',
      '\u2028',
      '\u2029',
      '\u202f',
      '\u205f',
      '\u3000',
      '\ufeff',
      '\u200b',
      '\u180e',
    ],
    ...['\x1c', '\x1f', '\x0b', '\x0c', '\x00', '\x7f'],
    ...[
      '\u0378',
      '\u1acf',
      '\u1c89',
      '\u088f',
      '\u{1e030}',
      '\u{10d40}',
      '\u20c1',
      '\ue000',
      '\u{f0000}',
      '\ufffe',
      '\u{10ffff}',
    ],
    ...['\u0345', '\u0301', '\u2160', '\u00b2', '\u0660', 'ǅ', 'ß', 'İ', '\u212a', '\u{1d400}', '가', 'ア', '中'],
  ];
  const out: string[] = [];
  for (const a of odd) {
    out.push(
      a,
      `x${a}y`,
      ` ${a} `,
      `${a}${a}a`,
      `1${a}2`,
      `'${a}s`,
      `${a}\n`,
      `  ${a}`,
      `.${a}.`,
      `a ${a}b`,
      `${a}'S`,
      `A${a}B`,
    );
  }
  out.push(
    "'S'LL'Re'vE",
    "x'S",
    '123456789',
    '１２３',
    '٣٤٥',
    'a\r\n\r\nb',
    ' \r \n ',
    '\t\t\ta',
    '   \u00a0\u00a0x',
    'HelloWorld ÀÉÎõü',
  );
  // Astral letters inside and outside deepseek-llm's letter ranges (Deseret, Adlam; Gothic, math).
  out.push(
    'x\u{10437}\u{10437} \u{1e900}y \u{10437}1',
    '\u{10348}\u{10437}\u{1d518}.\u{1e900}\u{1e900}',
    ' \u{10437}\n\u{1e943} ',
  );
  return out;
}

/**
 * Listed in the issue and without a vocabulary file of their own here: checked with every kind of
 * word the whole corpus makes (wordKindCover).
 */
const FULL_CORPUS = new Set(['command-r', 'smollm', 'gpt-4o', 'tekken', 'phi-2', 'stablelm2', 'olmo']);

/** A code point's class for word kinds: ASCII letter case, digit and whitespace apart; else llama.cpp's category. */
function pointClass(cp: number | undefined): string {
  if (cp === undefined) return 'end';
  if (cp < 0x80) {
    const c = String.fromCharCode(cp);
    if (/[A-Z]/.test(c)) return 'A';
    if (/[a-z]/.test(c)) return 'a';
    if (/[0-9]/.test(c)) return '0';
    if (/[\s']/.test(c)) return c;
  }
  const flags = codepointFlags()[cp]!;
  return `${flags & WHITESPACE ? 'ws' : ''}${flags & CATEGORY_MASK}`;
}

/**
 * The first 300 corpus strings, then, shortest first, each later one that makes a kind of word the
 * strings before did not (a kind: the classes of a word's first and last code points and of the
 * one after it, under `pre`'s split). Every kind the whole corpus makes, at about a third of its
 * length: llama.cpp's std::regex splitters (gpt-4o's, tekken's) take seconds over all of it.
 */
function wordKindCover(pre: string, corpus: readonly string[]): string[] {
  const splitter = resolvePreTokenizer(pre);
  const kinds = (text: string) => {
    const cps = Int32Array.from(Array.from(text, (c) => c.codePointAt(0)!));
    const out: string[] = [];
    let at = 0;
    for (const length of splitter.split(cps, cps.length)) {
      out.push([cps[at], cps[at + length - 1], cps[at + length]].map(pointClass).join(' '));
      at += length;
    }
    return out;
  };
  const chosen = corpus.slice(0, 300);
  const seen = new Set(chosen.flatMap(kinds));
  for (const text of corpus.slice(300).sort((a, b) => a.length - b.length)) {
    const made = kinds(text);
    if (made.every((kind) => seen.has(kind))) continue;
    chosen.push(text);
    for (const kind of made) seen.add(kind);
  }
  return chosen;
}

describe('every pre-tokenizer name, against llama.cpp (GPT-2 vocabulary relabelled)', () => {
  const corpus = tokenizerCorpus();
  const edge = edgeTexts();
  let dir: string;
  let llama: Llama;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gufo-pre-'));
    llama = await llamaCpp();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** The GPT-2 vocabulary file with tokenizer.ggml.pre set to `pre`. */
  async function relabelled(pre: string): Promise<string> {
    const { gguf, file } = openGguf(vocabPath('ggml-vocab-gpt-2'));
    try {
      const kvs = gguf.kvs.map((kv) =>
        kv.key === 'tokenizer.ggml.pre' ? { key: kv.key, type: GgufType.STRING, value: pre } : kv,
      );
      const path = join(dir, `${pre}.gguf`);
      await writeGguf(path, { version: 3, kvs, tensors: [] }, () => []);
      return path;
    } finally {
      file.close();
    }
  }

  // The first name of each pre-tokenizer type also gets 300 corpus strings; its aliases the edge texts.
  const typesSeen = new Set<string>();
  for (const pre of SUPPORTED_PRE_TOKENIZERS) {
    const type = resolvePreTokenizer(pre).type;
    const texts = FULL_CORPUS.has(pre)
      ? [...edge, ...wordKindCover(pre, corpus)]
      : typesSeen.has(type)
        ? edge
        : [...edge, ...corpus.slice(0, 300)];
    typesSeen.add(type);
    it(`${pre}: ${texts.length} strings`, async () => {
      const path = await relabelled(pre);
      const { gguf, file } = openGguf(path);
      const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
      try {
        const vocab = readVocab(gguf);
        const tok = createTokenizer(vocab);
        // The per-pre defaults the vocabulary reader applies, against llama.cpp: add_bos, and
        // clean_up_tokenization_spaces as detokenizing shows it.
        expect(vocab.addBos).toBe(addonOf(model).shouldPrependBosToken());
        const spaced = tok.tokenize("a , b . c ! d ? e 's f n't g 'm h 've i 're");
        expect(tok.detokenize(spaced)).toBe(llamaDetokenize(model, spaced, false));
        const bad: string[] = [];
        for (const text of texts) {
          const ours = tok.tokenize(text);
          const theirs = Array.from(model.tokenize(text, false) as readonly number[]);
          if (ours.length !== theirs.length || ours.some((id, i) => id !== theirs[i]))
            bad.push(firstDifference(text, ours, theirs));
        }
        expect(bad.slice(0, 5)).toEqual([]);
      } finally {
        await model.dispose();
        file.close();
      }
    });
  }

  it('names llama.cpp knows but Gufo does not tokenize are refused; unknown names too (as llama.cpp does)', async () => {
    for (const pre of KNOWN_UNSUPPORTED_PRE_TOKENIZERS) {
      const { gguf, file } = openGguf(await relabelled(pre));
      try {
        expect(() => createTokenizer(readVocab(gguf))).toThrow(`unsupported pre-tokenizer "${pre}"`);
      } finally {
        file.close();
      }
    }
    const path = await relabelled('no-such-pre');
    const { gguf, file } = openGguf(path);
    try {
      expect(() => createTokenizer(readVocab(gguf))).toThrow(VocabError);
    } finally {
      file.close();
    }
    await expect(llama.loadModel({ modelPath: path, vocabOnly: true })).rejects.toThrow();
  });
});
