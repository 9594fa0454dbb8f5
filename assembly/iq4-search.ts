/**
 * The IQ4_NL / IQ4_XS scale search (ggml's quantize_row_iq4_nl_impl, the loop over 15 inverse
 * scales for 32 values) in WebAssembly SIMD, where f32 arithmetic is native.
 * src-main/core/wasm/iq4-search.ts is the host side: it writes sub-blocks of 32 values and their
 * weights at X_AT and W_AT, calls searchScales and reads one scale per sub-block at SCALE_AT.
 * Compiled by `npm run build:wasm` into src-main/core/wasm/iq4-search.wasm.ts.
 *
 * Exactness: every f32 operation is one IEEE operation, as in ggml's C (no contraction), in
 * ggml's order. Lane j of a quad runs sub-block 4h + j: its values are transposed in (vector i
 * holds value i of each), its sums run value by value, and ggml's branches are lane masks.
 */

/** Sub-blocks the module holds at once (32 f32 values and 32 f32 weights each). */
export const CAPACITY: i32 = 256;
export const X_AT: usize = 0x10000;
export const W_AT: usize = 0x18000;
/** One f32 scale per sub-block (0 for an all-zero one). */
export const SCALE_AT: usize = 0x20000;
// Scratch: a quad's values and weights transposed (v128 × 32 each: vector i is value i of 4 sub-blocks).
const XT_AT: usize = 0x20400;
const WT_AT: usize = 0x20600;
/** The end of the layout: the host grows the memory to hold it. */
export const END: usize = 0x20800;

const SUB: i32 = 32;
/** ggml's GROUP_MAX_EPS. */
const EPS: f32 = 1e-15;
/** The smallest IQ4_NL value (kvalues_iq4nl[0]). */
const V0: f32 = -127;
/** Scale trials on each side of the starting one (ggml's ntry). */
const NTRY: i32 = 7;

// The 16 IQ4_NL values (kvalues_iq4nl), as bytes for i8x16.swizzle, and below their midpoints:
// literals, because V8 does not hoist a table's loads out of the search's loops (read from memory
// they cost 40% of the speed). They are iq-tables.ts's IQ4NL_VALUES: test/core/wasm/iq4-search.test.ts
// rounds values at every midpoint of that table against llama.cpp, so a drift here fails it.
const VALUES = i8x16(-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113);

/**
 * The IQ4_NL values nearest to 4 lanes, as ggml's best_index_int8 picks them: the lower of two
 * neighbours only when x is strictly below their midpoint, so the index is 15 less the midpoints
 * x is below (a NaN is below none: index 15, as there). Midpoints are halves, exact in f32.
 */
@inline function nearestValues(x: v128): v128 {
  let idx = i32x4.splat(15);
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-115.5)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-93.5)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-74)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-57)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-42)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-28.5)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-16)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(-4.5)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(7)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(19)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(31.5)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(45.5)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(61)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(79)));
  idx = i32x4.add(idx, f32x4.lt(x, f32x4.splat(101)));
  // The value byte lands in each lane's low byte; shifting up and back sign-extends it.
  const q = i32x4.shr_s(i32x4.shl(i8x16.swizzle(VALUES, idx), 24), 24);
  return f32x4.convert_i32x4_s(q);
}

// Σ w·q·x and Σ w·q² of the last gridSums call, per lane.
let sumqx: v128 = f32x4.splat(0);
let sumq2: v128 = f32x4.splat(0);

/** The sums of the quad's values mapped to their nearest IQ4_NL values at inverse scales `id` (per lane). */
@inline function gridSums(id: v128): void {
  let sx = f32x4.splat(0);
  let s2 = f32x4.splat(0);
  for (let i = 0; i < SUB; i++) {
    const o = <usize>i << 4;
    const x = v128.load(XT_AT + o);
    const q = nearestValues(f32x4.mul(id, x));
    const wq = f32x4.mul(v128.load(WT_AT + o), q);
    sx = f32x4.add(sx, f32x4.mul(wq, x));
    s2 = f32x4.add(s2, f32x4.mul(wq, q));
  }
  sumqx = sx;
  sumq2 = s2;
}

/** Writes the scales of sub-blocks 4h .. 4h + 3 (lane j: sub-block 4h + j) to SCALE_AT. */
function searchQuad(h: i32): void {
  const base = <usize>h << 9; // 4 sub-blocks × 32 values × 4 bytes
  for (let j = 0; j < 4; j++) {
    for (let i = 0; i < SUB; i++) {
      const from = base + (<usize>j << 7) + (<usize>i << 2);
      const to = (<usize>i << 4) + (<usize>j << 2);
      store<f32>(XT_AT + to, load<f32>(X_AT + from));
      store<f32>(WT_AT + to, load<f32>(W_AT + from));
    }
  }
  // The value of largest magnitude, the first of equals (NaN never counts).
  let amax = f32x4.splat(0);
  let max = f32x4.splat(0);
  for (let i = 0; i < SUB; i++) {
    const x = v128.load(XT_AT + (<usize>i << 4));
    const a = f32x4.abs(x);
    const larger = f32x4.gt(a, amax);
    amax = v128.bitselect(a, amax, larger);
    max = v128.bitselect(x, max, larger);
  }
  let d = f32x4.div(f32x4.neg(max), f32x4.splat(V0));
  gridSums(f32x4.div(f32x4.splat(1), d));
  d = v128.and(f32x4.div(sumqx, sumq2), f32x4.gt(sumq2, f32x4.splat(0)));
  let best = f32x4.mul(d, sumqx);
  for (let itry = -NTRY; itry <= NTRY; itry++) {
    gridSums(f32x4.div(f32x4.splat(<f32>itry + V0), max));
    const better = v128.and(f32x4.gt(sumq2, f32x4.splat(0)), f32x4.gt(f32x4.mul(sumqx, sumqx), f32x4.mul(best, sumq2)));
    d = v128.bitselect(f32x4.div(sumqx, sumq2), d, better);
    best = v128.bitselect(f32x4.mul(d, sumqx), best, better);
  }
  // A sub-block whose largest magnitude is below EPS is all zero: scale 0.
  v128.store(SCALE_AT + (<usize>h << 4), v128.andnot(d, f32x4.lt(f32x4.abs(max), f32x4.splat(EPS))));
}

/**
 * The scales of the `count` sub-blocks at X_AT (weights at W_AT), to SCALE_AT. A last partial
 * quad also searches the slots beyond `count`, whatever they hold: lanes never mix.
 */
export function searchScales(count: i32): void {
  for (let h = 0; h < (count + 3) >> 2; h++) searchQuad(h);
}
