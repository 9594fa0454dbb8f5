/**
 * The IQ3_S / IQ3_XXS group search (ggml's quantize_row_iq3_s_impl / quantize_row_iq3_xxs_impl,
 * the loop over scales for 32 values) in WebAssembly SIMD, where f32 arithmetic is native.
 * src-main/core/wasm/iq3-search.ts is the host side: it writes the lattice tables once (from
 * iq-lattice.ts), then per group the values, weights and their square roots, calls groupScale and
 * reads the levels at L_AT. Compiled by `npm run build:wasm` into src-main/core/wasm/iq3-search.wasm.ts.
 *
 * Exactness: every f32 operation is one IEEE operation, as in ggml's C (no contraction), in
 * ggml's order; a product computed in a SIMD lane is the same operation as the scalar one. Sums run
 * value by value; each try rounds 4 groups of 4 values at once (lane j: group j); the neighbour
 * search scores 4 neighbours at once (lane j: neighbours j, j + 4, ...) and keeps, as ggml's scan
 * does, the first of the least errors.
 */

/** The group (32 values): |x| (f32), weights (f32), their square roots (f32), levels out (u8). */
export const X_AT: usize = 0x10000;
export const W_AT: usize = 0x10080;
export const WAUX_AT: usize = 0x10100;
export const L_AT: usize = 0x10180;
/** Set to 1 by groupScale when a snap found no neighbour with a finite error (non-finite input). */
export const FAILED_AT: usize = 0x101a0;
// Scratch: the try's levels and the previous try's (u8), weights × values (f32).
const LAUX_AT: usize = 0x101c0;
const PREV_AT: usize = 0x101e0;
const WX_AT: usize = 0x10200;
// Scratch: each value and each weight's square root in all 4 lanes (v128 × 32 each), and the
// values of groups of 4 side by side (v128 × 8: at 64h + 16i, value i of groups 4h..4h + 3).
const XS_AT: usize = 0x10280;
const WS_AT: usize = 0x10480;
const XT_AT: usize = 0x10680;
/** Keys of 4 levels of 3 bits: their grid index (i16, −1 off the grid). */
export const KEYS: i32 = 4096;
export const INDEX_AT: usize = 0x10700;
/**
 * Off-grid keys' neighbours in ggml's search order, 4 to a block: per block the 4 neighbours'
 * odd level values 2·level + 1 (f32x4 for value 0, 1, 2, 3) and their packed levels (u32x4:
 * level i in byte i); a list's last block is padded with copies of its last neighbour (a copy
 * never wins: ties keep the first). NB_START_AT: u32 × (KEYS + 1), key k's blocks are
 * start[k]..start[k + 1] at NB_AT, BLOCK_BYTES each.
 */
export const NB_START_AT: usize = 0x12700;
export const NB_AT: usize = 0x16710;
export const BLOCK_BYTES: i32 = 80;

const GROUP: i32 = 32;
const MAX_LEVEL: i32 = 7;
/** 2 · MAX_LEVEL + 1: the value the largest level stands for. */
const TOP: f32 = 15;
const FLT_MAX: f32 = 3.4028234663852886e38;
/** A lane that found no neighbour with an error below FLT_MAX. */
const NONE: i32 = 0x7fffffff;

/** ggml's nearest_int of 4 lanes (add 1.5·2^23 in f32, read the mantissa), clamped to [0, 7]. */
@inline function levels4(v: v128): v128 {
  const l = i32x4.sub(v128.and(f32x4.add(v, f32x4.splat(12582912.0)), i32x4.splat(0x007fffff)), i32x4.splat(0x00400000));
  return i32x4.min_s(i32x4.max_s(l, i32x4.splat(0)), i32x4.splat(MAX_LEVEL));
}

/**
 * Writes to out + 4k the levels of the grid entry group k snaps to, given the key and packed
 * levels (level i in byte i) it rounded to: those levels when on the grid (returns true), else the
 * neighbour with the least waux-weighted error at `scale` (returns false).
 */
