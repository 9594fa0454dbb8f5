import type { StringArray } from '../gguf/values';
import { BYTE_TO_CHAR } from './byte-unicode';
import { putUtf8 } from './utf8';
import { resolvePreTokenizer, type PreTokenizer } from './pre-tokenizers';
import { VocabError, type Vocab } from './vocab';

/*
 * Byte-level BPE ("gpt2" tokenizer model) as llama.cpp's llm_tokenizer_bpe_session runs it:
 * the pre-tokenizer splits the text into words; each word's UTF-8 bytes become byte-level
 * characters (one symbol per byte); adjacent symbols are merged, lowest merge rank first and
 * leftmost first among equal ranks, until no pair has a rank; each resulting symbol is its token,
 * or, when no token has its text, the tokens of its single bytes where those exist.
 *
 * Everything works on bytes and ids; token and merge texts are never decoded. "Pieces" are the
 * byte strings symbols can be: every token (piece id = token id), plus byte characters and merge
 * results no token spells (ids from the vocabulary size on, added as met). Building hashes each
 * token and each merge once; a pair of pieces is matched to its merge when first met while
 * encoding and remembered.
 */

/** Word results kept per encoder; the cache is emptied when it grows past this. */
const WORD_CACHE_LIMIT = 1 << 16;
/** Longer words (whitespace runs, long numbers...) are not cached. */
const WORD_CACHE_MAX_LENGTH = 256;
/** Piece pairs remembered (merge or no merge) before the memo is emptied (at most 4 MiB). */
const PAIR_MEMO_LIMIT = 1 << 17;

/**
 * An encoder for one raw-text fragment (special tokens already split out): the ids llama.cpp
 * gives it, without BOS/EOS. Throws VocabError for an unsupported pre-tokenizer or a vocabulary
 * without merges.
 */
export function createBpeEncoder(vocab: Vocab): (fragment: string) => number[] {
  const model = new BpeModel(vocab);
  return (fragment) => model.encode(fragment);
}

// ---------------------------------------------------------------------------------------------

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;
const SPACE = 0x20;

/** FNV-1a over buf[start, end), continuing from `h` (a previous result, to hash a concatenation). */
function fnv1a(buf: Uint8Array, start: number, end: number, h = FNV_OFFSET): number {
  for (let i = start; i < end; i++) h = Math.imul(h ^ buf[i]!, FNV_PRIME);
  return h >>> 0;
}

/**
 * Byte strings → piece ids, open addressing. A later token with the same text replaces the
 * earlier one, as llama.cpp's token_to_id map does.
 */
class PieceTable {
  /** Each piece's bytes: in `tokenBytes` for tokens (unless `inExtra`), else in `extraBytes`. */
  private start: Int32Array;
  private len: Int32Array;
  private inExtra: Uint8Array;
  /** FNV-1a of each piece's bytes. */
  hash: Uint32Array;
  private extraBytes = new Uint8Array(1 << 12);
  private extraUsed = 0;
  /** Per slot: piece id + 1 (0 = empty) and its hash, side by side. */
  private slots: Int32Array;
  private mask: number;
  count: number;

  constructor(
    private readonly tokenBytes: Uint8Array,
    readonly tokenCount: number,
  ) {
    const capacity = tokenCount + 1024;
    this.start = new Int32Array(capacity);
    this.len = new Int32Array(capacity);
    this.inExtra = new Uint8Array(capacity);
    this.hash = new Uint32Array(capacity);
    let size = 1024;
    while (size < capacity * 2) size *= 2;
    this.slots = new Int32Array(size * 2);
    this.mask = size - 1;
    this.count = tokenCount;
  }

  bytesOf(id: number): Uint8Array {
    return this.inExtra[id] ? this.extraBytes : this.tokenBytes;
  }
  startOf(id: number): number {
    return this.start[id]!;
  }
  lengthOf(id: number): number {
    return this.len[id]!;
  }

  private same(id: number, buf: Uint8Array, start: number, len: number): boolean {
    if (this.len[id] !== len) return false;
    const own = this.bytesOf(id);
    const s = this.start[id]!;
    for (let i = 0; i < len; i++) if (own[s + i] !== buf[start + i]) return false;
    return true;
  }

