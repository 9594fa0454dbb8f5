/**
 * The scale-and-min search of the block encoders (ggml's make_qkx2_quants / make_qkx3_quants) in
 * WebAssembly SIMD, where f32 arithmetic is native: src-main/core/quants/scale-search.ts is the
 * host side (it copies a group into X_AT/W_AT, calls fitScaleAndMin and reads the levels at L_AT
 * and the min at MIN_AT). Compiled by `npm run build:wasm` into src-main/core/wasm/scale-search.wasm.ts.
 *
 * Exactness: every f32 operation is one IEEE operation, as in ggml's C (no contraction), in
 * ggml's order; a product computed in a SIMD lane is the same operation as the scalar one. The f64
 * shortcuts (which tries to skip) only leave out work whose outcome they prove.
 */

/** The largest group the search accepts (a multiple of 4: the search runs 4 values at a time). */
export const MAX_GROUP: i32 = 256;

// The memory layout: each region starts where the one before ends, from 64 KiB (below it, the data
// segment and the stack), and every size is a multiple of 16 so that v128 loads stay aligned.
const GROUP_F32: usize = <usize>MAX_GROUP << 2;
const GROUP_F64: usize = <usize>MAX_GROUP << 3;
/** A lane search's region: 32 vectors of four lanes. */
const LANE_VECTORS: usize = 32 << 4;
/** The smallest region, for one f32 or 8 bytes. */
const SMALL: usize = 16;

/** The host's group: values (f32), weights (f32), levels out (u8), the min out (f32). */
export const X_AT: usize = 0x10000;
export const W_AT: usize = X_AT + GROUP_F32;
export const L_AT: usize = W_AT + GROUP_F32;
export const MIN_AT: usize = L_AT + <usize>MAX_GROUP;
/** A super-block's sub-block scales and mins (f32 × 16 each), from the *SubBlocks searches. */
export const SCALES_AT: usize = MIN_AT + SMALL;
export const MINS_AT: usize = SCALES_AT + 16 * 4;
/** A Q4_K/Q5_K block's stored 6-bit sub-block scales and mins (u8 × 8 each), for requantSubBlocks. */
export const SCQ_AT: usize = MINS_AT + 16 * 4;
export const MQ_AT: usize = SCQ_AT + SMALL;
/** Q4_K/Q5_K's packed low nibbles of the block's levels (128 bytes), from packNibbles. */
export const NIBBLES_AT: usize = MQ_AT + SMALL;
// Scratch: values shifted by the current offset (f32), the try's levels (i32), weights and
// weights × values in f64 (for the bound).
const XS_AT: usize = NIBBLES_AT + 128;
const AUX_AT: usize = XS_AT + GROUP_F32;
const WD_AT: usize = AUX_AT + GROUP_F32;
const WXD_AT: usize = WD_AT + GROUP_F64;
// The symmetric search's weights, weights × values and f32 prefix sums Σw·x·l, Σw·l².
const WS_AT: usize = WXD_AT + GROUP_F64;
const WX_AT: usize = WS_AT + GROUP_F32;
const PX_AT: usize = WX_AT + GROUP_F32;
const PS_AT: usize = PX_AT + GROUP_F32;
// The lane searches' scratch, four groups side by side (lane g: group g's value i in vector i):
// values, weights, values shifted by the min, this try's levels, the best levels.
const TX_AT: usize = PS_AT + GROUP_F32;
const TW_AT: usize = TX_AT + LANE_VECTORS;
const TXS_AT: usize = TW_AT + LANE_VECTORS;
const TL_AT: usize = TXS_AT + LANE_VECTORS;
const TBEST_AT: usize = TL_AT + LANE_VECTORS;
/** A Q3_K block's packed bits from finishQ3: hmask (32 bytes), then qs (64 bytes), as in the block. */
export const Q3_BITS_AT: usize = TBEST_AT + LANE_VECTORS;
/** The end of the layout: the host grows the memory to reach it. */
export const END: usize = Q3_BITS_AT + 96;

/** ggml's GROUP_MAX_EPS: a group whose largest magnitude is below it is all zero. */
const GROUP_MAX_EPS: f32 = 1e-15;

/** Relative margin for rejecting a try from f64 estimates (far above f32 rounding). */
const REJECT_MARGIN: f64 = 1e-3;

/** ggml's nearest_int: add 1.5·2^23 in f32 and read the integer off the mantissa. */
@inline function nearestInt(v: f32): i32 {
  return (reinterpret<i32>(v + <f32>12582912.0) & 0x007fffff) - 0x00400000;
}

/** nearest_int of 4 lanes, clamped to [0, nmax]. */
@inline function levels4(v: v128, nmax: v128): v128 {
  const l = i32x4.sub(v128.and(f32x4.add(v, f32x4.splat(12582912.0)), i32x4.splat(0x007fffff)), i32x4.splat(0x00400000));
  return i32x4.min_s(i32x4.max_s(l, i32x4.splat(0)), nmax);
}

@inline function clampLevel(l: i32, nmax: i32): i32 {
  return l < 0 ? 0 : l > nmax ? nmax : l;
}

/** Byte offset of value i (and of group i/4's first value) in an f32 or i32 array. */
@inline function at4(i: i32): usize {
  return <usize>i << 2;
}

/** XS = x − min, 4 values at a time. */
@inline function shift(x: usize, n: i32, min: f32): void {
  const m = f32x4.splat(min);
  for (let i = 0; i < n; i += 4) v128.store(XS_AT + at4(i), f32x4.sub(v128.load(x + at4(i)), m));
}