@inline function snapKey(k: i32, key: i32, word: u32, scale: f32, out: usize): bool {
  if (load<i16>(INDEX_AT + (<usize>key << 1)) >= 0) {
    store<u32>(out + (<usize>k << 2), word);
    return true;
  }
  const o = <usize>k << 4;
  const s = f32x4.splat(scale);
  const xs = XS_AT + (o << 2);
  const ws = WS_AT + (o << 2);
  const x0 = v128.load(xs);
  const x1 = v128.load(xs, 16);
  const x2 = v128.load(xs, 32);
  const x3 = v128.load(xs, 48);
  const w0 = v128.load(ws);
  const w1 = v128.load(ws, 16);
  const w2 = v128.load(ws, 32);
  const w3 = v128.load(ws, 48);
  // Lane j keeps the first least error among neighbours j, j + 4, ... and that neighbour's position.
  let best = f32x4.splat(FLT_MAX);
  let bestAt = i32x4.splat(NONE);
  let at = i32x4(0, 1, 2, 3);
  const first = load<u32>(NB_START_AT + (<usize>key << 2));
  const end = NB_AT + <usize>load<u32>(NB_START_AT + (<usize>key << 2) + 4) * BLOCK_BYTES;
  for (let p = NB_AT + <usize>first * BLOCK_BYTES; p < end; p += BLOCK_BYTES) {
    let d = f32x4.sub(f32x4.mul(s, v128.load(p)), x0);
    let d2 = f32x4.add(f32x4.splat(0), f32x4.mul(f32x4.mul(w0, d), d));
    d = f32x4.sub(f32x4.mul(s, v128.load(p, 16)), x1);
    d2 = f32x4.add(d2, f32x4.mul(f32x4.mul(w1, d), d));
    d = f32x4.sub(f32x4.mul(s, v128.load(p, 32)), x2);
    d2 = f32x4.add(d2, f32x4.mul(f32x4.mul(w2, d), d));
    d = f32x4.sub(f32x4.mul(s, v128.load(p, 48)), x3);
    d2 = f32x4.add(d2, f32x4.mul(f32x4.mul(w3, d), d));
    const better = f32x4.lt(d2, best);
    best = v128.bitselect(d2, best, better);
    bestAt = v128.bitselect(at, bestAt, better);
    at = i32x4.add(at, i32x4.splat(4));
  }
  // The least error over the lanes (no lane holds NaN or −0), then the earliest position holding it.
  let least = f32x4.pmin(best, i8x16.shuffle(best, best, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  least = f32x4.pmin(least, i8x16.shuffle(least, least, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  let pos = v128.bitselect(bestAt, i32x4.splat(NONE), f32x4.eq(best, least));
  pos = i32x4.min_s(pos, i8x16.shuffle(pos, pos, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7));
  pos = i32x4.min_s(pos, i8x16.shuffle(pos, pos, 4, 5, 6, 7, 0, 1, 2, 3, 12, 13, 14, 15, 8, 9, 10, 11));
  const chosen = i32x4.extract_lane(pos, 0);
  if (chosen == NONE) {
    store<u8>(FAILED_AT, 1);
    return false;
  }
  store<u32>(out + (<usize>k << 2), load<u32>(NB_AT + <usize>(first + (chosen >> 2)) * BLOCK_BYTES + 64 + ((<usize>chosen & 3) << 2)));
  return false;
}

/** nearest_int(0.5 · (id · x − 1)) clamped to [0, 7], 4 lanes (ggml's rounding of a value to a level). */
@inline function levelsAt(id: v128, x: v128): v128 {
  return levels4(f32x4.mul(f32x4.sub(f32x4.mul(id, x), f32x4.splat(1)), f32x4.splat(0.5)));
}

/**
 * Snaps the groups 4h + j whose bit j is set in `mask` at inverse scale `id` (their levels to
 * out, see snapKey); returns the bits (at 4h + j) of those that were off the grid. The 4 groups
 * round side by side, one per lane.
 */
@inline function snapQuad(h: i32, id: f32, scale: f32, out: usize, mask: i32): i32 {
  const xt = XT_AT + (<usize>h << 6);
  const idv = f32x4.splat(id);
  const l0 = levelsAt(idv, v128.load(xt));
  const l1 = levelsAt(idv, v128.load(xt, 16));
  const l2 = levelsAt(idv, v128.load(xt, 32));
  const l3 = levelsAt(idv, v128.load(xt, 48));
  const keys = v128.or(v128.or(l0, i32x4.shl(l1, 3)), v128.or(i32x4.shl(l2, 6), i32x4.shl(l3, 9)));
  const words = v128.or(v128.or(l0, i32x4.shl(l1, 8)), v128.or(i32x4.shl(l2, 16), i32x4.shl(l3, 24)));
  const k = h << 2;
  let off: i32 = 0;
  if ((mask & 1) != 0 && !snapKey(k, i32x4.extract_lane(keys, 0), i32x4.extract_lane(words, 0), scale, out)) off |= 1;
  if ((mask & 2) != 0 && !snapKey(k + 1, i32x4.extract_lane(keys, 1), i32x4.extract_lane(words, 1), scale, out)) off |= 2;
  if ((mask & 4) != 0 && !snapKey(k + 2, i32x4.extract_lane(keys, 2), i32x4.extract_lane(words, 2), scale, out)) off |= 4;
  if ((mask & 8) != 0 && !snapKey(k + 3, i32x4.extract_lane(keys, 3), i32x4.extract_lane(words, 3), scale, out)) off |= 8;
  return off << k;
}

// The odd-level sums of the last sumsOf call: Σ w·x·q and Σ w·q², q = 2·level + 1.
let sumqx: f32 = 0;
let sumq2: f32 = 0;

/** The odd-level sums of the 32 levels at lv, in f32 and value order as ggml adds them. */
@inline function sumsOf(lv: usize): void {
  let sx: f32 = 0;
  let s2: f32 = 0;
  for (let i = 0; i < GROUP; i += 4) {
    const q = f32x4.convert_i32x4_s(i32x4.add(i32x4.shl(i32x4.extend_low_i16x8_u(i16x8.extend_low_i8x16_u(v128.load32_zero(lv + <usize>i))), 1), i32x4.splat(1)));
    const tx = f32x4.mul(v128.load(WX_AT + (<usize>i << 2)), q);
    const t2 = f32x4.mul(f32x4.mul(v128.load(W_AT + (<usize>i << 2)), q), q);
    sx = sx + f32x4.extract_lane(tx, 0);
    s2 = s2 + f32x4.extract_lane(t2, 0);
    sx = sx + f32x4.extract_lane(tx, 1);
    s2 = s2 + f32x4.extract_lane(t2, 1);
    sx = sx + f32x4.extract_lane(tx, 2);
    s2 = s2 + f32x4.extract_lane(t2, 2);
    sx = sx + f32x4.extract_lane(tx, 3);
    s2 = s2 + f32x4.extract_lane(t2, 3);
  }
  sumqx = sx;
  sumq2 = s2;
}

/**
 * The scale of the 32 values at X_AT (largest `max`, weights at W_AT, their square roots at
 * WAUX_AT); leaves their levels at L_AT. Tries `steps` scales either side of the first guess and
 * keeps the least-squares scale explaining most weighted energy; when a kept group of 4 was off
 * the grid, re-snaps with it: all 8 groups when `resnapAll` (IQ3_S, which also starts with every
 * group marked off the grid), else the groups off it (IQ3_XXS).
 */
export function groupScale(max: f32, steps: i32, resnapAll: bool): f32 {
  store<u8>(FAILED_AT, 0);
  for (let i = 0; i < GROUP; i += 4) {
    const o = <usize>i << 2;
    v128.store(WX_AT + o, f32x4.mul(v128.load(W_AT + o), v128.load(X_AT + o)));
  }
  for (let i = 0; i < GROUP; i++) {
    v128.store(XS_AT + (<usize>i << 4), f32x4.splat(load<f32>(X_AT + (<usize>i << 2))));
    v128.store(WS_AT + (<usize>i << 4), f32x4.splat(load<f32>(WAUX_AT + (<usize>i << 2))));
    store<f32>(XT_AT + ((<usize>i >> 4) << 6) + ((<usize>i & 3) << 4) + (((<usize>i >> 2) & 3) << 2), load<f32>(X_AT + (<usize>i << 2)));
  }
  let best: f32 = 0;
  let scale: f32 = max / TOP;
  // Bit k: group k of the kept levels was off the grid.
  let offGrid: i32 = resnapAll ? 0xff : 0;
  for (let is = -steps; is <= steps; is++) {
    const id: f32 = (TOP + <f32>is * <f32>0.2) / max;
    const tryScale: f32 = <f32>1 / id;
    const off = snapQuad(0, id, tryScale, LAUX_AT, 0xf) | snapQuad(1, id, tryScale, LAUX_AT, 0xf);
    // Neighbouring scales often snap to the same levels (about half the tries): their sums are the last try's.
    const lo = v128.load(LAUX_AT);
    const hi = v128.load(LAUX_AT, 16);
    if (is == -steps || !i8x16.all_true(v128.and(i8x16.eq(lo, v128.load(PREV_AT)), i8x16.eq(hi, v128.load(PREV_AT, 16))))) sumsOf(LAUX_AT);
    v128.store(PREV_AT, lo);
    v128.store(PREV_AT, hi, 16);
    if (sumq2 > 0 && sumqx * sumqx > best * sumq2) {
      scale = sumqx / sumq2;
      best = scale * sumqx;
      v128.store(L_AT, lo);
      v128.store(L_AT, hi, 16);
      offGrid = off;
    }
  }
  if (offGrid != 0 && scale > 0) {
    const id: f32 = <f32>1 / scale;
    const mask = resnapAll ? 0xff : offGrid;
    snapQuad(0, id, scale, L_AT, mask & 0xf);
    snapQuad(1, id, scale, L_AT, mask >> 4);
    sumsOf(L_AT);
    if (sumq2 > 0) scale = sumqx / sumq2;
  }
  return scale;
}
