import type { LlamaModel } from 'node-llama-cpp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenizer, type Tokenizer } from '../../src-main/core/tokenizer/index';
import { readVocab, type Vocab } from '../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../src-main/node/gguf-io';
import { llamaCpp } from './llama';
import { loadTokenizerVectors } from './tokenizer-vectors';

/** Our tokenizer and llama.cpp's (node-llama-cpp, vocabulary only) for one GGUF file. */
export interface TokenizerPair {
  readonly path: string;
  readonly vocab: Vocab;
  readonly ours: Tokenizer;
  readonly model: LlamaModel;
  close(): Promise<void>;
}

/** The addon object behind a LlamaModel: raw llama.cpp calls node-llama-cpp does not expose publicly. */
interface AddonModel {
  getTokenAttributes(id: number): number;
  isEogToken(id: number): boolean;
  shouldPrependBosToken(): boolean;
  shouldAppendEosToken(): boolean;
}

export function addonOf(model: LlamaModel): AddonModel {
  return (model as unknown as { _model: AddonModel })._model;
}

export async function openTokenizerPair(path: string): Promise<TokenizerPair> {
  const { gguf, file } = openGguf(path);
  const vocab = readVocab(gguf);
  const ours = createTokenizer(vocab);
  const model = await (await llamaCpp()).loadModel({ modelPath: path, vocabOnly: true });
  return {
    path,
    vocab,
    ours,
    model,
    async close() {
      await model.dispose();
      file.close();
    },
  };
}

/** llama.cpp's ids for `text` (llama_tokenize with add_special = false). */
export function llamaTokenize(model: LlamaModel, text: string, parseSpecial: boolean): number[] {
  return Array.from(model.tokenize(text, parseSpecial) as readonly number[]);
}

/** llama.cpp's text for `ids` (llama_detokenize with remove_special = false). */
export function llamaDetokenize(model: LlamaModel, ids: readonly number[], renderSpecial: boolean): string {
  return model.detokenize(ids as never, renderSpecial);
}

/** A compact description of where two id lists first differ, for failure messages. */
export function firstDifference(text: string, ours: readonly number[], theirs: readonly number[]): string {
  let i = 0;
  while (i < ours.length && i < theirs.length && ours[i] === theirs[i]) i++;
  return `${JSON.stringify(text)}: ours [${ours.join(' ')}] llama.cpp [${theirs.join(' ')}] (first difference at ${i})`;
}

/**
 * Every corpus string whose ids differ from llama.cpp's (parse special on or off), as messages;
 * empty when all agree.
 */
export function tokenizeMismatches(pair: TokenizerPair, corpus: readonly string[], parseSpecial: boolean): string[] {
  const bad: string[] = [];
  for (const text of corpus) {
    const ours = pair.ours.tokenize(text, { parseSpecial });
    const theirs = llamaTokenize(pair.model, text, parseSpecial);
    if (ours.length !== theirs.length || ours.some((id, i) => id !== theirs[i]))
      bad.push(firstDifference(text, ours, theirs));
  }
  return bad;
}

export interface ParityOptions {
  /** ../shared/tokenizer-tests vectors to reproduce (name without .gguf), or null when there are none. */
  vectors: string | null;
  corpus: readonly string[];
  /** Share of corpus strings expected to survive detokenize(tokenize(s)) (default 1/4; 0 for lowercasing WordPiece). */
  minRoundTrips?: number;
}

/**
 * The standard checks of a tokenizer against llama.cpp, as a vitest suite: the test vectors, the
 * corpus with parse special off and on, detokenization (special tokens hidden and shown) and the
 * round trip, add_special, and llama.cpp's token attributes and special ids.
 */