/**
 * Levels in [0, nmax] with a scale and a min (value ≈ scale · level − min) for the n values at x
 * (n a multiple of 4) weighted by w (by x² when `weighted` is false, written there): returns the
 * scale, writes the levels to lv and −min to minOut. ggml: make_qkx2_quants / make_qkx3_quants.
 *
 * Each try's levels come 4 at a time with no branch; a try whose levels are the previous try's
 * cannot win and is skipped, and one whose least-squares bound (f64) is clearly above the best
 * error so far is rejected without ggml's f32 sums. Only f32 work whose result can matter is done,
 * in ggml's order (sums value by value, products lane by lane: the same IEEE operations).
 */
@inline function search(x: usize, w: usize, lv: usize, minOut: usize, n: i32, nmax: i32, weighted: bool, rmin: f32, rdelta: f32, nstep: i32, useMad: bool): f32 {
  if (!weighted) {
    for (let i = 0; i < n; i += 4) {
      const v = v128.load(x + at4(i));
      v128.store(w + at4(i), f32x4.mul(v, v));
    }
  }
  let min = load<f32>(x);
  let max = min;
  let sumW = load<f32>(w);
  let sumX: f32 = sumW * min;
  for (let i = 1; i < n; i++) {
    const v = load<f32>(x + at4(i));
    if (v < min) min = v;
    if (v > max) max = v;
    const wi = load<f32>(w + at4(i));
    sumW += wi;
    sumX += wi * v;
  }
  if (min > 0) min = 0;
  // ggml's test: a group starting with NaN (min and max stay NaN) goes through the search.
  if (max <= min) {
    for (let i = 0; i < n; i++) store<u8>(lv + <usize>i, 0);
    store<f32>(minOut, -min);
    return 0;
  }
  shift(x, n, min);
  let range: f32 = max - min;
  let iscale: f32 = <f32>nmax / range;
  let scale: f32 = <f32>1 / iscale;
  let bestErr: f32 = 0;
  for (let i = 0; i < n; i++) {
    const l = clampLevel(nearestInt(iscale * load<f32>(XS_AT + at4(i))), nmax);
    store<u8>(lv + <usize>i, <u8>l);
    let diff: f32 = scale * <f32>l + min - load<f32>(x + at4(i));
    diff = useMad ? Mathf.abs(diff) : diff * diff;
    bestErr += load<f32>(w + at4(i)) * diff;
  }
  if (nstep < 1) {
    store<f32>(minOut, -min);
    return scale;
  }
  // Σw, Σw·x, Σw·x² in f64 for the bound, and each value's w and w·x in f64.
  let dW: f64 = 0;
  let dX: f64 = 0;
  let dXX: f64 = 0;
  for (let i = 0; i < n; i++) {
    const wi = <f64>load<f32>(w + at4(i));
    const xi = <f64>load<f32>(x + at4(i));
    store<f64>(WD_AT + (<usize>i << 3), wi);
    store<f64>(WXD_AT + (<usize>i << 3), wi * xi);
    dW += wi;
    dX += wi * xi;
    dXX += wi * xi * xi;
  }
  const maxAbs: f64 = Math.max(-<f64>min, Math.abs(<f64>max));
  const nmax4 = i32x4.splat(nmax);
  for (let i = 0; i < n; i += 4) v128.store(AUX_AT + at4(i), i32x4.splat(0));
  for (let is = 0; is <= nstep; is++) {
    iscale = (rmin + rdelta * <f32>is + <f32>nmax) / range;
    const isc = f32x4.splat(iscale);
    // The try's levels, whether any differs from the previous try's, and (f64, any order: only
    // the bound reads them) Σw·l, Σw·l², Σw·x·l.
    let diff = i32x4.splat(is == 0 ? 1 : 0);
    let sl = f64x2.splat(0);
    let sl2 = f64x2.splat(0);
    let sxl = f64x2.splat(0);
    for (let i = 0; i < n; i += 4) {
      const l = levels4(f32x4.mul(isc, v128.load(XS_AT + at4(i))), nmax4);
      diff = v128.or(diff, v128.xor(l, v128.load(AUX_AT + at4(i))));
      v128.store(AUX_AT + at4(i), l);
      if (!useMad) {
        const lo = f64x2.convert_low_i32x4_s(l);
        const hi = f64x2.convert_low_i32x4_s(i32x4.shuffle(l, l, 2, 3, 0, 1));
        const wlo = f64x2.mul(v128.load(WD_AT + (<usize>i << 3)), lo);
        const whi = f64x2.mul(v128.load(WD_AT + (<usize>i << 3), 16), hi);
        sl = f64x2.add(sl, f64x2.add(wlo, whi));
        sl2 = f64x2.add(sl2, f64x2.add(f64x2.mul(wlo, lo), f64x2.mul(whi, hi)));
        sxl = f64x2.add(sxl, f64x2.add(f64x2.mul(v128.load(WXD_AT + (<usize>i << 3)), lo), f64x2.mul(v128.load(WXD_AT + (<usize>i << 3), 16), hi)));
      }
    }
    if (!v128.any_true(diff)) continue;
    if (!useMad) {
      // A lower bound on the squared error any scale and offset reach with these levels (the
      // unconstrained least-squares fit) less f32 rounding: clearly above the best, no win.
      const dl = f64x2.extract_lane(sl, 0) + f64x2.extract_lane(sl, 1);
      const dl2 = f64x2.extract_lane(sl2, 0) + f64x2.extract_lane(sl2, 1);
      const dxl = f64x2.extract_lane(sxl, 0) + f64x2.extract_lane(sxl, 1);
      const det = dW * dl2 - dl * dl;
      if (det > 1e-4 * dW * dl2) {
        const s0 = (dW * dxl - dX * dl) / det;
        const m0 = (dl2 * dX - dl * dxl) / det;
        const floor = dXX - s0 * dxl - m0 * dX - 1e-12 * dXX;
        // ggml's f32 differences s·l + m − x are each off by a few ulps of the largest term.
        const noise = (1.0 / <f64>(1 << 22)) * (2 * Math.abs(s0) * <f64>nmax + Math.abs(m0) + 2 * maxAbs) * Math.sqrt(dW);
        if (floor > 0) {
          const lower = Math.sqrt(floor) - noise;
          if (lower > 0 && lower * lower > <f64>bestErr * (1 + REJECT_MARGIN)) continue;
        }
      }
    }
    // ggml's f32 sums, value by value.
    let sumL: f32 = 0;
    let sumL2: f32 = 0;
    let sumXL: f32 = 0;
    for (let i = 0; i < n; i += 4) {
      const lf = f32x4.convert_i32x4_s(v128.load(AUX_AT + at4(i)));
      const wl = f32x4.mul(v128.load(w + at4(i)), lf);
      const wl2 = f32x4.mul(wl, lf);
      const wxl = f32x4.mul(wl, v128.load(x + at4(i)));
      sumL += f32x4.extract_lane(wl, 0);
      sumL2 += f32x4.extract_lane(wl2, 0);
      sumXL += f32x4.extract_lane(wxl, 0);
      sumL += f32x4.extract_lane(wl, 1);
      sumL2 += f32x4.extract_lane(wl2, 1);
      sumXL += f32x4.extract_lane(wxl, 1);
      sumL += f32x4.extract_lane(wl, 2);
      sumL2 += f32x4.extract_lane(wl2, 2);
      sumXL += f32x4.extract_lane(wxl, 2);
      sumL += f32x4.extract_lane(wl, 3);
      sumL2 += f32x4.extract_lane(wl2, 3);
      sumXL += f32x4.extract_lane(wxl, 3);
    }
    const D: f32 = sumW * sumL2 - sumL * sumL;
    if (D > 0) {
      let thisScale: f32 = (sumW * sumXL - sumX * sumL) / D;
      let thisMin: f32 = (sumL2 * sumX - sumL * sumXL) / D;
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = sumXL / sumL2;
      }
      const s4 = f32x4.splat(thisScale);
      const m4 = f32x4.splat(thisMin);
      let err: f32 = 0;
      for (let i = 0; i < n; i += 4) {
        const lf = f32x4.convert_i32x4_s(v128.load(AUX_AT + at4(i)));
        let d = f32x4.sub(f32x4.add(f32x4.mul(s4, lf), m4), v128.load(x + at4(i)));
        d = useMad ? f32x4.abs(d) : f32x4.mul(d, d);
        const e = f32x4.mul(v128.load(w + at4(i)), d);
        err += f32x4.extract_lane(e, 0);
        err += f32x4.extract_lane(e, 1);
        err += f32x4.extract_lane(e, 2);
        err += f32x4.extract_lane(e, 3);
      }
      if (err < bestErr) {
        for (let i = 0; i < n; i++) store<u8>(lv + <usize>i, load<u8>(AUX_AT + at4(i)));
        bestErr = err;
        scale = thisScale;
        if (thisMin != min) {
          min = thisMin;
          range = max - min;
          shift(x, n, min);
        }
      }
    }
  }
  store<f32>(minOut, -min);
  return scale;
}

