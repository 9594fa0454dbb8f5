import { CATEGORY_RANGES, WHITESPACE_CODEPOINTS } from './unicode-flags-data';

/**
 * Code point classes as llama.cpp's unicode.cpp sees them (its own table, not the JS engine's: the
 * two differ on code points assigned by newer Unicode versions, which llama.cpp counts as undefined).
 * One category bit per code point, plus WHITESPACE for llama.cpp's `\s` set.
 */
export const UNDEFINED = 0x0001;
export const NUMBER = 0x0002; // \p{N}
export const LETTER = 0x0004; // \p{L}
export const SEPARATOR = 0x0008; // \p{Z}
export const ACCENT_MARK = 0x0010; // \p{M}
export const PUNCTUATION = 0x0020; // \p{P}
export const SYMBOL = 0x0040; // \p{S}
export const CONTROL = 0x0080; // \p{C}
export const CATEGORY_MASK = 0x00ff;
export const WHITESPACE = 0x0100;

export const MAX_CODEPOINT = 0x10ffff;

let table: Uint16Array | undefined;

/** Flags of every code point 0..0x10FFFF (built on first use, ~2 MB). */
export function codepointFlags(): Uint16Array {
  if (table) return table;
  const t = new Uint16Array(MAX_CODEPOINT + 1);
  const ranges = CATEGORY_RANGES;
  let start = -1;
  let flags = 0;
  let digits = 0;
  let delta = 0;
  for (let i = 0; i < ranges.length; i++) {
    const c = ranges.charCodeAt(i);
    if (c >= 65 && c <= 72) {
      // 'A'..'H': the category bit of the range starting at start + delta.
      const next = start < 0 ? delta : start + delta;
      if (start >= 0) t.fill(flags, start, next);
      start = next;
      flags = 1 << (c - 65);
      delta = 0;
      digits = 0;
    } else {
      delta = delta * 36 + (c <= 57 ? c - 48 : c - 87);
      digits++;
    }
  }
  if (digits !== 0) throw new Error('unicode-flags-data: trailing range start');
  t.fill(flags, start, MAX_CODEPOINT + 1);
  for (const cp of WHITESPACE_CODEPOINTS) t[cp]! |= WHITESPACE;
  table = t;
  return t;
}

/** Flags of one code point; 0 for anything outside Unicode. */
export function flagsOf(cp: number): number {
  return cp >= 0 && cp <= MAX_CODEPOINT ? codepointFlags()[cp]! : 0;
}
