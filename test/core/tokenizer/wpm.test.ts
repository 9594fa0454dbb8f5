import { describe, expect, it } from 'vitest';
import { createTokenizer } from '../../../src-main/core/tokenizer/index';
import { readVocab } from '../../../src-main/core/tokenizer/vocab';
import { nfdFirst, simpleLowercase } from '../../../src-main/core/tokenizer/wpm';
import { openGguf } from '../../../src-main/node/gguf-io';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { describeTokenizerParity } from '../../support/tokenizer-parity';
import { vocabPath } from '../../support/tokenizer-vectors';

// WordPiece (tokenizer.ggml.model "bert") against llama.cpp.
describe('WordPiece normalization', () => {
  it("lowercases with llama.cpp's simple (one code point) mapping", () => {
    expect(simpleLowercase(0x41)).toBe(0x61);
    expect(simpleLowercase(0x130)).toBe(0x69); // İ → i (JS's full mapping gives "i̇")
    expect(simpleLowercase(0x3a3)).toBe(0x3c3); // Σ → σ, never the final form
    expect(simpleLowercase(0x1c89)).toBe(0x1c89); // Unicode 16: unknown to llama.cpp's table
  });

  it('keeps only the first code point of a canonical decomposition', () => {
    expect(nfdFirst(0xe9)).toBe(0x65); // é → e
    expect(nfdFirst(0xd55c)).toBe(0x1112); // 한 → ᄒ
    expect(nfdFirst(0x41)).toBe(0x41);
  });

  it('splits punctuation, CJK and accents as llama.cpp does', () => {
    const { gguf, file } = openGguf(vocabPath('ggml-vocab-bert-bge'));
    try {
      const tok = createTokenizer(readVocab(gguf));
      const v = tok.vocab;
      expect(v.lowercase && v.stripAccents).toBe(true);
      expect(tok.tokenize('Café')).toEqual(tok.tokenize('cafe'));
      expect(tok.tokenize('hello,world')).toEqual(tok.tokenize('hello , world'));
      expect(tok.tokenize('[CLS] x', { parseSpecial: true })[0]).toBe(101);
      expect(tok.tokenize('x', { addSpecial: true })).toEqual([101, ...tok.tokenize('x'), 102]);
    } finally {
      file.close();
    }
  });
});

describeTokenizerParity('bert-bge', vocabPath('ggml-vocab-bert-bge'), {
  vectors: 'ggml-vocab-bert-bge',
  corpus: tokenizerCorpus(),
  minRoundTrips: 0,
});
