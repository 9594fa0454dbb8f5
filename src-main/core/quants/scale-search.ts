/**
 * Scale searches shared by the block encoders: given a group of values (and optionally a weight per
 * value), find the scale (and for asymmetric formats the offset) whose rounded integer levels
 * reproduce the group with the least weighted squared error, the way ggml-quants.c does.
 *
 * Every function follows ggml's f32 arithmetic step by step (Math.fround after each operation,
 * sums in the same order), so for the same input it picks the same levels as llama.cpp, and an
 * encoder built on them writes the same bytes. The two hottest searches (fitScaleAndMin,
 * fitSymmetricScale) run in WebAssembly (assembly/scale-search.ts), with the same operations in
 * the same order. Platform-free.
 *
 * Levels are written to `L` (a Uint8Array) at `lAt`; values are read from `x` at `xAt`, weights
 * from `w` at `wAt`. Nothing here allocates: scratch space is module-level and sized for groups of
 * up to MAX_GROUP values.
 */

import { scaleSearch, type ScaleSearch } from '../wasm/scale-search';

const fr = Math.fround;

/** ggml's GROUP_MAX_EPS: a group whose largest magnitude is below this is treated as all zero. */
export const GROUP_MAX_EPS = fr(1e-15);

/** The largest group any search accepts. */
export const MAX_GROUP = 256;

const F01 = fr(0.1);

/** ggml's nearest_int: round an f32 to the nearest integer, ties to even (|v| < 2^22); NaN gives 0 as there. */
export function nearestInt(v: number): number {
  return (Math.fround(v + 12582912) - 12582912) | 0;
}

/**
 * Round to the nearest integer, halves to even, as ggml's nearest_int does for an f32 argument
 * (|v| < 2^22). Adding and removing 1.5·2^52 rounds a double to an integer with ties to even.
 */
export function roundHalfEven(v: number): number {
  return (v + 6755399441055744 - 6755399441055744) | 0;
}

/** Σ x² over x[xAt .. xAt+n), f32, in order: the spread σ² the importance weights are built on. */
export function sumOfSquares(x: Float32Array, xAt: number, n: number): number {
  let s = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xAt + i]!;
    s = fr(s + fr(v * v));
  }
  return s;
}

/**
 * out[outAt + i] = qw[qwAt + i] · sqrt(σ² + x[xAt + i]²) for i < n: ggml's weighting of each value
 * by the importance matrix; returns the weights' f32 sum, in order.
 */
export function importanceWeights(
  x: Float32Array,
  xAt: number,
  qw: Float32Array,
  qwAt: number,
  n: number,
  sigma2: number,
  out: Float32Array,
  outAt: number,
): number {
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xAt + i]!;
    const w = fr(qw[qwAt + i]! * fr(Math.sqrt(fr(sigma2 + fr(v * v)))));
    out[outAt + i] = w;
    sum = fr(sum + w);
  }
  return sum;
}

/**
 * The value of largest magnitude among x[xAt .. xAt+n), sign kept (the first of equals; 0 when all
 * are zero or NaN): the `max` ggml's symmetric searches scale by.
 */
export function signedAbsMax(x: Float32Array, xAt: number, n: number): number {
  let amax = 0;
  let max = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xAt + i]!;
    const a = Math.abs(v);
    if (a > amax) {
      amax = a;
      max = v;
    }
  }
  return max;
}

/**
 * This thread's search with the group's n values (and weights, when given) copied into its memory.
 * Element loops rather than set(subarray): a group is small, and a view per call would allocate.
 */
function groupSearch(n: number, x: Float32Array, xAt: number, w: Float32Array | null, wAt: number): ScaleSearch {
  const search = scaleSearch();
  const gx = search.x;
  for (let i = 0; i < n; i++) gx[i] = x[xAt + i]!;
  if (w) {
    const gw = search.w;
    for (let i = 0; i < n; i++) gw[i] = w[wAt + i]!;
  }
  return search;
}

/**
 * Symmetric levels in [-nmax, nmax-1] (written as level + nmax) for the group, with one scale:
 * value ≈ scale · level. Starts from the level range spanned by the largest-magnitude value, tries
 * 18 nearby stretches of it (±0.1…0.9 of a level) and keeps the one whose least-squares scale
 * explains the most weighted energy. Weights default to x². Returns the scale (0 for an all-zero
 * group, all levels nmax-offset 0). ggml: make_qx_quants(n, nmax, x, L, rmse_type = 1, qw).
 * Runs in WebAssembly (assembly/scale-search.ts); n is a multiple of 4.
 */
export function fitSymmetricScale(
  n: number,
  nmax: number,
  x: Float32Array,
  xAt: number,
  L: Uint8Array,
  lAt: number,
  w: Float32Array | null,
  wAt: number,
): number {
  const search = groupSearch(n, x, xAt, w, wAt);
  const scale = search.fitSymmetricScale(n, nmax, w ? 1 : 0);
  const levels = search.levels;
  for (let i = 0; i < n; i++) L[lAt + i] = levels[i]!;
  return scale;
}

