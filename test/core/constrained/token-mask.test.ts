/**
 * The token mask from the trie walk equals a token-by-token check of the whole vocabulary, on a
 * SentencePiece vocabulary with byte tokens (stories260K) and a byte-level BPE one (GPT-2's 50k),
 * at every step of documents written with each tokenizer.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { isComplete, matchBytes, start, type MatchState } from '../../../src-main/core/constrained/json-matcher';
import {
  ConstrainedTokens,
  constraintGrammar,
  type JsonConstraint,
} from '../../../src-main/core/constrained/token-constraint';
import { TokenTrie } from '../../../src-main/core/constrained/token-trie';
import { createTokenizer, readVocab, type Tokenizer } from '../../../src-main/core/tokenizer/index';
import { openGguf } from '../../../src-main/node/gguf-io';
import { STORIES_260K } from '../../support/paths';
import { vocabPath } from '../../support/tokenizer-vectors';

/** The allowed ids by checking every token's bytes from `state` on its own. */
function bruteForce(tokenizer: Tokenizer, state: MatchState, endIds: readonly number[]): number[] {
  const allowed: number[] = [];
  const complete = isComplete(state);
  for (let id = 0; id < tokenizer.vocab.tokens.length; id++) {
    if (endIds.includes(id)) {
      if (complete) allowed.push(id);
      continue;
    }
    const bytes = tokenizer.tokenToPiece(id);
    if (bytes.length > 0 && matchBytes(state, bytes)) allowed.push(id);
  }
  return allowed;
}

function ids(mask: Uint32Array | null): number[] {
  const out: number[] = [];
  if (!mask) return out;
  for (let w = 0; w < mask.length; w++) for (let b = 0; b < 32; b++) if ((mask[w]! >>> b) & 1) out.push(w * 32 + b);
  return out;
}

const SCHEMA = {
  type: 'object',
  properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer' }, note: { type: 'string' } },
  required: ['answer', 'n'],
  additionalProperties: false,
};

/** The value keywords: a range, a pattern, a format, lengths. */
const BOUNDED = {
  type: 'object',
  properties: {
    age: { type: 'integer', minimum: 18, maximum: 120 },
    score: { type: 'number', minimum: -1, exclusiveMaximum: 1 },
    code: { type: 'string', pattern: '^[A-Z]{2}-\\d{2,3}$' },
    day: { type: 'string', format: 'date' },
    nick: { type: 'string', minLength: 2, maxLength: 5 },
  },
  required: ['age', 'code'],
  additionalProperties: false,
};

const CASES: [JsonConstraint, string][] = [
  [
    { kind: 'json-schema', schema: BOUNDED },
    '{"age": 36, "score": -0.25, "code": "AB-123", "day": "2024-02-29", "nick": "Li\\u00e9😀"}',
  ],
  [{ kind: 'json' }, '{"name": "Lily", "tags": ["a\\n", 1.5e3, true, null], "x": {"é": "😀"}}'],
  [{ kind: 'json-schema', schema: SCHEMA }, '{ "n": -12, "note": "It was a big, red ball.", "answer": "no" }'],
];

for (const [label, path] of [
  ['stories260K (SentencePiece)', STORIES_260K],
  ['GPT-2 (byte-level BPE)', vocabPath('ggml-vocab-gpt-2')],
] as const) {
  describe(`token mask over ${label}`, () => {
    let tokenizer: Tokenizer;
    let trie: TokenTrie;
    beforeAll(() => {
      const { gguf, file } = openGguf(path);
      try {
        tokenizer = createTokenizer(readVocab(gguf));
      } finally {
        file.close();
      }
      trie = TokenTrie.fromTokenizer(tokenizer);
    });

    it('gives back each token’s bytes', () => {
      for (const id of [0, 1, 2, 100, tokenizer.vocab.tokens.length - 1])
        expect(trie.bytes(id)).toEqual(tokenizer.tokenToPiece(id));
    });

    for (const [constraint, text] of CASES) {
      it(`equals the token-by-token check at every step of ${constraint.kind} output`, () => {
        const endIds = tokenizer.vocab.eog;
        expect(endIds.length).toBeGreaterThan(0);
        const tokens = new ConstrainedTokens(constraintGrammar(constraint), trie, endIds);
        let state = start(constraintGrammar(constraint));
        const written = tokenizer.tokenize(text);
        for (const [i, id] of [...written, endIds[0]!].entries()) {
          const mask = tokens.mask();
          const expected = bruteForce(tokenizer, state, endIds);
          expect(ids(mask), `step ${i}`).toEqual(expected);
          expect(expected, `step ${i}`).toContain(id);
          if (i === written.length) break;
          tokens.accept(id);
          state = matchBytes(state, tokenizer.tokenToPiece(id))!;
        }
        expect(tokens.complete).toBe(true);
        // Once the document is whole, only the end of generation may follow.
        expect(ids(tokens.mask())).toEqual([...endIds]);
      });
    }

    it('refuses a token outside the mask, and end ids before the document is whole', () => {
      const tokens = new ConstrainedTokens(constraintGrammar({ kind: 'json' }), trie, tokenizer.vocab.eog);
      const letter = tokenizer.tokenize('x').at(-1)!;
      expect(() => tokens.accept(letter)).toThrow(/does not continue/);
      expect(() => tokens.accept(tokenizer.vocab.eog[0]!)).toThrow(/does not continue/);
      expect(ids(tokens.mask())).not.toContain(tokenizer.vocab.eog[0]!);
    });
  });
}