/** The search on the host's group: X_AT, W_AT → L_AT, MIN_AT. */
export function fitScaleAndMin(n: i32, nmax: i32, weighted: bool, rmin: f32, rdelta: f32, nstep: i32, useMad: bool): f32 {
  return search(X_AT, W_AT, L_AT, MIN_AT, n, nmax, weighted, rmin, rdelta, nstep, useMad);
}

/**
 * quantize_row_q4_K_ref / q5_K_ref's sub-blocks: the 256 values at X_AT in 8 groups of 32, each
 * weighted by av_x + |x| (av_x: the group's root mean square, f32) and searched, four groups at a
 * time (searchLanes): levels to L_AT, scales to SCALES_AT, −mins to MINS_AT.
 */
export function fitSubBlocksPlain(nmax: i32, rmin: f32, rdelta: f32, nstep: i32): void {
  for (let g = 0; g < 8; g += 4) {
    transposeIn(X_AT + (<usize>g << 7), TX_AT, 32);
    let sumX2 = f32x4.splat(0);
    for (let i = 0; i < 32; i++) {
      const v = v128.load(TX_AT + lane4(i));
      sumX2 = f32x4.add(sumX2, f32x4.mul(v, v));
    }
    const av = f32x4.sqrt(f32x4.div(sumX2, f32x4.splat(32)));
    for (let i = 0; i < 32; i++) v128.store(TW_AT + lane4(i), f32x4.add(av, f32x4.abs(v128.load(TX_AT + lane4(i)))));
    searchLanes(32, nmax, rmin, rdelta, nstep, false, L_AT + (<usize>g << 5), SCALES_AT + (<usize>g << 2), MINS_AT + (<usize>g << 2));
  }
}

/**
 * The scale-and-min search over `count` groups of n values (count a multiple of 4, n at most 32)
 * at X_AT, weighted by W_AT, four groups at a time (searchLanes): levels to L_AT, scales to
 * SCALES_AT, −mins to MINS_AT. Q2_K's 16 groups of 16, Q4_K/Q5_K's 8 of 32 with importance weights.
 */
