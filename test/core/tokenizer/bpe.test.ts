import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBpeEncoder } from '../../../src-main/core/tokenizer/bpe';
import { createTokenizer } from '../../../src-main/core/tokenizer/index';
import { readVocab } from '../../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../../src-main/node/gguf-io';
import { join } from 'node:path';
import { MODELS } from '../../support/paths';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import {
  describeTokenizerParity,
  firstDifference,
  llamaTokenize,
  openTokenizerPair,
  type TokenizerPair,
} from '../../support/tokenizer-parity';
import { hasTokenizerVectors, loadTokenizerVectors, vocabPath } from '../../support/tokenizer-vectors';

// Byte-level BPE vocabularies (tokenizer.ggml.model "gpt2") of ../shared against llama.cpp: its
// test vectors and, through node-llama-cpp, a generated corpus.

const corpus = tokenizerCorpus();

/** The gpt2-model vocabularies llama.cpp ships test files for, and the pre-tokenizer each names. */
const GPT2_VOCABS: readonly { name: string; pre: string | null }[] = [
  { name: 'ggml-vocab-deepseek-coder', pre: 'deepseek-coder' },
  { name: 'ggml-vocab-deepseek-llm', pre: 'deepseek-llm' },
  { name: 'ggml-vocab-falcon', pre: 'falcon' },
  { name: 'ggml-vocab-gpt-2', pre: 'gpt-2' },
  // No tokenizer.ggml.pre: llama.cpp's "default" pre-tokenizer; no test vectors exist for it.
  { name: 'ggml-vocab-gpt-neox', pre: null },
  { name: 'ggml-vocab-mpt', pre: 'mpt' },
  { name: 'ggml-vocab-refact', pre: 'refact' },
  { name: 'ggml-vocab-starcoder', pre: 'starcoder' },
];

const LEGACY_FALCON = join(MODELS, 'legacy', 'v2-ggml-vocab-falcon.gguf');

describe('byte-level BPE vocabularies in ../shared', () => {
  it('are all the gpt2-model vocabularies there, with the pre-tokenizers named here', () => {
    for (const { name, pre } of GPT2_VOCABS) {
      const { gguf, file } = openGguf(vocabPath(name));
      try {
        const v = readVocab(gguf);
        expect([name, v.model, v.pre]).toEqual([name, 'gpt2', pre]);
      } finally {
        file.close();
      }
    }
  });

  it('the encoder alone reproduces the test vectors on texts without special-token look-alikes', () => {
    // Below the tokenizer wrapper (which splits out special and user-defined tokens first): the
    // vectors of the vocabularies without user-defined tokens pass through createBpeEncoder as is.
    for (const name of ['ggml-vocab-gpt-2', 'ggml-vocab-falcon', 'ggml-vocab-refact', 'ggml-vocab-starcoder']) {
      const { gguf, file } = openGguf(vocabPath(name));
      try {
        const encode = createBpeEncoder(readVocab(gguf));
        const bad = loadTokenizerVectors(name).filter((c) => JSON.stringify(encode(c.text)) !== JSON.stringify(c.ids));
        expect(bad.map((c) => `${name} ${firstDifference(c.text, encode(c.text), c.ids)}`)).toEqual([]);
      } finally {
        file.close();
      }
    }
  });

  it('encodes an empty fragment to nothing; its word cache never changes a result', () => {
    const { gguf, file } = openGguf(vocabPath('ggml-vocab-gpt-2'));
    try {
      const vocab = readVocab(gguf);
      const warm = createBpeEncoder(vocab);
      expect(warm('')).toEqual([]);
      const texts = corpus.slice(0, 400);
      const once = texts.map((s) => warm(s));
      // Again in reverse order with a warm cache, and each text with a fresh encoder.
      expect(
        [...texts]
          .reverse()
          .map((s) => warm(s))
          .reverse(),
      ).toEqual(once);
      const fresh = createBpeEncoder(vocab);
      expect(texts.map((s) => fresh(s))).toEqual(once);
    } finally {
      file.close();
    }
  });
});

for (const { name } of GPT2_VOCABS) {
  describeTokenizerParity(name.replace('ggml-vocab-', ''), vocabPath(name), {
    vectors: hasTokenizerVectors(name) ? name : null,
    corpus,
  });
}

// An old (GGUF v2) Falcon vocabulary converted before tokenizer.ggml.pre existed: llama.cpp runs
// its "default" pre-tokenizer on it, not "falcon", so the falcon vectors hold except where the two
// split differently (digits after a space); there llama.cpp's own output is the reference.
describeTokenizerParity('falcon, legacy GGUF v2 without pre-tokenizer', LEGACY_FALCON, { vectors: null, corpus });

describe('falcon, legacy GGUF v2, with the falcon test vectors', () => {
  let pair: TokenizerPair;
  beforeAll(async () => {
    pair = await openTokenizerPair(LEGACY_FALCON);
  });
  afterAll(async () => {
    await pair?.close();
  });

  it('gives llama.cpp ids for every vector input, and the vector ids wherever default and falcon splitting agree', () => {
    expect(pair.vocab.pre).toBeNull();
    const cases = loadTokenizerVectors('ggml-vocab-falcon');
    const fromLlama: string[] = [];
    const fromVectors: string[] = [];
    for (const c of cases) {
      const ours = pair.ours.tokenize(c.text);
      const theirs = llamaTokenize(pair.model, c.text, false);
      if (JSON.stringify(ours) !== JSON.stringify(theirs)) fromLlama.push(firstDifference(c.text, ours, theirs));
      if (JSON.stringify(ours) !== JSON.stringify(c.ids)) fromVectors.push(c.text);
    }
    expect(fromLlama).toEqual([]);
    // "ied 4 ½ months": default splits " ½" into " " + "½" (its \p{N}+ pass), falcon does not.
    expect(fromVectors).toEqual(['ied 4 ½ months']);
  });

  it('the current falcon vocabulary with the same tokens gives the vector ids', () => {
    const { gguf, file } = openGguf(vocabPath('ggml-vocab-falcon'));
    try {
      const current = readVocab(gguf);
      expect(current.tokens.toArray()).toEqual(pair.vocab.tokens.toArray());
      const tok = createTokenizer(current);
      expect(tok.tokenize('ied 4 ½ months')).toEqual(
        loadTokenizerVectors('ggml-vocab-falcon').find((c) => c.text === 'ied 4 ½ months')!.ids,
      );
    } finally {
      file.close();
    }
  });
});
