import { tokenLookup, VocabError, type Vocab } from './vocab';
import { ByteWriter, utf8SequenceLength } from './utf8';

/**
 * SentencePiece (tokenizer.ggml.model "llama") encoding of one raw-text fragment, as llama.cpp's
 * llm_tokenizer_spm does it: spaces become U+2581, the text is split into UTF-8 characters, and the
 * adjacent pair whose concatenation is the highest-scoring token is merged first (ties: leftmost),
 * until no pair forms a token. A final piece that is not a token is written as byte tokens <0xNN>.
 *
 * The returned function appends the ids for `fragment` to `out`; with `spacePrefix` a space is put
 * before it first (SentencePiece's add_dummy_prefix, which llama.cpp applies to the first fragment
 * and to each fragment right after a special token).
 */
export type SpmEncoder = (fragment: string, spacePrefix: boolean, out: number[]) => void;

export function createSpmEncoder(vocab: Vocab): SpmEncoder {
  const lookup = tokenLookup(vocab);
  const n = vocab.tokens.length;
  const scores = vocab.scores ?? new Float32Array(n);

  // Byte fallback: "<0xNN>", else the one-byte text itself (llama.cpp's byte_to_token).
  const byteTokens = new Int32Array(256).fill(-1);
  {
    const buf = new Uint8Array(6);
    const hex = '0123456789ABCDEF';
    buf.set([0x3c, 0x30, 0x78, 0, 0, 0x3e]); // "<0x??>"
    for (let b = 0; b < 256; b++) {
      buf[3] = hex.charCodeAt(b >> 4);
      buf[4] = hex.charCodeAt(b & 15);
      let id = lookup.find(buf, 0, 6);
      if (id < 0 && b !== 0) id = lookup.find(Uint8Array.of(b), 0, 1);
      byteTokens[b] = id;
    }
  }

  const text = new ByteWriter(1024);
  // Symbols: start byte and length (0 once merged into its left neighbour), linked list.
  let cap = 0;
  let symStart = new Int32Array(0);
  let symLen = new Int32Array(0);
  let symPrev = new Int32Array(0);
  let symNext = new Int32Array(0);
  // Candidate merges (bigrams) in a binary max-heap: score desc, then left asc.
  let heapCap = 0;
  let bgLeft = new Int32Array(0);
  let bgRight = new Int32Array(0);
  let bgSize = new Int32Array(0);
  let bgScore = new Float64Array(0);
  let heap = new Int32Array(0);
  let heapLen = 0;
  let bgCount = 0;

  const growSymbols = (need: number) => {
    if (need <= cap) return;
    cap = Math.max(need, cap * 2, 64);
    symStart = new Int32Array(cap);
    symLen = new Int32Array(cap);
    symPrev = new Int32Array(cap);
    symNext = new Int32Array(cap);
  };
  const growBigrams = () => {
    const next = Math.max(64, heapCap * 2);
    const copy = <T extends Int32Array | Float64Array>(old: T, make: (n: number) => T): T => {
      const a = make(next);
      a.set(old);
      return a;
    };
    bgLeft = copy(bgLeft, (k) => new Int32Array(k));
    bgRight = copy(bgRight, (k) => new Int32Array(k));
    bgSize = copy(bgSize, (k) => new Int32Array(k));
    bgScore = copy(bgScore, (k) => new Float64Array(k));
    heap = copy(heap, (k) => new Int32Array(k));
    heapCap = next;
  };
  // a before b: higher score, then smaller left index.
  const before = (a: number, b: number) =>
    bgScore[a]! > bgScore[b]! || (bgScore[a] === bgScore[b] && bgLeft[a]! < bgLeft[b]!);
  const heapPush = (bg: number) => {
    let i = heapLen++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const p = heap[parent]!;
      if (!before(bg, p)) break;
      heap[i] = p;
      i = parent;
    }
    heap[i] = bg;
  };
  const heapPop = (): number => {
    const top = heap[0]!;
    const last = heap[--heapLen]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heapLen) break;
      if (child + 1 < heapLen && before(heap[child + 1]!, heap[child]!)) child++;
      if (!before(heap[child]!, last)) break;
      heap[i] = heap[child]!;
      i = child;
    }
    if (heapLen > 0) heap[i] = last;
    return top;
  };
  const tryAddBigram = (left: number, right: number) => {
    if (left < 0 || right < 0) return;
    const start = symStart[left]!;
    const size = symLen[left]! + symLen[right]!;
    const id = lookup.find(text.bytes, start, start + size);
    if (id < 0) return;
    if (bgCount === heapCap) growBigrams();
    const bg = bgCount++;
    bgLeft[bg] = left;
    bgRight[bg] = right;
    bgSize[bg] = size;
    bgScore[bg] = scores[id]!;
    heapPush(bg);
  };
  const byteToken = (b: number): number => {
    const id = byteTokens[b]!;
    if (id < 0) {
      const hex = b.toString(16).toUpperCase().padStart(2, '0');
      throw new VocabError(
        `${vocab.file}: SentencePiece vocabulary has no byte token <0x${hex}> for a byte not covered by its pieces`,
      );
    }
    return id;
  };

  return (fragment, spacePrefix, out) => {
    text.reset();
    // Spaces as U+2581, as llama_escape_whitespace writes them.
    if (spacePrefix) text.appendString(' ', 0, 1, true);
    text.appendString(fragment, 0, fragment.length, true);
    const bytes = text.bytes;
    const total = text.length;
    if (total === 0) return;

    // One symbol per UTF-8 character.
    growSymbols(total);
    let count = 0;
    for (let offs = 0; offs < total;) {
      const len = Math.min(utf8SequenceLength(bytes[offs]!), total - offs);
      symStart[count] = offs;
      symLen[count] = len;
      symPrev[count] = count - 1;
      offs += len;
      symNext[count] = offs === total ? -1 : count + 1;
      count++;
    }

    heapLen = 0;
    bgCount = 0;
    for (let i = 1; i < count; i++) tryAddBigram(i - 1, i);
    while (heapLen > 0) {
      const bg = heapPop();
      const left = bgLeft[bg]!;
      const right = bgRight[bg]!;
      const ln = symLen[left]!;
      const rn = symLen[right]!;
      // Stale: one side was merged away or grew since this pair was queued.
      if (ln === 0 || rn === 0 || ln + rn !== bgSize[bg]) continue;
      symLen[left] = ln + rn;
      symLen[right] = 0;
      const after = symNext[right]!;
      symNext[left] = after;
      if (after >= 0) symPrev[after] = left;
      tryAddBigram(symPrev[left]!, left);
      tryAddBigram(left, after);
    }

    for (let i = 0; i !== -1; i = symNext[i]!) {
      const start = symStart[i]!;
      const len = symLen[i]!;
      const id = lookup.find(bytes, start, start + len);
      if (id >= 0) {
        out.push(id);
        continue;
      }
      for (let k = start; k < start + len; k++) out.push(byteToken(bytes[k]!));
    }
  };
}