export function fitScaleAndMinGroups(count: i32, n: i32, nmax: i32, rmin: f32, rdelta: f32, nstep: i32, useMad: bool): void {
  for (let g = 0; g < count; g += 4) {
    const at = <usize>(g * n);
    transposeIn(X_AT + (at << 2), TX_AT, n);
    transposeIn(W_AT + (at << 2), TW_AT, n);
    searchLanes(n, nmax, rmin, rdelta, nstep, useMad, L_AT + at, SCALES_AT + (<usize>g << 2), MINS_AT + (<usize>g << 2));
  }
}

/** Byte offset of vector i in the lane scratch (one v128 per value index). */
@inline function lane4(i: i32): usize {
  return <usize>i << 4;
}

/** Four groups of n f32 values, one after another at `from`, to n vectors at `to` (lane g: group g). */
@inline function transposeIn(from: usize, to: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    for (let g = 0; g < 4; g++) store<f32>(to + lane4(i) + (<usize>g << 2), load<f32>(from + at4(g * n + i)));
  }
}

/** The levels of four groups, n vectors of i32 at `from`, plus `offset`, to n bytes per group at `to`. */
@inline function transposeLevelsOut(from: usize, to: usize, n: i32, offset: i32): void {
  for (let i = 0; i < n; i++) {
    for (let g = 0; g < 4; g++) store<u8>(to + <usize>(g * n + i), <u8>(load<i32>(from + lane4(i) + (<usize>g << 2)) + offset));
  }
}

/** |d| or d², lane by lane: the error measure of the scale-and-min search. */
@inline function errorOf(d: v128, useMad: bool): v128 {
  return useMad ? f32x4.abs(d) : f32x4.mul(d, d);
}

/**
 * `search` (make_qkx2_quants) on four groups of n values at once, one per lane: values at TX_AT
 * and weights at TW_AT (transposeIn's layout) → levels (n bytes per group) to lv, scales and −mins
 * (f32 × 4) to scalesOut and minsOut. Each lane runs ggml's f32 operations in ggml's order: sums
 * value by value, every branch a lane mask. With no shortcut to take, every try runs in full.
 */
@inline function searchLanes(n: i32, nmax: i32, rmin: f32, rdelta: f32, nstep: i32, useMad: bool, lv: usize, scalesOut: usize, minsOut: usize): void {
  const zero = f32x4.splat(0);
  let min = v128.load(TX_AT);
  let max = min;
  let sumW = v128.load(TW_AT);
  let sumX = f32x4.mul(sumW, min);
  for (let i = 1; i < n; i++) {
    const v = v128.load(TX_AT + lane4(i));
    min = v128.bitselect(v, min, f32x4.lt(v, min));
    max = v128.bitselect(v, max, f32x4.gt(v, max));
    const w = v128.load(TW_AT + lane4(i));
    sumW = f32x4.add(sumW, w);
    sumX = f32x4.add(sumX, f32x4.mul(w, v));
  }
  min = v128.bitselect(zero, min, f32x4.gt(min, zero));
  // Lanes whose group has no spread (ggml returns early for them) end with all levels 0, scale 0.
  const keep = v128.not(f32x4.le(max, min));
  let range = f32x4.sub(max, min);
  let iscale = f32x4.div(f32x4.splat(<f32>nmax), range);
  let scale = f32x4.div(f32x4.splat(1), iscale);
  const nmax4 = i32x4.splat(nmax);
  let bestErr = zero;
  for (let i = 0; i < n; i++) {
    const x = v128.load(TX_AT + lane4(i));
    const xs = f32x4.sub(x, min);
    v128.store(TXS_AT + lane4(i), xs);
    const l = levels4(f32x4.mul(iscale, xs), nmax4);
    v128.store(TBEST_AT + lane4(i), l);
    const d = f32x4.sub(f32x4.add(f32x4.mul(scale, f32x4.convert_i32x4_s(l)), min), x);
    bestErr = f32x4.add(bestErr, f32x4.mul(v128.load(TW_AT + lane4(i)), errorOf(d, useMad)));
  }
  for (let is = 0; is <= nstep; is++) {
    iscale = f32x4.div(f32x4.splat(rmin + rdelta * <f32>is + <f32>nmax), range);
    let sumL = zero;
    let sumL2 = zero;
    let sumXL = zero;
    for (let i = 0; i < n; i++) {
      const l = levels4(f32x4.mul(iscale, v128.load(TXS_AT + lane4(i))), nmax4);
      v128.store(TL_AT + lane4(i), l);
      const lf = f32x4.convert_i32x4_s(l);
      const wl = f32x4.mul(v128.load(TW_AT + lane4(i)), lf);
      sumL = f32x4.add(sumL, wl);
      sumL2 = f32x4.add(sumL2, f32x4.mul(wl, lf));
      sumXL = f32x4.add(sumXL, f32x4.mul(wl, v128.load(TX_AT + lane4(i))));
    }
    const D = f32x4.sub(f32x4.mul(sumW, sumL2), f32x4.mul(sumL, sumL));
    let thisScale = f32x4.div(f32x4.sub(f32x4.mul(sumW, sumXL), f32x4.mul(sumX, sumL)), D);
    let thisMin = f32x4.div(f32x4.sub(f32x4.mul(sumL2, sumX), f32x4.mul(sumL, sumXL)), D);
    const positive = f32x4.gt(thisMin, zero);
    thisMin = v128.bitselect(zero, thisMin, positive);
    thisScale = v128.bitselect(f32x4.div(sumXL, sumL2), thisScale, positive);
    let err = zero;
    for (let i = 0; i < n; i++) {
      const lf = f32x4.convert_i32x4_s(v128.load(TL_AT + lane4(i)));
      const d = f32x4.sub(f32x4.add(f32x4.mul(thisScale, lf), thisMin), v128.load(TX_AT + lane4(i)));
      err = f32x4.add(err, f32x4.mul(v128.load(TW_AT + lane4(i)), errorOf(d, useMad)));
    }
    const better = v128.and(keep, v128.and(f32x4.gt(D, zero), f32x4.lt(err, bestErr)));
    if (!v128.any_true(better)) continue;
    for (let i = 0; i < n; i++) v128.store(TBEST_AT + lane4(i), v128.bitselect(v128.load(TL_AT + lane4(i)), v128.load(TBEST_AT + lane4(i)), better));
    bestErr = v128.bitselect(err, bestErr, better);
    scale = v128.bitselect(thisScale, scale, better);
    const moved = v128.and(better, f32x4.ne(thisMin, min));
    if (v128.any_true(moved)) {
      // Lanes whose min stays recompute the same values.
      min = v128.bitselect(thisMin, min, moved);
      range = f32x4.sub(max, min);
      for (let i = 0; i < n; i++) v128.store(TXS_AT + lane4(i), f32x4.sub(v128.load(TX_AT + lane4(i)), min));
    }
  }
  for (let i = 0; i < n; i++) v128.store(TBEST_AT + lane4(i), v128.and(v128.load(TBEST_AT + lane4(i)), keep));
  transposeLevelsOut(TBEST_AT, lv, n, 0);
  v128.store(scalesOut, v128.and(scale, keep));
  v128.store(minsOut, f32x4.neg(min));
}

