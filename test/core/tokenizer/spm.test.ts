import { describe, expect, it } from 'vitest';
import { createTokenizer } from '../../../src-main/core/tokenizer/index';
import { readVocab } from '../../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../../src-main/node/gguf-io';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../../support/paths';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { describeTokenizerParity } from '../../support/tokenizer-parity';
import { loadTokenizerVectors, vocabPath } from '../../support/tokenizer-vectors';

// SentencePiece vocabularies (tokenizer.ggml.model "llama") against llama.cpp.
const corpus = tokenizerCorpus();

describe('SentencePiece vocabularies', () => {
  it('llama-2-tiny-random holds the Llama 2 vocabulary of ggml-vocab-llama-spm, so its vectors apply', () => {
    const a = openGguf(TINY_RANDOM_LLAMA);
    const b = openGguf(vocabPath('ggml-vocab-llama-spm'));
    try {
      const va = readVocab(a.gguf);
      const vb = readVocab(b.gguf);
      expect(va.tokens.toArray()).toEqual(vb.tokens.toArray());
      expect(va.scores).toEqual(vb.scores);
      expect(va.types).toEqual(vb.types);
    } finally {
      a.file.close();
      b.file.close();
    }
  });

  it('stories260K has its own 512-token vocabulary (checked against llama.cpp only)', () => {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const v = readVocab(gguf);
      expect(v.model).toBe('llama');
      expect(v.tokens.length).toBe(512);
      const tok = createTokenizer(v);
      // Byte fallback: characters outside its 512 pieces become <0xNN> tokens.
      // (its byte tokens <0x00>..<0xFF> are ids 3..258).
      expect(tok.tokenize('😀').slice(-4)).toEqual([0xf0, 0x9f, 0x98, 0x80].map((b) => b + 3));
      expect(tok.detokenize(tok.tokenize('Once upon a time, Lily 😀'))).toBe('Once upon a time, Lily 😀');
    } finally {
      file.close();
    }
  });

  it('an empty text has no tokens; a space prefix goes before the first fragment and after each special token', () => {
    const { gguf, file } = openGguf(vocabPath('ggml-vocab-llama-spm'));
    try {
      const tok = createTokenizer(readVocab(gguf));
      expect(tok.tokenize('')).toEqual([]);
      expect(tok.tokenize('', { addSpecial: true })).toEqual([1]);
      expect(tok.tokenize('Hello world')).toEqual(
        loadTokenizerVectors('ggml-vocab-llama-spm').find((c) => c.text === 'Hello world')!.ids,
      );
      // "<s>" is a control token: text unless parse special is asked; after it, " Hello" again.
      expect(tok.tokenize('<s>Hello', { parseSpecial: true })).toEqual([1, ...tok.tokenize('Hello')]);
      expect(tok.tokenize('<s>Hello')).not.toContain(1);
    } finally {
      file.close();
    }
  });
});

describeTokenizerParity('llama-spm (Llama 2)', vocabPath('ggml-vocab-llama-spm'), {
  vectors: 'ggml-vocab-llama-spm',
  corpus,
});
describeTokenizerParity('phi-3', vocabPath('ggml-vocab-phi-3'), { vectors: 'ggml-vocab-phi-3', corpus });
// No baichuan vectors exist in ../shared/tokenizer-tests: llama.cpp itself is the reference.
describeTokenizerParity('baichuan', vocabPath('ggml-vocab-baichuan'), { vectors: null, corpus });
describeTokenizerParity('stories260K', STORIES_260K, { vectors: null, corpus });
describeTokenizerParity('llama-2-tiny-random', TINY_RANDOM_LLAMA, { vectors: 'ggml-vocab-llama-spm', corpus });
