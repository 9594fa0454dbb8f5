import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../support/random';
import { tokenizerCorpus } from '../../support/tokenizer-corpus';
import { llamaDetokenize, openTokenizerPair, type TokenizerPair } from '../../support/tokenizer-parity';
import { vocabPath } from '../../support/tokenizer-vectors';

const corpus = tokenizerCorpus();

/** Feeds ids one at a time; returns the chunks (flush last). */
function stream(pair: TokenizerPair, ids: readonly number[], renderSpecial: boolean): string[] {
  const d = pair.ours.streamDecoder({ renderSpecial });
  const chunks = ids.map((id) => d.push(id));
  chunks.push(d.flush());
  return chunks;
}

describe('streaming detokenization (llama-spm)', () => {
  let pair: TokenizerPair;
  beforeAll(async () => {
    pair = await openTokenizerPair(vocabPath('ggml-vocab-llama-spm'));
  });
  afterAll(async () => {
    await pair?.close();
  });

  it('holds an emoji split across byte tokens until its last byte', () => {
    const ids = pair.ours.tokenize('Hi 👨‍👩‍👧 😀!');
    // The emoji have no pieces in the Llama 2 vocabulary: they are <0xNN> byte tokens.
    expect(ids.filter((id) => pair.vocab.types[id] === 6).length).toBeGreaterThan(8);
    const chunks = stream(pair, ids, false);
    expect(chunks.join('')).toBe('Hi 👨‍👩‍👧 😀!');
    for (const c of chunks) expect(c).not.toContain('\ufffd');
    // Nothing comes out for the first three bytes of 😀 (F0 9F 98 80).
    const smile = ids.indexOf(pair.ours.tokenize('😀').at(-4)!, ids.length - 6);
    expect(chunks.slice(smile, smile + 3)).toEqual(['', '', '']);
    expect(chunks[smile + 3]).toBe('😀');
  });

  it('an incomplete character left at the end becomes U+FFFD, as in llama.cpp', () => {
    const bytes = pair.ours.tokenize('😀').slice(-4);
    expect(pair.ours.detokenize(bytes.slice(0, 2))).toBe(llamaDetokenize(pair.model, bytes.slice(0, 2), false));
    expect(stream(pair, bytes.slice(0, 2), false).join('')).toBe(pair.ours.detokenize(bytes.slice(0, 2)));
  });

  it('strips the leading space like detokenize unless told it continues earlier text', () => {
    const ids = pair.ours.tokenize('Hello world');
    expect(pair.ours.detokenize(ids)).toBe('Hello world');
    const d = pair.ours.streamDecoder({ stripLeadingSpace: false });
    expect(ids.map((id) => d.push(id)).join('') + d.flush()).toBe(' Hello world');
  });

  it('renders or hides special tokens on request; removeSpecial drops the BOS llama.cpp would add', () => {
    const ids = pair.ours.tokenize('Hi', { addSpecial: true });
    expect(ids[0]).toBe(1);
    expect(pair.ours.detokenize(ids)).toBe(llamaDetokenize(pair.model, ids, false));
    expect(pair.ours.detokenize(ids, { renderSpecial: true })).toBe('<s> Hi');
    expect(pair.ours.detokenize(ids, { renderSpecial: true })).toBe(llamaDetokenize(pair.model, ids, true));
    expect(pair.ours.detokenize(ids, { removeSpecial: true, renderSpecial: true })).toBe(' Hi');
    expect(pair.ours.tokenToPiece(1)).toEqual(new Uint8Array(0));
    expect(new TextDecoder().decode(pair.ours.tokenToPiece(1, { renderSpecial: true }))).toBe('<s>');
    expect(() => pair.ours.detokenize([32000])).toThrow(RangeError);
  });
});

