/**
 * UTF-8 helpers for the tokenizers: llama.cpp works on bytes, JavaScript on UTF-16; these convert
 * between the two without per-call allocation where it matters.
 */

/** Length of the UTF-8 sequence that starts with `lead`, as llama.cpp's unicode_len_utf8 sees it (a stray continuation byte counts 1). */
export function utf8SequenceLength(lead: number): number {
  if (lead < 0xc0) return 1;
  if (lead < 0xe0) return 2;
  if (lead < 0xf0) return 3;
  return 4;
}

/** Writes code point `cp` as UTF-8 at out[at..] (room for 4 bytes assumed); returns the position after it. */
export function putUtf8(out: Uint8Array, at: number, cp: number): number {
  if (cp < 0x80) {
    out[at] = cp;
    return at + 1;
  }
  if (cp < 0x800) {
    out[at] = 0xc0 | (cp >> 6);
    out[at + 1] = 0x80 | (cp & 0x3f);
    return at + 2;
  }
  if (cp < 0x10000) {
    out[at] = 0xe0 | (cp >> 12);
    out[at + 1] = 0x80 | ((cp >> 6) & 0x3f);
    out[at + 2] = 0x80 | (cp & 0x3f);
    return at + 3;
  }
  out[at] = 0xf0 | (cp >> 18);
  out[at + 1] = 0x80 | ((cp >> 12) & 0x3f);
  out[at + 2] = 0x80 | ((cp >> 6) & 0x3f);
  out[at + 3] = 0x80 | (cp & 0x3f);
  return at + 4;
}

/** Replaces lone surrogates by U+FFFD, as V8 does when it hands a string to native code as UTF-8. */
export function wellFormed(text: string): string {
  // String.prototype.toWellFormed exists from Node 20 / ES2024; typed loosely for older lib settings.
  const s = text as string & { isWellFormed?: () => boolean; toWellFormed?: () => string };
  if (s.isWellFormed && s.toWellFormed) return s.isWellFormed() ? text : s.toWellFormed();
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/** A growable byte buffer. */
export class ByteWriter {
  bytes: Uint8Array;
  length = 0;

  constructor(capacity = 256) {
    this.bytes = new Uint8Array(capacity);
  }

  reset(): void {
    this.length = 0;
  }

  ensure(extra: number): void {
    const need = this.length + extra;
    if (need <= this.bytes.length) return;
    let cap = this.bytes.length * 2;
    while (cap < need) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.bytes.subarray(0, this.length));
    this.bytes = next;
  }

  push(byte: number): void {
    if (this.length === this.bytes.length) this.ensure(1);
    this.bytes[this.length++] = byte;
  }

  append(src: Uint8Array, start = 0, end = src.length): void {
    const n = end - start;
    if (n <= 0) return;
    this.ensure(n);
    this.bytes.set(start === 0 && end === src.length ? src : src.subarray(start, end), this.length);
    this.length += n;
  }

  /**
   * Appends `text` as UTF-8 (well-formed input assumed; a lone surrogate becomes U+FFFD). With
   * `escapeSpaces`, every space is written as U+2581 (E2 96 81), as llama_escape_whitespace does.
   */
  appendString(text: string, start = 0, end = text.length, escapeSpaces = false): void {
    this.ensure((end - start) * 3);
    const out = this.bytes;
    let n = this.length;
    for (let i = start; i < end; i++) {
      let c = text.charCodeAt(i);
      if (c === 0x20 && escapeSpaces) c = 0x2581;
      else if (c < 0x80) {
        out[n++] = c;
        continue;
      } else if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < end ? text.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        } else c = 0xfffd;
      }
      n = putUtf8(out, n, c);
    }
    this.length = n;
  }

  /** Appends code point `cp` as UTF-8. */
  appendCodepoint(cp: number): void {
    this.ensure(4);
    this.length = putUtf8(this.bytes, this.length, cp);
  }

  toBytes(): Uint8Array {
    return this.bytes.slice(0, this.length);
  }
}

const decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * Decodes UTF-8 the way V8 does for native strings: invalid sequences become U+FFFD (WHATWG
 * "maximal subpart" replacement), a leading U+FEFF is kept.
 */
export function decodeUtf8(bytes: Uint8Array): string {
  return decoder.decode(bytes);
}

/** True when `bytes` is well-formed UTF-8. */
export function isValidUtf8(bytes: Uint8Array, start = 0, end = bytes.length): boolean {
  let i = start;
  while (i < end) {
    const b = bytes[i]!;
    if (b < 0x80) {
      i++;
      continue;
    }
    let n: number;
    let min: number;
    let cp: number;
    if (b >= 0xc2 && b <= 0xdf) {
      n = 1;
      min = 0x80;
      cp = b & 0x1f;
    } else if (b >= 0xe0 && b <= 0xef) {
      n = 2;
      min = 0x800;
      cp = b & 0x0f;
    } else if (b >= 0xf0 && b <= 0xf4) {
      n = 3;
      min = 0x10000;
      cp = b & 0x07;
    } else return false;
    if (i + n >= end) return false;
    for (let k = 1; k <= n; k++) {
      const c = bytes[i + k]!;
      if ((c & 0xc0) !== 0x80) return false;
      cp = (cp << 6) | (c & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return false;
    i += n + 1;
  }
  return true;
}
