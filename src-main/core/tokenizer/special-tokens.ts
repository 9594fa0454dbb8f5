import type { Vocab } from './vocab';
import { isValidUtf8 } from './utf8';

// TokenAttr bits (duplicated here to keep this module free of a runtime import of vocab.ts).
const UNKNOWN = 1 << 0;
const CONTROL = 1 << 3;
const LSTRIP = 1 << 7;
const RSTRIP = 1 << 8;

/** A piece of the input: raw text [start, end) of the input string, or a special token. */
export type Fragment =
  { readonly token: number } | { readonly token?: undefined; readonly start: number; readonly end: number };

interface Entry {
  readonly id: number;
  readonly text: string;
  /** Matched only when parseSpecial is asked (CONTROL or UNKNOWN). */
  readonly onlyWhenParsing: boolean;
  readonly lstrip: boolean;
  readonly rstrip: boolean;
  /** Hashes of the text's adjacent character pairs, for the quick "can it occur at all" check. */
  readonly pairs: Uint16Array;
}

/** C's isspace in the "C" locale: space, \t, \n, \v, \f, \r. */
const isCSpace = (c: number) => c === 0x20 || (c >= 0x09 && c <= 0x0d);

const pairHash = (a: number, b: number) => (Math.imul(a, 0x9e3779b1) ^ b) & 0xffff;

/** Texts longer than this get the pair filter before the special tokens are searched. */
const FILTER_MIN_LENGTH = 64;

/**
 * llama.cpp's tokenizer_st_partition: splits the input into raw-text fragments and special tokens.
 * Special tokens are taken one at a time in the vocabulary's special-token order (longest text
 * first), each splitting every raw fragment left so far at all of its occurrences, left to right.
 * CONTROL and UNKNOWN tokens take part only with parseSpecial, USER_DEFINED ones always. A token with
 * LSTRIP/RSTRIP also eats the C-locale whitespace left/right of it inside the fragment it splits.
 */
export class SpecialTokenMatcher {
  private readonly entries: readonly Entry[];

  constructor(vocab: Pick<Vocab, 'specialTokens' | 'attrs' | 'tokens'>) {
    const entries: Entry[] = [];
    for (const id of vocab.specialTokens) {
      const bytes = vocab.tokens.bytesAt(id);
      // Input comes from a JS string and is valid UTF-8: a token that is not can never match it.
      // An empty token is "[EMPTY_<id>]" to llama.cpp.
      if (!isValidUtf8(bytes)) continue;
      const text = bytes.length === 0 ? `[EMPTY_${id}]` : vocab.tokens.at(id);
      const attr = vocab.attrs[id]!;
      const pairs = new Uint16Array(Math.max(0, text.length - 1));
      for (let k = 0; k + 1 < text.length; k++) pairs[k] = pairHash(text.charCodeAt(k), text.charCodeAt(k + 1));
      entries.push({
        id,
        text,
        onlyWhenParsing: (attr & (CONTROL | UNKNOWN)) !== 0,
        lstrip: (attr & LSTRIP) !== 0,
        rstrip: (attr & RSTRIP) !== 0,
        pairs,
      });
    }
    this.entries = entries;
  }

  /** Splits `text` (well-formed) into fragments; an empty text has none. */
  partition(text: string, parseSpecial: boolean): Fragment[] {
    let fragments: Fragment[] = text.length > 0 ? [{ start: 0, end: text.length }] : [];
    if (fragments.length === 0) return fragments;
    let seen: Uint8Array | undefined;
    if (text.length >= FILTER_MIN_LENGTH) {
      seen = new Uint8Array(0x10000);
      for (let k = 0; k + 1 < text.length; k++) seen[pairHash(text.charCodeAt(k), text.charCodeAt(k + 1))] = 1;
    }
    for (const e of this.entries) {
      if (!parseSpecial && e.onlyWhenParsing) continue;
      if (e.text.length > text.length) continue;
      if (seen) {
        let possible = true;
        for (let k = 0; k < e.pairs.length; k++) {
          if (!seen[e.pairs[k]!]) {
            possible = false;
            break;
          }
        }
        if (!possible) continue;
      }
      const next = this.split(text, fragments, e);
      if (next) fragments = next;
    }
    return fragments;
  }

  /** The fragments with every occurrence of e's text split out, or undefined when it occurs nowhere. */
  private split(text: string, fragments: Fragment[], e: Entry): Fragment[] | undefined {
    const t = e.text;
    const len = t.length;
    const NONE = -1;
    const UNKNOWN_POS = -2;
    // The first occurrence at or after the current position: each stretch of text is searched once.
    let found = text.indexOf(t);
    if (found < 0) return undefined;
    let out: Fragment[] | undefined;
    for (let f = 0; f < fragments.length; f++) {
      const frag = fragments[f]!;
      if (frag.token !== undefined || found === NONE) {
        out?.push(frag);
        continue;
      }
      let base = frag.start;
      const end = frag.end;
      if (found === UNKNOWN_POS || found < base) found = text.indexOf(t, base);
      // No occurrence starting in this fragment ends inside it (a later one would end later still).
      if (found < 0 || found + len > end) {
        out?.push(frag);
        continue;
      }
      out ??= fragments.slice(0, f);
      let m = found;
      for (;;) {
        if (m > base) {
          let leftEnd = m;
          if (e.lstrip) while (leftEnd > base && isCSpace(text.charCodeAt(leftEnd - 1))) leftEnd--;
          if (leftEnd > base) out.push({ start: base, end: leftEnd });
        }
        out.push({ token: e.id });
        let right = m + len;
        if (right >= end) {
          found = UNKNOWN_POS;
          break;
        }
        if (e.rstrip) while (right < end && isCSpace(text.charCodeAt(right))) right++;
        base = right;
        if (base >= end) {
          found = UNKNOWN_POS;
          break;
        }
        m = text.indexOf(t, base);
        if (m < 0 || m + len > end) {
          out.push({ start: base, end });
          found = m;
          break;
        }
      }
    }
    return out;
  }
}
