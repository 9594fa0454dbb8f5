/**
 * GPT-2's byte-level alphabet: every byte 0..255 stands for one printable code point, so a BPE
 * vocabulary can hold arbitrary bytes as text. Printable Latin-1 bytes ('!'..'~', '¡'..'¬',
 * '®'..'ÿ') stand for themselves; the other 68 bytes, in order, for U+0100, U+0101, ...
 * (space 0x20 is 'Ġ' U+0120, newline 0x0A is 'Ċ' U+010A).
 */

function buildByteToCodepoint(): Uint16Array {
  const map = new Uint16Array(256);
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let next = 0x100;
  for (let b = 0; b < 256; b++) map[b] = printable(b) ? b : next++;
  return map;
}

/** The code point standing for each byte. */
export const BYTE_TO_CODEPOINT: Uint16Array = buildByteToCodepoint();

/** The character standing for each byte. */
export const BYTE_TO_CHAR: readonly string[] = Array.from(BYTE_TO_CODEPOINT, (cp) => String.fromCharCode(cp));

/** Code point → byte, -1 for code points outside the alphabet (indexable up to U+0143). */
export const CODEPOINT_TO_BYTE: Int16Array = (() => {
  const map = new Int16Array(0x144).fill(-1);
  BYTE_TO_CODEPOINT.forEach((cp, b) => (map[cp] = b));
  return map;
})();

/** The byte-level text of some bytes (each byte becomes its character). */
export function byteLevelEncode(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += BYTE_TO_CHAR[bytes[i]!]!;
  return s;
}

const utf8 = new TextEncoder();

/**
 * The bytes a byte-level token text stands for, as llama.cpp's llama_decode_text computes them:
 * a code point outside the alphabet becomes the text "[UNK_BYTE_0x<its UTF-8 in hex>" + the whole
 * token text + "]".
 */
export function byteLevelDecode(text: string): Uint8Array {
  const out: number[] = [];
  for (const ch of text) {
    const cp = ch.codePointAt(0)!;
    const b = cp < CODEPOINT_TO_BYTE.length ? CODEPOINT_TO_BYTE[cp]! : -1;
    if (b >= 0) {
      out.push(b);
    } else {
      const encoded = utf8.encode(ch.length === 1 && cp >= 0xd800 && cp <= 0xdfff ? '\ufffd' : ch);
      const hex = Array.from(encoded, (x) => x.toString(16).padStart(2, '0')).join('');
      for (const x of utf8.encode(`[UNK_BYTE_0x${hex}${text}]`)) out.push(x);
    }
  }
  return Uint8Array.from(out);
}
