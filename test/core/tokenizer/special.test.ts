import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StringArray } from '../../../src-main/core/gguf/values';
import { createTokenizer } from '../../../src-main/core/tokenizer/index';
import { libstdcxxSort } from '../../../src-main/core/tokenizer/libstdcxx-sort';
import { SpecialTokenMatcher, type Fragment } from '../../../src-main/core/tokenizer/special-tokens';
import { readVocab, TokenAttr, type Vocab } from '../../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../../src-main/node/gguf-io';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../../support/paths';
import { addonOf, llamaTokenize, openTokenizerPair, type TokenizerPair } from '../../support/tokenizer-parity';
import { VOCAB_DIR, vocabPath } from '../../support/tokenizer-vectors';

const A = TokenAttr;

/** A matcher over a made-up vocabulary: [text, attr] per token, special order computed as readVocab does. */
function matcher(tokens: [string, number][]): SpecialTokenMatcher {
  const strings = StringArray.fromStrings(tokens.map(([t]) => t));
  const attrs = Uint16Array.from(tokens.map(([, a]) => a));
  const special = tokens.map((_, i) => i).filter((i) => attrs[i]! & (A.CONTROL | A.USER_DEFINED | A.UNKNOWN));
  const len = (i: number) => strings.bytesAt(i).length;
  libstdcxxSort(special, (a, b) => len(a) > len(b));
  return new SpecialTokenMatcher({ tokens: strings, attrs, specialTokens: Int32Array.from(special) });
}

/** Fragments as readable items: token ids as numbers, text as strings. */
const show = (text: string, fragments: Fragment[]) =>
  fragments.map((f) => (f.token !== undefined ? f.token : text.slice(f.start, f.end)));

describe('special-token partition (tokenizer_st_partition)', () => {
  const m = matcher([
    ['a', A.NORMAL], // 0
    ['<s>', A.CONTROL], // 1
    ['<|im_end|>', A.CONTROL], // 2
    ['<user>', A.USER_DEFINED], // 3
    ['<user>x', A.USER_DEFINED], // 4: longer, matched first
    ['<unk>', A.UNKNOWN], // 5
    ['<L>', A.USER_DEFINED | A.LSTRIP], // 6
    ['<R>', A.USER_DEFINED | A.RSTRIP], // 7
  ]);

  it('matches control and unknown tokens only when parsing special tokens, user-defined ones always', () => {
    const text = 'hi<s> <|im_end|><user><unk>';
    expect(show(text, m.partition(text, false))).toEqual(['hi<s> <|im_end|>', 3, '<unk>']);
    expect(show(text, m.partition(text, true))).toEqual(['hi', 1, ' ', 2, 3, 5]);
  });

  it('takes longer tokens first and splits every occurrence', () => {
    const text = '<user>x<user>y<user>';
    expect(show(text, m.partition(text, false))).toEqual([4, 3, 'y', 3]);
    expect(show('', m.partition('', true))).toEqual([]);
  });

  it('LSTRIP eats C-locale whitespace before the token, RSTRIP after it (within the fragment)', () => {
    const text = 'x \t<L>\n y<R> \u00a0z<R>  ';
    expect(show(text, m.partition(text, false))).toEqual(['x', 6, '\n y', 7, '\u00a0z', 7]);
    expect(show('  <L>', m.partition('  <L>', false))).toEqual([6]);
  });

  it('never matches a token whose bytes are not valid UTF-8', () => {
    const strings = new StringArray(
      Uint8Array.of(1, 0, 0, 0, 0, 0, 0, 0, 0xff),
      8,
      Uint32Array.of(8),
      Uint32Array.of(9),
    );
    const bad = new SpecialTokenMatcher({
      tokens: strings,
      attrs: Uint16Array.of(A.USER_DEFINED),
      specialTokens: Int32Array.of(0),
    });
    expect(show('x\ufffdy', bad.partition('x\ufffdy', true))).toEqual(['x\ufffdy']);
  });

  it('handles long texts (pair prefilter) and repeated matches the same way', () => {
    const unit = 'abc <|im_end|> <user>x <s>';
    const text = unit.repeat(50);
    const expected = show(unit, m.partition(unit, true));
    expect(show(text, m.partition(text, true))).toEqual(Array.from({ length: 50 }, () => expected).flat());
    expect(expected).toEqual(['abc ', 2, ' ', 4, ' ', 1]);
  });
});