/** Symmetric levels of 4 lanes: nearest_int clamped to [lo, hi]. */
@inline function symmetric4(v: v128, lo: v128, hi: v128): v128 {
  const l = i32x4.sub(v128.and(f32x4.add(v, f32x4.splat(12582912.0)), i32x4.splat(0x007fffff)), i32x4.splat(0x00400000));
  return i32x4.min_s(i32x4.max_s(l, lo), hi);
}

/**
 * ggml's f32 sums Σ(w·x)·l and Σ(w·l)·l over the levels at AUX_AT, value by value from `from`
 * (a multiple of 4; the sums before it are the prefix ones kept at PX_AT/PS_AT), keeping the
 * prefixes. The sums are left in sumLX and sumL2.
 */
let sumLX: f32 = 0;
let sumL2: f32 = 0;
@inline function symmetricSums(n: i32, from: i32): void {
  let slx: f32 = from > 0 ? load<f32>(PX_AT + at4(from - 1)) : 0;
  let sl2: f32 = from > 0 ? load<f32>(PS_AT + at4(from - 1)) : 0;
  for (let i = from; i < n; i += 4) {
    const lf = f32x4.convert_i32x4_s(v128.load(AUX_AT + at4(i)));
    const a = f32x4.mul(v128.load(WX_AT + at4(i)), lf);
    const b = f32x4.mul(f32x4.mul(v128.load(WS_AT + at4(i)), lf), lf);
    slx += f32x4.extract_lane(a, 0);
    sl2 += f32x4.extract_lane(b, 0);
    store<f32>(PX_AT + at4(i), slx);
    store<f32>(PS_AT + at4(i), sl2);
    slx += f32x4.extract_lane(a, 1);
    sl2 += f32x4.extract_lane(b, 1);
    store<f32>(PX_AT + at4(i + 1), slx);
    store<f32>(PS_AT + at4(i + 1), sl2);
    slx += f32x4.extract_lane(a, 2);
    sl2 += f32x4.extract_lane(b, 2);
    store<f32>(PX_AT + at4(i + 2), slx);
    store<f32>(PS_AT + at4(i + 2), sl2);
    slx += f32x4.extract_lane(a, 3);
    sl2 += f32x4.extract_lane(b, 3);
    store<f32>(PX_AT + at4(i + 3), slx);
    store<f32>(PS_AT + at4(i + 3), sl2);
  }
  sumLX = slx;
  sumL2 = sl2;
}

/** Writes the levels at AUX_AT, shifted by nmax, as bytes to lv. */
@inline function putSymmetric(lv: usize, n: i32, nmax: i32): void {
  for (let i = 0; i < n; i++) store<u8>(lv + <usize>i, <u8>(load<i32>(AUX_AT + at4(i)) + nmax));
}

/**
 * Symmetric levels in [−nmax, nmax−1] (written to lv as level + nmax) for the n values at x (n a
 * multiple of 4) weighted by w (x² when not `weighted`), one scale: the levels at the largest
 * magnitude's scale and 18 stretches of it (±0.1…0.9 of a level), the one explaining the most
 * weighted energy kept. Returns the scale. ggml: make_qx_quants(n, nmax, x, L, rmse_type = 1, qw).
 * A try whose levels are the previous try's is skipped (same sums, same outcome), and a try's
 * sums restart from its first changed group of 4 (the f32 prefix sums before it are the same).
 */