  /** The slot holding these bytes, or the empty slot where they would go. */
  private slotFor(buf: Uint8Array, start: number, len: number, h: number): number {
    const slots = this.slots;
    let slot = h & this.mask;
    for (;;) {
      const v = slots[slot * 2]!;
      if (v === 0) return slot;
      if (slots[slot * 2 + 1] === (h | 0) && this.same(v - 1, buf, start, len)) return slot;
      slot = (slot + 1) & this.mask;
    }
  }

  private put(slot: number, id: number, h: number): void {
    this.slots[slot * 2] = id + 1;
    this.slots[slot * 2 + 1] = h | 0;
  }

  /** Registers token `id`, spelled by tokenBytes[start, start + len). */
  setToken(id: number, start: number, len: number): void {
    const h = fnv1a(this.tokenBytes, start, start + len);
    this.start[id] = start;
    this.len[id] = len;
    this.hash[id] = h;
    this.put(this.slotFor(this.tokenBytes, start, len, h), id, h);
  }

  /** Registers token `id` under a text that is not in tokenBytes (llama.cpp's "[EMPTY_<id>]" for an empty token). */
  setTokenText(id: number, bytes: Uint8Array): void {
    const h = fnv1a(bytes, 0, bytes.length);
    this.start[id] = this.appendExtra(bytes, 0, bytes.length);
    this.len[id] = bytes.length;
    this.inExtra[id] = 1;
    this.hash[id] = h;
    this.put(this.slotFor(bytes, 0, bytes.length, h), id, h);
  }

  /** The piece spelled by buf[start, start + len) whose hash is h, or -1. */
  findHashed(buf: Uint8Array, start: number, len: number, h: number): number {
    return this.slots[this.slotFor(buf, start, len, h) * 2]! - 1;
  }

  find(buf: Uint8Array, start: number, len: number): number {
    return this.findHashed(buf, start, len, fnv1a(buf, start, start + len));
  }

  findOrAdd(buf: Uint8Array, start: number, len: number, h = fnv1a(buf, start, start + len)): number {
    const slot = this.slotFor(buf, start, len, h);
    const v = this.slots[slot * 2]!;
    if (v !== 0) return v - 1;
    const id = this.count++;
    if (id >= this.start.length) this.grow();
    this.start[id] = this.appendExtra(buf, start, len);
    this.len[id] = len;
    this.inExtra[id] = 1;
    this.hash[id] = h;
    this.put(slot, id, h);
    if (this.count * 4 > this.slots.length) this.rehash();
    return id;
  }

  private appendExtra(buf: Uint8Array, start: number, len: number): number {
    if (this.extraUsed + len > this.extraBytes.length) {
      const next = new Uint8Array(Math.max(this.extraBytes.length * 2, this.extraUsed + len));
      next.set(this.extraBytes.subarray(0, this.extraUsed));
      this.extraBytes = next;
    }
    for (let i = 0; i < len; i++) this.extraBytes[this.extraUsed + i] = buf[start + i]!;
    const at = this.extraUsed;
    this.extraUsed += len;
    return at;
  }

  private grow(): void {
    const n = this.start.length * 2;
    const copy = <T extends Int32Array | Uint32Array | Uint8Array>(a: T, b: T): T => {
      b.set(a);
      return b;
    };
    this.start = copy(this.start, new Int32Array(n));
    this.len = copy(this.len, new Int32Array(n));
    this.inExtra = copy(this.inExtra, new Uint8Array(n));
    this.hash = copy(this.hash, new Uint32Array(n));
  }