describe('libstdcxxSort', () => {
  // The same linear congruential keys sorted by g++ 12's std::sort (longest first, ties unstable).
  const keys = (n: number, seed: number, range: number) => {
    let s = seed >>> 0;
    return Array.from({ length: n }, () => {
      s = (Math.imul(s, 1103515245) + 12345) >>> 0;
      return (s >>> 16) % range;
    });
  };
  const sorted = (n: number, seed: number, range: number) => {
    const k = keys(n, seed, range);
    const ids = k.map((_, i) => i);
    libstdcxxSort(ids, (a, b) => k[a]! > k[b]!);
    return ids.join(' ');
  };

  it("leaves ties in std::sort's order", () => {
    expect(sorted(20, 1, 3)).toBe('19 18 17 16 6 7 8 14 0 11 13 10 15 5 12 9 4 3 2 1');
    expect(sorted(40, 9, 4)).toBe(
      '1 25 29 17 16 15 12 37 2 38 3 35 24 23 31 4 5 32 13 33 7 28 27 26 34 20 19 14 11 10 9 8 6 22 21 0 30 18 36 39',
    );
  });

  it('sorts', () => {
    const k = keys(5000, 3, 1000);
    const ids = k.map((_, i) => i);
    libstdcxxSort(ids, (a, b) => k[a]! < k[b]!);
    for (let i = 1; i < ids.length; i++) expect(k[ids[i - 1]!]! <= k[ids[i]!]!).toBe(true);
  });
});

describe('createTokenizer', () => {
  it('refuses tokenizer models it does not implement, never falling back', () => {
    const { gguf, file } = openGguf(vocabPath('ggml-vocab-llama-spm'));
    try {
      const v = readVocab(gguf);
      const t5: Vocab = { ...v, model: 't5' };
      expect(() => createTokenizer(t5)).toThrow(/unsupported tokenizer "t5"/);
    } finally {
      file.close();
    }
  });
});

// Every vocabulary file, the gpt2 ones included: attributes, special ids and flags as llama.cpp loads them.
const ALL_VOCABS = [
  ...readdirSync(VOCAB_DIR)
    .filter((f) => f.endsWith('.gguf'))
    .sort()
    .map((f) => join(VOCAB_DIR, f)),
  STORIES_260K,
  TINY_RANDOM_LLAMA,
];

describe.each(ALL_VOCABS.map((p) => [p.split('/').pop()!, p]))('vocabulary %s as llama.cpp loads it', (_name, path) => {
  let pair: TokenizerPair;
  beforeAll(async () => {
    pair = await openTokenizerPair(path);
  });
  afterAll(async () => {
    await pair?.close();
  });

  it('token attributes, EOG set, special ids, add_bos/add_eos', () => {
    const addon = addonOf(pair.model);
    const v = pair.vocab;
    const attrs = Uint16Array.from({ length: v.tokens.length }, (_, id) => addon.getTokenAttributes(id));
    const diffs = [...attrs.keys()].filter((id) => attrs[id] !== v.attrs[id]);
    expect(
      diffs.slice(0, 10).map((id) => `${id} ${JSON.stringify(v.tokens.at(id))} ${v.attrs[id]} vs ${attrs[id]}`),
    ).toEqual([]);
    expect(v.eog).toEqual([...attrs.keys()].filter((id) => addon.isEogToken(id)));
    const t = pair.model.tokens;
    expect([v.bos, v.eos, v.eot, v.sep, t.nl !== null]).toEqual([t.bos, t.eos, t.eot, t.sep, true]);
    expect([v.addBos, v.addEos]).toEqual([addon.shouldPrependBosToken(), addon.shouldAppendEosToken()]);
  });

  it('special-token look-alikes split as in llama.cpp', () => {
    const v = pair.vocab;
    // Texts made of this vocabulary's own special tokens, glued to words and whitespace.
    const specials = [...v.specialTokens].slice(0, 40).map((id) => v.tokens.at(id));
    const texts = specials.flatMap((s, i) => [
      s,
      `x${s}y`,
      ` ${s}  ${specials[(i + 1) % specials.length]}\n`,
      `${s}${s}`,
      `  ${s}\t z`,
    ]);
    for (const parseSpecial of [false, true]) {
      for (const text of texts) {
        expect(pair.ours.tokenize(text, { parseSpecial }), JSON.stringify(text)).toEqual(
          llamaTokenize(pair.model, text, parseSpecial),
        );
      }
    }
  });
});
