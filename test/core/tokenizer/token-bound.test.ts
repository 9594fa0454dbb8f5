/**
 * The lower bound on a text's token count (core/tokenizer/token-bound.ts) never overstates: checked
 * against llama.cpp's own ids for its test vectors and against our tokenizer on a generated corpus
 * and on texts made of each vocabulary's longest tokens, special-token texts included.
 */
import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createTokenizer, readVocab } from '../../../src-main/core/tokenizer/index';
import { fewestTokens, longestTokenBytes } from '../../../src-main/core/tokenizer/token-bound';
import { openGguf } from '../../../src-main/node/gguf-io';
import { STORIES_260K } from '../../support/paths';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { hasTokenizerVectors, loadTokenizerVectors, VOCAB_DIR, vocabPath } from '../../support/tokenizer-vectors';

function withTokenizer<T>(path: string, work: (tokenizer: ReturnType<typeof createTokenizer>) => T): T {
  const { gguf, file } = openGguf(path);
  try {
    return work(createTokenizer(readVocab(gguf)));
  } finally {
    file.close();
  }
}

const names = readdirSync(VOCAB_DIR)
  .filter((f) => f.endsWith('.gguf'))
  .map((f) => f.slice(0, -'.gguf'.length));
const corpus = tokenizerCorpus(400);

describe('the fewest tokens a text can become', () => {
  it.each(names)('%s: never more than the tokens llama.cpp and Gufo give', (name) => {
    withTokenizer(vocabPath(name), (tokenizer) => {
      const longest = longestTokenBytes(tokenizer);
      if (longest === null) {
        // WordPiece drops whitespace, BPE without a token for some byte drops that byte: no bound.
        expect(
          tokenizer.vocab.model === 'bert' ||
            ['ggml-vocab-falcon', 'ggml-vocab-refact', 'ggml-vocab-starcoder'].includes(name),
        ).toBe(true);
        expect(fewestTokens(tokenizer, ' '.repeat(1000))).toBe(0);
        return;
      }
      expect(longest).toBeGreaterThanOrEqual(4);
      if (hasTokenizerVectors(name)) {
        for (const { text, ids } of loadTokenizerVectors(name))
          expect(fewestTokens(tokenizer, text)).toBeLessThanOrEqual(ids.length);
      }
      // The longest tokens back to back, special ones among them, and plain text: each case as few tokens as it can be.
      const byLength = [...Array(tokenizer.vocab.tokens.length).keys()].sort(
        (a, b) =>
          tokenizer.tokenToPiece(b, { renderSpecial: true }).length -
          tokenizer.tokenToPiece(a, { renderSpecial: true }).length,
      );
      const dense = byLength
        .slice(0, 50)
        .map((id) => new TextDecoder().decode(tokenizer.tokenToPiece(id, { renderSpecial: true })));
      for (const text of [...corpus, dense.join(''), dense.join(' '), '\ud800 lone surrogate']) {
        expect(fewestTokens(tokenizer, text)).toBeLessThanOrEqual(
          tokenizer.tokenize(text, { parseSpecial: true }).length,
        );
      }
    });
  });

  it('is not claimed where bytes vanish (falcon has no token for \\x03)', () => {
    withTokenizer(vocabPath('ggml-vocab-falcon'), (tokenizer) => {
      expect(tokenizer.tokenize('\x03'.repeat(100))).toEqual([]);
      expect(longestTokenBytes(tokenizer)).toBeNull();
    });
  });

  it('is the UTF-8 length over the longest piece, rounded up (stories260K: 7 bytes)', () => {
    withTokenizer(STORIES_260K, (tokenizer) => {
      expect(longestTokenBytes(tokenizer)).toBe(7);
      expect(fewestTokens(tokenizer, 'a'.repeat(71))).toBe(11);
      expect(fewestTokens(tokenizer, 'é'.repeat(7))).toBe(2);
      expect(fewestTokens(tokenizer, '😀'.repeat(7))).toBe(4);
    });
  });
});