export function describeTokenizerParity(label: string, path: string, options: ParityOptions): void {
  describe(label, () => {
    let pair: TokenizerPair;
    beforeAll(async () => {
      pair = await openTokenizerPair(path);
    });
    afterAll(async () => {
      await pair?.close();
    });

    if (options.vectors !== null) {
      const name = options.vectors;
      it(`reproduces llama.cpp's test vectors ${name}`, () => {
        const cases = loadTokenizerVectors(name);
        expect(cases.length).toBeGreaterThan(40);
        const bad = cases.filter((c) => JSON.stringify(pair.ours.tokenize(c.text)) !== JSON.stringify(c.ids));
        expect(bad.map((c) => firstDifference(c.text, pair.ours.tokenize(c.text), c.ids))).toEqual([]);
      });
    }

    it('has llama.cpp token attributes, special ids and flags', () => {
      const addon = addonOf(pair.model);
      const v = pair.vocab;
      const attrBad: string[] = [];
      const eog: number[] = [];
      for (let id = 0; id < v.tokens.length; id++) {
        const theirs = addon.getTokenAttributes(id);
        if (theirs !== v.attrs[id])
          attrBad.push(`${id} ${JSON.stringify(v.tokens.at(id))}: ours ${v.attrs[id]} llama.cpp ${theirs}`);
        if (addon.isEogToken(id)) eog.push(id);
      }
      expect(attrBad.slice(0, 20)).toEqual([]);
      expect(v.eog).toEqual(eog);
      const t = pair.model.tokens;
      expect({ bos: v.bos, eos: v.eos, eot: v.eot, sep: v.sep }).toEqual({
        bos: t.bos,
        eos: t.eos,
        eot: t.eot,
        sep: t.sep,
      });
      expect(v.addBos).toBe(addon.shouldPrependBosToken());
      expect(v.addEos).toBe(addon.shouldAppendEosToken());
    });

    for (const parseSpecial of [false, true]) {
      it(`gives llama.cpp's ids for ${options.corpus.length} corpus strings, parse special ${parseSpecial ? 'on' : 'off'}`, () => {
        expect(tokenizeMismatches(pair, options.corpus, parseSpecial).slice(0, 10)).toEqual([]);
      });
    }

    it("detokenizes as llama.cpp does (special tokens hidden and shown); the round trip holds wherever llama.cpp's does", () => {
      const bad: string[] = [];
      let roundTrips = 0;
      for (const text of options.corpus) {
        for (const parseSpecial of [false, true]) {
          const ids = pair.ours.tokenize(text, { parseSpecial });
          for (const renderSpecial of [false, true]) {
            const ours = pair.ours.detokenize(ids, { renderSpecial });
            const theirs = llamaDetokenize(pair.model, ids, renderSpecial);
            if (ours !== theirs)
              bad.push(
                `${JSON.stringify(text)} ${parseSpecial}/${renderSpecial}: ${JSON.stringify(ours)} vs ${JSON.stringify(theirs)}`,
              );
            if (!parseSpecial && !renderSpecial && theirs === text) roundTrips++;
          }
        }
      }
      expect(bad.slice(0, 10)).toEqual([]);
      // The round trip fails only where llama.cpp's does too (covered above); most strings survive it.
      expect(roundTrips).toBeGreaterThanOrEqual(options.corpus.length * (options.minRoundTrips ?? 0.25));
    });

    it("adds BOS/EOS with addSpecial as llama.cpp's add_special does", () => {
      const addon = addonOf(pair.model);
      const v = pair.vocab;
      for (const text of options.corpus.slice(0, 200)) {
        const plain = llamaTokenize(pair.model, text, false);
        const expected =
          v.model === 'bert'
            ? // llama.cpp's WordPiece add_special: [CLS] ... [SEP] regardless of the flags.
              [v.bos!, ...plain, v.sep!]
            : [
                ...(addon.shouldPrependBosToken() ? [pair.model.tokens.bos!] : []),
                ...plain,
                ...(addon.shouldAppendEosToken() ? [pair.model.tokens.eos!] : []),
              ];
        expect(pair.ours.tokenize(text, { addSpecial: true })).toEqual(expected);
        expect(pair.ours.tokenize(text, { addBos: true })).toEqual(expected);
        expect(pair.ours.tokenize(text)).toEqual(plain);
      }
    });
  });
}