@inline function searchSymmetric(x: usize, w: usize, lv: usize, n: i32, nmax: i32, weighted: bool): f32 {
  let max: f32 = 0;
  let amax: f32 = 0;
  for (let i = 0; i < n; i++) {
    const v = load<f32>(x + at4(i));
    const a = Mathf.abs(v);
    if (a > amax) {
      amax = a;
      max = v;
    }
  }
  if (amax < GROUP_MAX_EPS) {
    for (let i = 0; i < n; i++) store<u8>(lv + <usize>i, 0);
    return 0;
  }
  for (let i = 0; i < n; i += 4) {
    const v = v128.load(x + at4(i));
    const wv = weighted ? v128.load(w + at4(i)) : f32x4.mul(v, v);
    v128.store(WS_AT + at4(i), wv);
    v128.store(WX_AT + at4(i), f32x4.mul(wv, v));
  }
  const lo = i32x4.splat(-nmax);
  const hi = i32x4.splat(nmax - 1);
  const isc0 = f32x4.splat(<f32>(-nmax) / max);
  for (let i = 0; i < n; i += 4) v128.store(AUX_AT + at4(i), symmetric4(f32x4.mul(isc0, v128.load(x + at4(i))), lo, hi));
  putSymmetric(lv, n, nmax);
  symmetricSums(n, 0);
  let scale: f32 = sumL2 != 0 ? sumLX / sumL2 : 0;
  let best: f32 = scale * sumLX;
  for (let is = -9; is <= 9; is++) {
    if (is == 0) continue;
    const isc = f32x4.splat(-(<f32>nmax + <f32>0.1 * <f32>is) / max);
    let first = n;
    for (let i = 0; i < n; i += 4) {
      const l = symmetric4(f32x4.mul(isc, v128.load(x + at4(i))), lo, hi);
      if (first == n && v128.any_true(v128.xor(l, v128.load(AUX_AT + at4(i))))) first = i;
      v128.store(AUX_AT + at4(i), l);
    }
    if (first == n) continue;
    symmetricSums(n, first);
    if (sumL2 > 0 && sumLX * sumLX > best * sumL2) {
      putSymmetric(lv, n, nmax);
      scale = sumLX / sumL2;
      best = scale * sumLX;
    }
  }
  return scale;
}

/** The symmetric search on the host's group: X_AT (weights W_AT when `weighted`) → L_AT. */
export function fitSymmetricScale(n: i32, nmax: i32, weighted: bool): f32 {
  return searchSymmetric(X_AT, W_AT, L_AT, n, nmax, weighted);
}

/**
 * The symmetric search over `count` groups of n values at X_AT (W_AT): levels to L_AT, scales to
 * SCALES_AT. Four groups at a time (searchSymmetricLanes) while four remain.
 */
export function fitSymmetricSubBlocks(count: i32, n: i32, nmax: i32, weighted: bool): void {
  let j = 0;
  for (; j + 4 <= count && n <= 32; j += 4) {
    const at = <usize>(j * n);
    transposeIn(X_AT + (at << 2), TX_AT, n);
    if (weighted) transposeIn(W_AT + (at << 2), TW_AT, n);
    searchSymmetricLanes(n, nmax, weighted, L_AT + at, SCALES_AT + (<usize>j << 2));
  }
  for (; j < count; j++) {
    const at = <usize>(j * n);
    store<f32>(SCALES_AT + (<usize>j << 2), searchSymmetric(X_AT + (at << 2), W_AT + (at << 2), L_AT + at, n, nmax, weighted));
  }
}

/**
 * `searchSymmetric` (make_qx_quants, rmse_type 1) on four groups of n values at once, one per
 * lane: values at TX_AT, weights at TW_AT when `weighted` (else x²) → levels + nmax (n bytes per
 * group) to lv, scales (f32 × 4) to scalesOut. Each lane runs ggml's f32 operations in ggml's
 * order, every branch a lane mask.
 */
/**
 * The symmetric searches' start, lane by lane: each group's value of largest magnitude, sign kept
 * (the first of equals), returned; weights (W_AT's when `weighted`, else x²) to TW_AT and weights
 * × values to TXS_AT.
 */
@inline function prepareSymmetricLanes(n: i32, weighted: bool): v128 {
  let max = f32x4.splat(0);
  let amax = max;
  for (let i = 0; i < n; i++) {
    const v = v128.load(TX_AT + lane4(i));
    const a = f32x4.abs(v);
    const larger = f32x4.gt(a, amax);
    amax = v128.bitselect(a, amax, larger);
    max = v128.bitselect(v, max, larger);
    const w = weighted ? v128.load(TW_AT + lane4(i)) : f32x4.mul(v, v);
    v128.store(TW_AT + lane4(i), w);
    v128.store(TXS_AT + lane4(i), f32x4.mul(w, v));
  }
  return max;
}

/** The lanes whose largest magnitude reaches GROUP_MAX_EPS: ggml returns early for the others (all bytes 0, scale 0). */
@inline function searchedLanes(max: v128): v128 {
  return v128.not(f32x4.lt(f32x4.abs(max), f32x4.splat(GROUP_MAX_EPS)));
}

/** Symmetric levels (i32 vectors at `from`) + nmax as bytes to lv; the skipped lanes' bytes 0, as ggml writes them. */
@inline function putSymmetricLanes(from: usize, lv: usize, n: i32, nmax: i32, keep: v128): void {
  const skipped = i32x4.splat(-nmax);
  for (let i = 0; i < n; i++) v128.store(from + lane4(i), v128.bitselect(v128.load(from + lane4(i)), skipped, keep));
  transposeLevelsOut(from, lv, n, nmax);
}