// Detokenization of arbitrary id sequences and streaming, per vocabulary; gpt-2 and bert-bge
// clean up spaces (clean_up_tokenization_spaces), which the stream must reproduce exactly.
const VOCABS = [
  'ggml-vocab-llama-spm',
  'ggml-vocab-phi-3',
  'ggml-vocab-baichuan',
  'ggml-vocab-bert-bge',
  'ggml-vocab-gpt-2',
  'ggml-vocab-deepseek-coder',
];

describe.each(VOCABS)('detokenization %s', (name) => {
  let pair: TokenizerPair;
  beforeAll(async () => {
    pair = await openTokenizerPair(vocabPath(name));
  });
  afterAll(async () => {
    await pair?.close();
  });

  it("gives llama.cpp's text for every single token and for random id sequences", () => {
    const n = pair.vocab.tokens.length;
    const bad: string[] = [];
    const check = (ids: number[]) => {
      for (const renderSpecial of [false, true]) {
        const ours = pair.ours.detokenize(ids, { renderSpecial });
        const theirs = llamaDetokenize(pair.model, ids, renderSpecial);
        if (ours !== theirs)
          bad.push(`[${ids.join(' ')}] ${renderSpecial}: ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`);
        const streamed = stream(pair, ids, renderSpecial).join('');
        if (streamed !== ours)
          bad.push(
            `[${ids.join(' ')}] ${renderSpecial}: streamed ${JSON.stringify(streamed)} vs ${JSON.stringify(ours)}`,
          );
      }
    };
    for (let id = 0; id < n; id += n > 40_000 ? 3 : 1) check([id]);
    const rng = mulberry32(42);
    const special = [...pair.vocab.specialTokens];
    for (let k = 0; k < 1500; k++) {
      const len = 1 + rng.int(12);
      check(
        Array.from({ length: len }, () =>
          rng.next() < 0.15 && special.length > 0 ? special[rng.int(special.length)]! : rng.int(n),
        ),
      );
    }
    expect(bad.slice(0, 10)).toEqual([]);
  });

  it('cleans spaces around punctuation and contractions exactly as llama.cpp (batch and stream)', () => {
    // Single-character tokens from the characters the clean-up rules look at.
    const alphabet = [' ', "'", 's', 'm', 't', 'd', 'r', 'v', 'e', 'l', '?', '!', '.', ',', 'a', " '", ' .', "'s"];
    const ids = alphabet.flatMap((c) => {
      const t = pair.ours.tokenize(c);
      return t.length === 1 ? t : [];
    });
    expect(ids.length).toBeGreaterThan(8);
    const rng = mulberry32(7);
    const bad: string[] = [];
    for (let k = 0; k < 3000; k++) {
      const seq = Array.from({ length: 1 + rng.int(10) }, () => ids[rng.int(ids.length)]!);
      const ours = pair.ours.detokenize(seq);
      const theirs = llamaDetokenize(pair.model, seq, false);
      const streamed = stream(pair, seq, false).join('');
      if (ours !== theirs || streamed !== ours)
        bad.push(
          `[${seq.join(' ')}]: ${JSON.stringify(ours)} / ${JSON.stringify(streamed)} vs ${JSON.stringify(theirs)}`,
        );
    }
    expect(bad.slice(0, 10)).toEqual([]);
  });

  it('streams the corpus: chunks join to detokenize and never hold a broken character', () => {
    const bad: string[] = [];
    for (const text of corpus) {
      const ids = pair.ours.tokenize(text, { parseSpecial: true });
      for (const renderSpecial of [false, true]) {
        const whole = pair.ours.detokenize(ids, { renderSpecial });
        const chunks = stream(pair, ids, renderSpecial);
        if (chunks.join('') !== whole) bad.push(JSON.stringify(text));
        if (!whole.includes('\ufffd') && chunks.some((c) => c.includes('\ufffd')))
          bad.push(`broken: ${JSON.stringify(text)}`);
      }
    }
    expect(bad.slice(0, 10)).toEqual([]);
  });
});