  private rehash(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2);
    const mask = slots.length / 2 - 1;
    for (let i = 0; i < old.length; i += 2) {
      if (old[i] === 0) continue;
      let slot = old[i + 1]! & mask;
      while (slots[slot * 2] !== 0) slot = (slot + 1) & mask;
      slots[slot * 2] = old[i]!;
      slots[slot * 2 + 1] = old[i + 1]!;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/**
 * The merges, keyed by their text "left right" as stored. llama.cpp splits each at its first
 * space after the first byte; a pair is found by hashing left + " " + right and checking that the
 * stored split falls at the end of `left`. The first listing of a pair wins (its lowest rank).
 */
class MergeIndex {
  private readonly raw: Uint8Array;
  /** Per merge: start of its text in `raw`, its length, the length of its left side (0: unusable). */
  private readonly start: Int32Array;
  private readonly len: Int32Array;
  private readonly leftLen: Int32Array;
  /** Per slot: rank + 1 (0 = empty) and hash. */
  private readonly slots: Int32Array;
  private readonly mask: number;

  constructor(merges: StringArray) {
    const n = merges.length;
    this.raw = merges.raw;
    this.start = new Int32Array(n);
    this.len = new Int32Array(n);
    this.leftLen = new Int32Array(n);
    let size = 1024;
    while (size < n * 2) size *= 2;
    this.slots = new Int32Array(size * 2);
    this.mask = size - 1;
    const raw = this.raw;
    for (let rank = 0; rank < n; rank++) {
      const start = merges.starts[rank]!;
      const end = merges.ends[rank]!;
      const len = end - start;
      let p = start + 1;
      while (p < end && raw[p] !== SPACE) p++;
      // No space: llama.cpp's pair ("", ""); an empty right side: never a symbol either.
      if (p >= end - 1) continue;
      this.start[rank] = start;
      this.len[rank] = len;
      this.leftLen[rank] = p - start;
      const h = fnv1a(raw, start, end);
      let slot = h & this.mask;
      for (;;) {
        const v = this.slots[slot * 2]!;
        if (v === 0) {
          this.slots[slot * 2] = rank + 1;
          this.slots[slot * 2 + 1] = h | 0;
          break;
        }
        if (this.slots[slot * 2 + 1] === (h | 0) && this.sameText(v - 1, raw, start, len)) break; // a repeat: keep the first
        slot = (slot + 1) & this.mask;
      }
    }
  }

  private sameText(rank: number, buf: Uint8Array, start: number, len: number): boolean {
    if (this.len[rank] !== len) return false;
    const s = this.start[rank]!;
    for (let i = 0; i < len; i++) if (this.raw[s + i] !== buf[start + i]) return false;
    return true;
  }

  /**
   * The rank of the merge (left, right), or -1: `h` is the hash of left + " " + right, and the
   * pair's text is lb[ls, ls + ll) + " " + rb[rs, rs + rl).
   */
  rankOf(h: number, lb: Uint8Array, ls: number, ll: number, rb: Uint8Array, rs: number, rl: number): number {
    const raw = this.raw;
    const total = ll + 1 + rl;
    let slot = h & this.mask;
    for (;;) {
      const v = this.slots[slot * 2]!;
      if (v === 0) return -1;
      const rank = v - 1;
      if (this.slots[slot * 2 + 1] === (h | 0) && this.len[rank] === total && this.leftLen[rank] === ll) {
        const s = this.start[rank]!;
        let same = true;
        for (let i = 0; i < ll && same; i++) same = raw[s + i] === lb[ls + i];
        for (let i = 0; i < rl && same; i++) same = raw[s + ll + 1 + i] === rb[rs + i];
        if (same) return rank;
      }
      slot = (slot + 1) & this.mask;
    }
  }
}

/** Remembered (left piece, right piece) → merge rank (-1: none) and resulting piece. */
class PairMemo {
  /** Per slot: left (-1 = empty), right, rank, result; one cache line per probe. */
  slots = new Int32Array(4096 * 4).fill(-1);
  private mask = 4095;
  private count = 0;

  constructor(private readonly limit: number) {}

  private static hash(l: number, r: number): number {
    let h = Math.imul(l, 0x9e3779b1) ^ r;
    h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
    return (h ^ (h >>> 16)) >>> 0;
  }

  /** Index into `slots` of the pair's entry (rank at +2, result at +3), or -1. */
  find(l: number, r: number): number {
    const slots = this.slots;
    let slot = PairMemo.hash(l, r) & this.mask;
    for (;;) {
      const at = slot * 4;
      const k = slots[at]!;
      if (k === -1) return -1;
      if (k === l && slots[at + 1] === r) return at;
      slot = (slot + 1) & this.mask;
    }
  }

  /** Stores a pair not in the memo; returns the index of its entry (valid until the next store). */
  store(l: number, r: number, rank: number, result: number): number {
    if (this.count >= this.limit) {
      this.slots.fill(-1);
      this.count = 0;
    } else if ((this.count + 1) * 2 > this.mask + 1) {
      this.resize((this.mask + 1) * 2);
    }
    this.count++;
    const slots = this.slots;
    let slot = PairMemo.hash(l, r) & this.mask;
    while (slots[slot * 4] !== -1) slot = (slot + 1) & this.mask;
    const at = slot * 4;
    slots[at] = l;
    slots[at + 1] = r;
    slots[at + 2] = rank;
    slots[at + 3] = result;
    return at;
  }

  private resize(size: number): void {
    const old = this.slots;
    this.slots = new Int32Array(size * 4).fill(-1);
    this.mask = size - 1;
    for (let at = 0; at < old.length; at += 4) {
      const l = old[at]!;
      if (l === -1) continue;
      let slot = PairMemo.hash(l, old[at + 1]!) & this.mask;
      while (this.slots[slot * 4] !== -1) slot = (slot + 1) & this.mask;
      this.slots.set(old.subarray(at, at + 4), slot * 4);
    }
  }
}

class BpeModel {
  private readonly pieces: PieceTable;
  private readonly merges: MergeIndex;
  private readonly memo = new PairMemo(PAIR_MEMO_LIMIT);
  private readonly pre: PreTokenizer;
  private readonly tokenCount: number;
  /** Piece of each byte's byte-level character. */
  private readonly bytePiece = new Int32Array(256);
  /** Token spelled by the single raw byte, or -1 (llama.cpp's fallback for symbols without a token). */
  private readonly singleByteToken = new Int32Array(256);
  /** Byte-level UTF-8 of each byte (1 or 2 bytes), for whole-word lookups. */
  private readonly byteLevelUtf8: Uint8Array[];
  private readonly cache = new Map<string, number[]>();

  // Scratch buffers, grown as needed.
  private cps = new Int32Array(256);
  private units = new Int32Array(257);
  private wordBytes = new Uint8Array(256);
  private encodedWord = new Uint8Array(512);
  private joined = new Uint8Array(256);
  private sym = new Int32Array(64);
  private prev = new Int32Array(64);
  private next = new Int32Array(64);
  private heap = new Int32Array(256);
  private eRank = new Int32Array(256);
  private eLeft = new Int32Array(256);
  private eRight = new Int32Array(256);
  private eLeftId = new Int32Array(256);
  private eRightId = new Int32Array(256);
  private eResult = new Int32Array(256);

  constructor(vocab: Vocab) {
    if (vocab.model !== 'gpt2') {
      throw new VocabError(
        `${vocab.file}: unsupported tokenizer "${vocab.model}" for byte-level BPE (expected "gpt2")`,
      );
    }
    this.pre = resolvePreTokenizer(vocab.pre, vocab.file);
    if (!vocab.merges) throw new VocabError(`${vocab.file}: BPE vocabulary without tokenizer.ggml.merges`);
    const tokens = vocab.tokens;
    this.tokenCount = tokens.length;

    const pieces = new PieceTable(tokens.raw, tokens.length);
    for (let id = 0; id < tokens.length; id++) {
      const len = tokens.ends[id]! - tokens.starts[id]!;
      if (len === 0) pieces.setTokenText(id, new TextEncoder().encode(`[EMPTY_${id}]`));
      else pieces.setToken(id, tokens.starts[id]!, len);
    }
    this.pieces = pieces;

    const utf8 = new TextEncoder();
    this.byteLevelUtf8 = BYTE_TO_CHAR.map((c) => utf8.encode(c));
    for (let b = 0; b < 256; b++) {
      const enc = this.byteLevelUtf8[b]!;
      this.bytePiece[b] = pieces.findOrAdd(enc, 0, enc.length);
      const id = pieces.find(Uint8Array.of(b), 0, 1);
      this.singleByteToken[b] = id >= 0 && id < this.tokenCount ? id : -1;
    }

    this.merges = new MergeIndex(vocab.merges);
  }

  encode(fragment: string): number[] {
    const out: number[] = [];
    if (fragment.length === 0) return out;
    const n = this.toCodepoints(fragment);
    const words = this.pre.split(this.cps, n);
    const cps = this.cps;
    const units = this.units;
    let at = 0;
    for (const length of words) {
      const end = at + length;
      let ids: number[] | undefined;
      if (length <= WORD_CACHE_MAX_LENGTH) {
        const key = fragment.slice(units[at], units[end]);
        ids = this.cache.get(key);
        if (ids === undefined) {
          ids = this.encodeWord(cps, at, end);
          if (this.cache.size >= WORD_CACHE_LIMIT) this.cache.clear();
          this.cache.set(key, ids);
        }
      } else {
        ids = this.encodeWord(cps, at, end);
      }
      for (let i = 0; i < ids.length; i++) out.push(ids[i]!);
      at = end;
    }
    return out;
  }

  /**
   * Fills this.cps with the code points of `text` (a lone surrogate as U+FFFD, as its UTF-8
   * conversion gives) and this.units with the UTF-16 offset of each.
   */
  private toCodepoints(text: string): number {
    if (this.cps.length < text.length) {
      this.cps = new Int32Array(text.length);
      this.units = new Int32Array(text.length + 1);
    }
    const cps = this.cps;
    const units = this.units;
    let n = 0;
    for (let i = 0; i < text.length; i++) {
      units[n] = i;
      let c = text.charCodeAt(i);
      if (c >= 0xd800 && c <= 0xdfff) {
        const d = i + 1 < text.length ? text.charCodeAt(i + 1) : 0;
        if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) {
          c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
          i++;
        } else {
          c = 0xfffd;
        }
      }
      cps[n++] = c;
    }
    units[n] = text.length;
    return n;
  }

  /** The token ids of one word (code points cps[start, end)). */
  private encodeWord(cps: Int32Array, start: number, end: number): number[] {
    if (this.wordBytes.length < (end - start) * 4) this.wordBytes = new Uint8Array((end - start) * 8);
    const bytes = this.wordBytes;
    let m = 0;
    for (let i = start; i < end; i++) m = putUtf8(bytes, m, cps[i]!);
    const out: number[] = [];
    if (this.pre.ignoreMerges) {
      const whole = this.wholeWordToken(bytes, m);
      if (whole >= 0) {
        out.push(whole);
        return out;
      }
    }
    if (m === 1) this.emitPiece(this.bytePiece[bytes[0]!]!, out);
    else this.mergeSymbols(bytes, m, out);
    return out;
  }

  /** The token whose text is the whole word in byte-level characters, or -1. */
  private wholeWordToken(bytes: Uint8Array, m: number): number {
    if (this.encodedWord.length < m * 2) this.encodedWord = new Uint8Array(m * 4);
    const enc = this.encodedWord;
    let k = 0;
    for (let i = 0; i < m; i++) {
      const e = this.byteLevelUtf8[bytes[i]!]!;
      enc[k++] = e[0]!;
      if (e.length === 2) enc[k++] = e[1]!;
    }
    const id = this.pieces.find(enc, 0, k);
    return id < this.tokenCount ? id : -1;
  }

  private emitPiece(piece: number, out: number[]): void {
    if (piece < this.tokenCount) {
      out.push(piece);
      return;
    }
    // No token spells this symbol: llama.cpp looks up each of its bytes as a one-byte token.
    const buf = this.pieces.bytesOf(piece);
    const s = this.pieces.startOf(piece);
    const len = this.pieces.lengthOf(piece);
    for (let i = 0; i < len; i++) {
      const t = this.singleByteToken[buf[s + i]!]!;
      if (t >= 0) out.push(t);
    }
  }

  /** The memo entry of the pair (l, r): rank at slots[at + 2] (-1: no merge), result piece at +3. */
  private pair(l: number, r: number): number {
    const found = this.memo.find(l, r);
    if (found >= 0) return found;
    const p = this.pieces;
    const lb = p.bytesOf(l);
    const ls = p.startOf(l);
    const ll = p.lengthOf(l);
    const rb = p.bytesOf(r);
    const rs = p.startOf(r);
    const rl = p.lengthOf(r);
    const hl = p.hash[l]!;
    const rank = this.merges.rankOf(fnv1a(rb, rs, rs + rl, Math.imul(hl ^ SPACE, FNV_PRIME)), lb, ls, ll, rb, rs, rl);
    let result = -1;
    if (rank >= 0) {
      if (this.joined.length < ll + rl) this.joined = new Uint8Array(2 * (ll + rl));
      const joined = this.joined;
      for (let i = 0; i < ll; i++) joined[i] = lb[ls + i]!;
      for (let i = 0; i < rl; i++) joined[ll + i] = rb[rs + i]!;
      result = p.findOrAdd(joined, 0, ll + rl, fnv1a(rb, rs, rs + rl, hl));
    }
    return this.memo.store(l, r, rank, result);
  }

  /** Merges the byte symbols of a word, lowest rank first, leftmost first among equal ranks. */
  private mergeSymbols(bytes: Uint8Array, m: number, out: number[]): void {
    if (this.sym.length < m) {
      this.sym = new Int32Array(m * 2);
      this.prev = new Int32Array(m * 2);
      this.next = new Int32Array(m * 2);
    }
    const sym = this.sym;
    const prev = this.prev;
    const next = this.next;
    for (let i = 0; i < m; i++) {
      sym[i] = this.bytePiece[bytes[i]!]!;
      prev[i] = i - 1;
      next[i] = i + 1 < m ? i + 1 : -1;
    }
    let entries = 0;
    let heapSize = 0;
    const push = (left: number, right: number) => {
      const at = this.pair(sym[left]!, sym[right]!);
      const memo = this.memo.slots;
      const rank = memo[at + 2]!;
      if (rank < 0) return;
      if (entries === this.eRank.length) this.growEntries();
      const e = entries++;
      this.eRank[e] = rank;
      this.eLeft[e] = left;
      this.eRight[e] = right;
      this.eLeftId[e] = sym[left]!;
      this.eRightId[e] = sym[right]!;
      this.eResult[e] = memo[at + 3]!;
      // Sift up.
      const heap = this.heap;
      const ranks = this.eRank;
      const lefts = this.eLeft;
      let i = heapSize++;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        const p = heap[parent]!;
        if (ranks[p]! < rank || (ranks[p] === rank && lefts[p]! < left)) break;
        heap[i] = p;
        i = parent;
      }
      heap[i] = e;
    };
    for (let i = 0; i + 1 < m; i++) push(i, i + 1);

    while (heapSize > 0) {
      // Pop the smallest (rank, left).
      const heap = this.heap;
      const ranks = this.eRank;
      const lefts = this.eLeft;
      const top = heap[0]!;
      const last = heap[--heapSize]!;
      if (heapSize > 0) {
        let i = 0;
        for (;;) {
          let c = 2 * i + 1;
          if (c >= heapSize) break;
          const a = heap[c]!;
          if (c + 1 < heapSize) {
            const b = heap[c + 1]!;
            if (ranks[b]! < ranks[a]! || (ranks[b] === ranks[a] && lefts[b]! < lefts[a]!)) c++;
          }
          const h = heap[c]!;
          if (ranks[last]! < ranks[h]! || (ranks[last] === ranks[h] && lefts[last]! < lefts[h]!)) break;
          heap[i] = h;
          i = c;
        }
        heap[i] = last;
      }
      const left = lefts[top]!;
      const right = this.eRight[top]!;
      // Outdated: a side changed or was merged away since the pair was queued.
      if (sym[left] !== this.eLeftId[top] || sym[right] !== this.eRightId[top] || next[left] !== right) continue;
      sym[left] = this.eResult[top]!;
      sym[right] = -1;
      const after = next[right]!;
      next[left] = after;
      if (after >= 0) prev[after] = left;
      if (prev[left]! >= 0) push(prev[left]!, left);
      if (after >= 0) push(left, after);
    }
    for (let i = 0; i !== -1; i = next[i]!) this.emitPiece(sym[i]!, out);
  }

  private growEntries(): void {
    const n = this.eRank.length * 2;
    const grow = (a: Int32Array) => {
      const b = new Int32Array(n);
      b.set(a);
      return b;
    };
    this.eRank = grow(this.eRank);
    this.eLeft = grow(this.eLeft);
    this.eRight = grow(this.eRight);
    this.eLeftId = grow(this.eLeftId);
    this.eRightId = grow(this.eRightId);
    this.eResult = grow(this.eResult);
    this.heap = grow(this.heap);
  }
}