@inline function searchSymmetricLanes(n: i32, nmax: i32, weighted: bool, lv: usize, scalesOut: usize): void {
  const zero = f32x4.splat(0);
  const max = prepareSymmetricLanes(n, weighted);
  const keep = searchedLanes(max);
  const lo = i32x4.splat(-nmax);
  const hi = i32x4.splat(nmax - 1);
  const isc0 = f32x4.div(f32x4.splat(<f32>(-nmax)), max);
  let sumLX = zero;
  let sumL2 = zero;
  for (let i = 0; i < n; i++) {
    const l = symmetric4(f32x4.mul(isc0, v128.load(TX_AT + lane4(i))), lo, hi);
    v128.store(TBEST_AT + lane4(i), l);
    const lf = f32x4.convert_i32x4_s(l);
    sumLX = f32x4.add(sumLX, f32x4.mul(v128.load(TXS_AT + lane4(i)), lf));
    sumL2 = f32x4.add(sumL2, f32x4.mul(f32x4.mul(v128.load(TW_AT + lane4(i)), lf), lf));
  }
  let scale = v128.bitselect(f32x4.div(sumLX, sumL2), zero, f32x4.ne(sumL2, zero));
  let best = f32x4.mul(scale, sumLX);
  for (let is = -9; is <= 9; is++) {
    if (is == 0) continue;
    const isc = f32x4.div(f32x4.splat(-(<f32>nmax + <f32>0.1 * <f32>is)), max);
    sumLX = zero;
    sumL2 = zero;
    for (let i = 0; i < n; i++) {
      const l = symmetric4(f32x4.mul(isc, v128.load(TX_AT + lane4(i))), lo, hi);
      v128.store(TL_AT + lane4(i), l);
      const lf = f32x4.convert_i32x4_s(l);
      sumLX = f32x4.add(sumLX, f32x4.mul(v128.load(TXS_AT + lane4(i)), lf));
      sumL2 = f32x4.add(sumL2, f32x4.mul(f32x4.mul(v128.load(TW_AT + lane4(i)), lf), lf));
    }
    const better = v128.and(keep, v128.and(f32x4.gt(sumL2, zero), f32x4.gt(f32x4.mul(sumLX, sumLX), f32x4.mul(best, sumL2))));
    if (!v128.any_true(better)) continue;
    for (let i = 0; i < n; i++) v128.store(TBEST_AT + lane4(i), v128.bitselect(v128.load(TL_AT + lane4(i)), v128.load(TBEST_AT + lane4(i)), better));
    const s = f32x4.div(sumLX, sumL2);
    scale = v128.bitselect(s, scale, better);
    best = v128.bitselect(f32x4.mul(s, sumLX), best, better);
  }
  putSymmetricLanes(TBEST_AT, lv, n, nmax, keep);
  v128.store(scalesOut, v128.and(scale, keep));
}

/**
 * make_q3_quants (Q3_K without an importance matrix) over `count` groups of n values at X_AT
 * (count a multiple of 4, n at most 32), four groups at a time, one per lane: levels + nmax to
 * L_AT (all bytes 0 for a group whose largest magnitude is below GROUP_MAX_EPS), scales to
 * SCALES_AT. Symmetric levels in [−nmax, nmax−1] weighted by x², rounded at the scale of the
 * largest magnitude, then single levels moved (up to 5 sweeps, value by value) while that raises
 * the explained weighted energy. Each lane runs ggml's f32 operations in ggml's order; a lane that
 * has settled sweeps on unchanged (a sweep with no move leaves the next one nothing to move).
 */
export function fitSymmetricIterativeGroups(count: i32, n: i32, nmax: i32): void {
  for (let g = 0; g < count; g += 4) {
    const at = <usize>(g * n);
    transposeIn(X_AT + (at << 2), TX_AT, n);
    symmetricIterativeLanes(n, nmax, L_AT + at, SCALES_AT + (<usize>g << 2));
  }
}

/** make_q3_quants on four groups of n values at TX_AT, one per lane (fitSymmetricIterativeGroups). */
@inline function symmetricIterativeLanes(n: i32, nmax: i32, lv: usize, scalesOut: usize): void {
  const zero = f32x4.splat(0);
  const max = prepareSymmetricLanes(n, false);
  const keep = searchedLanes(max);
  const lo = i32x4.splat(-nmax);
  const hi = i32x4.splat(nmax - 1);
  const iscale = f32x4.div(f32x4.splat(<f32>(-nmax)), max);
  // The levels (TL_AT) at the largest magnitude's scale, and the sums Σw·x·l, Σw·l².
  let sumLX = zero;
  let sumL2 = zero;
  for (let i = 0; i < n; i++) {
    const l = symmetric4(f32x4.mul(iscale, v128.load(TX_AT + lane4(i))), lo, hi);
    v128.store(TL_AT + lane4(i), l);
    const lf = f32x4.convert_i32x4_s(l);
    sumLX = f32x4.add(sumLX, f32x4.mul(v128.load(TXS_AT + lane4(i)), lf));
    sumL2 = f32x4.add(sumL2, f32x4.mul(f32x4.mul(v128.load(TW_AT + lane4(i)), lf), lf));
  }
  for (let itry = 0; itry < 5; itry++) {
    let moved = i32x4.splat(0);
    for (let i = 0; i < n; i++) {
      const w = v128.load(TW_AT + lane4(i));
      const wx = v128.load(TXS_AT + lane4(i));
      const l = v128.load(TL_AT + lane4(i));
      const lf = f32x4.convert_i32x4_s(l);
      const slx = f32x4.sub(sumLX, f32x4.mul(wx, lf));
      const sl2 = f32x4.sub(sumL2, f32x4.mul(f32x4.mul(w, lf), lf));
      const nl = symmetric4(f32x4.div(f32x4.mul(v128.load(TX_AT + lane4(i)), sl2), slx), lo, hi);
      const nlf = f32x4.convert_i32x4_s(nl);
      const slxNew = f32x4.add(slx, f32x4.mul(wx, nlf));
      const sl2New = f32x4.add(sl2, f32x4.mul(f32x4.mul(w, nlf), nlf));
      const gain = f32x4.gt(f32x4.mul(f32x4.mul(slxNew, slxNew), sumL2), f32x4.mul(f32x4.mul(sumLX, sumLX), sl2New));
      const move = v128.and(v128.and(f32x4.gt(slx, zero), i32x4.ne(nl, l)), v128.and(f32x4.gt(sl2New, zero), gain));
      v128.store(TL_AT + lane4(i), v128.bitselect(nl, l, move));
      sumLX = v128.bitselect(slxNew, sumLX, move);
      sumL2 = v128.bitselect(sl2New, sumL2, move);
      moved = v128.or(moved, move);
    }
    if (!v128.any_true(v128.and(moved, keep))) break;
  }
  putSymmetricLanes(TL_AT, lv, n, nmax, keep);
  const scale = v128.bitselect(f32x4.div(sumLX, sumL2), zero, f32x4.gt(sumL2, zero));
  v128.store(scalesOut, v128.and(scale, keep));
}