/**
 * Levels in [0, nmax] with a scale and an offset: value ≈ scale · level − min, min ≥ 0 (the
 * offset is stored as a non-negative `min`, written to `mins[minAt]`). Starts from the range
 * [min(x, 0), max(x)], then tries nstep + 1 stretches of the level range (nmax + rmin + rdelta·k),
 * each with the weighted least-squares scale and offset for its levels, and keeps the one with the
 * least weighted error (absolute error when `useMad`, squared otherwise). Weights default to x².
 * Returns the scale. ggml: make_qkx2_quants (weights given) and make_qkx3_quants (weights
 * optional), which differ only in that default.
 *
 * It runs in WebAssembly (assembly/scale-search.ts), where f32 arithmetic is native: the search
 * is most of an encoder's time, and Math.fround chains cost several times ggml's f32 operations.
 */
export function fitScaleAndMin(
  n: number,
  nmax: number,
  x: Float32Array,
  xAt: number,
  w: Float32Array | null,
  wAt: number,
  L: Uint8Array,
  lAt: number,
  mins: Float32Array,
  minAt: number,
  rmin: number,
  rdelta: number,
  nstep: number,
  useMad: boolean,
): number {
  const search = groupSearch(n, x, xAt, w, wAt);
  const scale = search.fitScaleAndMin(n, nmax, w ? 1 : 0, rmin, rdelta, nstep, useMad ? 1 : 0);
  const levels = search.levels;
  for (let i = 0; i < n; i++) L[lAt + i] = levels[i]!;
  mins[minAt] = search.min[0]!;
  return scale;
}

/**
 * Levels in [0, nmax] for non-negative values (block scales or mins), value ≈ scale · level, with
 * weights: tries the scale set by the largest value and 8 stretches of it (±0.1…0.4 of a level),
 * keeps the one with the least weighted squared error, then moves single levels (up to 5 sweeps)
 * while that raises the explained weighted energy. Returns the least-squares scale for the final
 * levels (0 for an all-zero group). ggml: make_qp_quants(n, nmax, x, L, quant_weights).
 */
export function fitUnsignedScale(
  n: number,
  nmax: number,
  x: Float32Array,
  xAt: number,
  L: Uint8Array,
  lAt: number,
  w: Float32Array,
  wAt: number,
): number {
  let max = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xAt + i]!;
    max = max > v ? max : v;
  }
  if (max < GROUP_MAX_EPS) {
    L.fill(0, lAt, lAt + n);
    return 0;
  }
  let iscale = fr(nmax / max);
  for (let i = 0; i < n; i++) L[lAt + i] = roundHalfEven(fr(iscale * x[xAt + i]!));
  const scale = fr(1 / iscale);
  let bestMse = 0;
  for (let i = 0; i < n; i++) {
    const diff = fr(x[xAt + i]! - fr(scale * L[lAt + i]!));
    bestMse = fr(bestMse + fr(fr(w[wAt + i]! * diff) * diff));
  }
  for (let is = -4; is <= 4; is++) {
    if (is === 0) continue;
    const iscaleIs = fr(fr(fr(F01 * is) + nmax) / max);
    const scaleIs = fr(1 / iscaleIs);
    let mse = 0;
    for (let i = 0; i < n; i++) {
      let l = roundHalfEven(fr(iscaleIs * x[xAt + i]!));
      if (l > nmax) l = nmax;
      const diff = fr(x[xAt + i]! - fr(scaleIs * l));
      mse = fr(mse + fr(fr(w[wAt + i]! * diff) * diff));
    }
    if (mse < bestMse) {
      bestMse = mse;
      iscale = iscaleIs;
    }
  }
  let sumlx = 0;
  let suml2 = 0;
  for (let i = 0; i < n; i++) {
    const v = x[xAt + i]!;
    let l = roundHalfEven(fr(iscale * v));
    if (l > nmax) l = nmax;
    L[lAt + i] = l;
    const wi = w[wAt + i]!;
    sumlx = fr(sumlx + fr(fr(wi * v) * l));
    suml2 = fr(suml2 + fr(fr(wi * l) * l));
  }
  for (let itry = 0; itry < 5; itry++) {
    let changed = 0;
    for (let i = 0; i < n; i++) {
      const v = x[xAt + i]!;
      const wi = w[wAt + i]!;
      const li = L[lAt + i]!;
      let slx = fr(sumlx - fr(fr(wi * v) * li));
      let sl2 = fr(suml2 - fr(fr(wi * li) * li));
      if (slx > 0 && sl2 > 0) {
        let nl = roundHalfEven(fr(fr(v * sl2) / slx));
        if (nl > nmax) nl = nmax;
        if (nl !== li) {
          slx = fr(slx + fr(fr(wi * v) * nl));
          sl2 = fr(sl2 + fr(fr(wi * nl) * nl));
          if (fr(fr(slx * slx) * suml2) > fr(fr(sumlx * sumlx) * sl2)) {
            L[lAt + i] = nl;
            sumlx = slx;
            suml2 = sl2;
            changed++;
          }
        }
      }
    }
    if (changed === 0) break;
  }
  return suml2 > 0 ? fr(sumlx / suml2) : 0;
}
