/**
 * A vocabulary's token byte strings in a trie, for the token mask of constrained sampling: walked
 * depth-first from a matcher state, each shared prefix is matched once, and a subtree is skipped as
 * soon as its prefix is refused. Built once per model, in flat typed arrays (a 150k-token
 * vocabulary makes some 500k nodes).
 */
import type { Tokenizer } from '../tokenizer/index';

export interface ControlToken {
  readonly id: number;
  readonly bytes: Uint8Array;
}

export class TokenTrie {
  private constructor(
    /** Number of ids, i.e. bits in a mask. */
    readonly size: number,
    /** Per node: its parent (-1 for the root) and the byte that leads to it. */
    private readonly parent: Int32Array,
    private readonly byte: Uint8Array,
    /** Per node: its children, childIndex[childStart[n] .. childStart[n + 1]], in byte order. */
    private readonly childStart: Int32Array,
    private readonly childIndex: Int32Array,
    /** Per node: the ids whose bytes end there, tokenIds[tokenStart[n] .. tokenStart[n + 1]]. */
    private readonly tokenStart: Int32Array,
    private readonly tokenIds: Int32Array,
    /** Per id: the node where its bytes end, or -1 (a token with no bytes). */
    private readonly nodeOf: Int32Array,
    /** Tokens without bytes that render as text (Mistral's [ARGS]): allowed only inside a lead's text (lead-matcher.ts). */
    readonly controls: readonly ControlToken[],
  ) {}

  /**
   * The trie of ids 0 … size-1; `bytesOf` gives a token's bytes (empty: the token is never part of
   * constrained text), `controlBytesOf` the rendered text of one without bytes (empty: none).
   */
  static build(
    size: number,
    bytesOf: (id: number) => Uint8Array,
    controlBytesOf?: (id: number) => Uint8Array,
  ): TokenTrie {
    const controls: ControlToken[] = [];
    const pieces: Uint8Array[] = [];
    const ids: number[] = [];
    for (let id = 0; id < size; id++) {
      const p = bytesOf(id);
      pieces[id] = p;
      if (p.length > 0) ids.push(id);
      else {
        const rendered = controlBytesOf?.(id);
        if (rendered && rendered.length > 0) controls.push({ id, bytes: rendered });
      }
    }
    ids.sort((a, b) => compareBytes(pieces[a]!, pieces[b]!) || a - b);

    // Sorted order lays the nodes out in preorder: each token shares its longest common prefix
    // with the one before, and adds nodes for the rest.
    const parent = [-1];
    const byte = [0];
    const ends: number[] = []; // node of each sorted id
    const path = [0];
    let prev: Uint8Array = new Uint8Array(0);
    for (const id of ids) {
      const p = pieces[id]!;
      const common = commonPrefix(prev, p);
      path.length = common + 1;
      for (let i = common; i < p.length; i++) {
        parent.push(path.at(-1)!);
        byte.push(p[i]!);
        path.push(parent.length - 1);
      }
      ends.push(path.at(-1)!);
      prev = p;
    }
    const nodes = parent.length;
    const childStart = new Int32Array(nodes + 1);
    for (let n = 1; n < nodes; n++) childStart[parent[n]! + 1]!++;
    for (let n = 0; n < nodes; n++) childStart[n + 1]! += childStart[n]!;
    const childIndex = new Int32Array(Math.max(0, nodes - 1));
    const fill = childStart.slice(0, nodes);
    for (let n = 1; n < nodes; n++) childIndex[fill[parent[n]!]!++] = n;

    const tokenStart = new Int32Array(nodes + 1);
    for (const n of ends) tokenStart[n + 1]!++;
    for (let n = 0; n < nodes; n++) tokenStart[n + 1]! += tokenStart[n]!;
    const tokenIds = new Int32Array(ids.length);
    const nodeOf = new Int32Array(size).fill(-1);
    const at = tokenStart.slice(0, nodes);
    ids.forEach((id, i) => {
      tokenIds[at[ends[i]!]!++] = id;
      nodeOf[id] = ends[i]!;
    });
    return new TokenTrie(
      size,
      Int32Array.from(parent),
      Uint8Array.from(byte),
      childStart,
      childIndex,
      tokenStart,
      tokenIds,
      nodeOf,
      controls,
    );
  }

  /** The trie of a tokenizer's tokens as it writes them (control tokens have no bytes); ids past its vocabulary, up to `size`, have none. */
  static fromTokenizer(tokenizer: Tokenizer, size = tokenizer.vocab.tokens.length): TokenTrie {
    const known = Math.min(size, tokenizer.vocab.tokens.length);
    const none = new Uint8Array(0);
    return TokenTrie.build(
      size,
      (id) => (id < known ? tokenizer.tokenToPiece(id) : none),
      (id) => (id < known ? tokenizer.tokenToPiece(id, { renderSpecial: true }) : none),
    );
  }

  /** A token's bytes (empty for one that has none). */
  bytes(id: number): Uint8Array {
    const path: number[] = [];
    for (let n = id >= 0 && id < this.size ? this.nodeOf[id]! : -1; n > 0; n = this.parent[n]!)
      path.push(this.byte[n]!);
    return Uint8Array.from(path.reverse());
  }

  /**
   * Sets in `mask` (one bit per id, little-endian u32 words) every token whose bytes `advance`
   * accepts one after another from `state`; the rest of `mask` is left as it is.
   */
  allowed<S>(state: S, advance: (state: S, byte: number) => S | null, mask: Uint32Array): void {
    const nodes: number[] = [0];
    const states: S[] = [state];
    while (nodes.length > 0) {
      const n = nodes.pop()!;
      const s = states.pop()!;
      for (let t = this.tokenStart[n]!; t < this.tokenStart[n + 1]!; t++) {
        const id = this.tokenIds[t]!;
        mask[id >>> 5]! |= 1 << (id & 31);
      }
      for (let c = this.childStart[n]!; c < this.childStart[n + 1]!; c++) {
        const child = this.childIndex[c]!;
        const next = advance(s, this.byte[child]!);
        if (next !== null) {
          nodes.push(child);
          states.push(next);
        }
      }
    }
  }
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}

function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Mask words for `size` ids. */
export function maskWords(size: number): number {
  return Math.ceil(size / 32);
}