/**
 * Requantizes the Q4_K/Q5_K block at X_AT (8 sub-blocks of 32) against its stored scales and mins
 * (SCQ_AT, MQ_AT; f16 super-scales dAll, mAll): nearest_int((x + dm) / d) clamped to [0, nmax], to
 * L_AT; a sub-block whose scale is 0 keeps its levels. As quantize_row_q4_K_ref's last loop.
 */
export function requantSubBlocks(dAll: f32, mAll: f32, nmax: i32): void {
  const nm = i32x4.splat(nmax);
  for (let j = 0; j < 8; j++) {
    const d: f32 = dAll * <f32>load<u8>(SCQ_AT + <usize>j);
    if (d == 0) continue;
    const dm = f32x4.splat(mAll * <f32>load<u8>(MQ_AT + <usize>j));
    const d4 = f32x4.splat(d);
    const x = X_AT + (<usize>j << 7);
    for (let i = 0; i < 32; i += 16) {
      const l0 = levels4(f32x4.div(f32x4.add(v128.load(x + at4(i)), dm), d4), nm);
      const l1 = levels4(f32x4.div(f32x4.add(v128.load(x + at4(i + 4)), dm), d4), nm);
      const l2 = levels4(f32x4.div(f32x4.add(v128.load(x + at4(i + 8)), dm), d4), nm);
      const l3 = levels4(f32x4.div(f32x4.add(v128.load(x + at4(i + 12)), dm), d4), nm);
      v128.store(L_AT + (<usize>j << 5) + <usize>i, i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(l0, l1), i16x8.narrow_i32x4_u(l2, l3)));
    }
  }
}

/**
 * quantize_row_q3_K_ref's last steps for the block at X_AT: each sub-block of 16 whose stored scale
 * d (f32 × 16 at SCALES_AT) is not 0 requantized to nearest_int(x / d) clamped to [−4, 3], + 4 at
 * L_AT (a sub-block with d = 0 keeps its levels there); then the levels' third bits to hmask (bit
 * k of byte m: level m + 32k) and their low 2 bits to qs (byte l of each 32: levels l, l + 32,
 * l + 64, l + 96 of each 128), at Q3_BITS_AT.
 */
export function finishQ3(): void {
  const lo = i32x4.splat(-4);
  const hi = i32x4.splat(3);
  const four = i32x4.splat(4);
  for (let j = 0; j < 16; j++) {
    const d: f32 = load<f32>(SCALES_AT + (<usize>j << 2));
    if (d == 0) continue;
    const d4 = f32x4.splat(d);
    const x = X_AT + (<usize>j << 6);
    const l0 = i32x4.add(symmetric4(f32x4.div(v128.load(x), d4), lo, hi), four);
    const l1 = i32x4.add(symmetric4(f32x4.div(v128.load(x, 16), d4), lo, hi), four);
    const l2 = i32x4.add(symmetric4(f32x4.div(v128.load(x, 32), d4), lo, hi), four);
    const l3 = i32x4.add(symmetric4(f32x4.div(v128.load(x, 48), d4), lo, hi), four);
    v128.store(L_AT + (<usize>j << 4), i8x16.narrow_i16x8_u(i16x8.narrow_i32x4_u(l0, l1), i16x8.narrow_i32x4_u(l2, l3)));
  }
  const one = i8x16.splat(1);
  for (let m: usize = 0; m < 32; m += 16) {
    let bits = i8x16.splat(0);
    for (let k = 0; k < 8; k++) bits = v128.or(bits, i8x16.shl(v128.and(i8x16.shr_u(v128.load(L_AT + m + (<usize>k << 5)), 2), one), k));
    v128.store(Q3_BITS_AT + m, bits);
  }
  const three = i8x16.splat(3);
  for (let j: usize = 0; j < 256; j += 128) {
    for (let l: usize = 0; l < 32; l += 16) {
      const a = v128.and(v128.load(L_AT + j + l), three);
      const b = i8x16.shl(v128.and(v128.load(L_AT + j + l + 32), three), 2);
      const c = i8x16.shl(v128.and(v128.load(L_AT + j + l + 64), three), 4);
      const e = i8x16.shl(v128.and(v128.load(L_AT + j + l + 96), three), 6);
      v128.store(Q3_BITS_AT + 32 + (j >> 2) + l, v128.or(v128.or(a, b), v128.or(c, e)));
    }
  }
}

/**
 * Packs the low nibbles of the 256 levels at L_AT to NIBBLES_AT, Q4_K/Q5_K's qs: byte l of each
 * 32 holds level l (low nibble) and l + 32 (high nibble) of each 64.
 */
export function packNibbles(): void {
  const low = i8x16.splat(0x0f);
  for (let j: usize = 0; j < 256; j += 64) {
    for (let l: usize = 0; l < 32; l += 16) {
      const a = v128.and(v128.load(L_AT + j + l), low);
      const b = v128.and(v128.load(L_AT + j + l + 32), low);
      v128.store(NIBBLES_AT + (j >> 1) + l, v128.or(a, i8x16.shl(b, 4)));
    }
  }
}
