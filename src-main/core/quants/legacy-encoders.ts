/**
 * f32 rows to the original 32-value block quants (Q8_0, Q4_0, Q4_1, Q5_0, Q5_1), choosing the
 * same scales and codes as llama.cpp's ggml_quantize_chunk, so the bytes come out identical.
 *
 * Without an importance matrix llama.cpp uses the plain reference quantizers:
 *   Q8_0          d = max|x| / 127, q = round(x / d)                       (also with an imatrix)
 *   Q4_0 / Q5_0   d = x_maxabs / -8 (resp. -16): the value of largest magnitude maps to code 0
 *   Q4_1 / Q5_1   d = (max - min) / 15 (resp. 31), m = min
 * With an importance matrix each column j of a row gets the weight
 *   w_j = imatrix_j · sqrt(σ² + x_j²),   σ² = mean of x² over the row,
 * and
 *   Q4_0 / Q5_0   try the inverse scales (nmax + k/10) / x_maxabs, k = -9..9, fit the
 *                 least-squares scale for each rounding, keep the one with the smallest weighted
 *                 error;
 *   Q4_1 / Q5_1   start from the min/max grid, then for 37 stretched grids fit scale and offset
 *                 by weighted least squares (offset kept ≤ 0), keep the smallest weighted error.
 *
 * Every arithmetic step rounds to f32 where ggml's C code does (Math.fround), so ties and
 * near-ties fall the same way. Block layouts are in legacy-quants.ts.
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { ggmlTypeByName, type GgmlType } from '../ggml-types';
import { writeF16 } from './half-encode';
import { nearestInt } from './scale-search';

const Q4_0 = ggmlTypeByName('Q4_0')!;
const Q4_1 = ggmlTypeByName('Q4_1')!;
const Q5_0 = ggmlTypeByName('Q5_0')!;
const Q5_1 = ggmlTypeByName('Q5_1')!;
const Q8_0 = ggmlTypeByName('Q8_0')!;

/** Every legacy quant has 32 values per block (the code below relies on it). */
const QK = 32;
for (const t of [Q4_0, Q4_1, Q5_0, Q5_1, Q8_0]) {
  if (t.blockSize !== QK) throw new Error(`legacy-encoders: ${t.name} block size ${t.blockSize}, expected ${QK}`);
}

const fr = Math.fround;
/** ggml's GROUP_MAX_EPS: blocks whose largest magnitude is below it count as all zero. */
const GROUP_MAX_EPS = fr(1e-15);
const F_0_1 = fr(0.1);
const RMIN = fr(-0.9);
const RDELTA = fr(0.05);
const NSTEP = 36;
const FLT_MAX = 3.4028234663852886e38;
/** 0.5 + 2^-25: see asymmetricRef. */
const HALF_UP = 0.5 + 2 ** -25;


/** C's roundf: ties away from zero. */
function roundAway(v: number): number {
  // v ± 0.5 is exact in double for any f32 v of this size; truncation then rounds half away.
  return (v >= 0 ? v + 0.5 : v - 0.5) | 0;
}



// Per-block scratch, allocated once.
const weight = new Float32Array(QK);
/** weight · x, per value: the first factor of every Σ w·x·l term. */
const wx = new Float32Array(QK);
/** Chosen codes. */
const L = new Uint8Array(QK);
/** Codes of the candidate under evaluation (and, until it is overwritten, of the one before it). */
const Laux = new Uint8Array(QK);

/**
 * σ² of every row as ggml computes it: the f32 running sum of x² along the row, divided by the row
 * length. Each sum is a serial chain of f32 roundings, so four rows are summed side by side.
 */
function rowSigmas(x: Float32Array, rows: number, n: number): Float32Array {
  const out = new Float32Array(rows);
  let r = 0;
  for (; r + 4 <= rows; r += 4) {
    const o0 = r * n;
    const o1 = o0 + n;
    const o2 = o1 + n;
    const o3 = o2 + n;
    let s0 = 0;
    let s1 = 0;
    let s2 = 0;
    let s3 = 0;
    for (let j = 0; j < n; j++) {
      const v0 = x[o0 + j]!;
      const v1 = x[o1 + j]!;
      const v2 = x[o2 + j]!;
      const v3 = x[o3 + j]!;
      s0 = fr(s0 + fr(v0 * v0));
      s1 = fr(s1 + fr(v1 * v1));
      s2 = fr(s2 + fr(v2 * v2));
      s3 = fr(s3 + fr(v3 * v3));
    }
    out[r] = s0 / n;
    out[r + 1] = s1 / n;
    out[r + 2] = s2 / n;
    out[r + 3] = s3 / n;
  }
  for (; r < rows; r++) {
    const o = r * n;
    let s = 0;
    for (let j = 0; j < n; j++) {
      const v = x[o + j]!;
      s = fr(s + fr(v * v));
    }
    out[r] = s / n;
  }
  return out;
}

/** Whether every weight of the current block is ≥ 0 (and none is NaN). */
let weightsNonNegative = true;

/** weight[j] = qw_j · sqrt(σ² + x_j²) for the block at x[o..], qw[q..]. */
function blockWeights(x: Float32Array, o: number, qw: Float32Array, q: number, sigma2: number): void {
  let ok = true;
  for (let j = 0; j < QK; j++) {
    const v = x[o + j]!;
    const w = fr(qw[q + j]! * fr(Math.sqrt(fr(sigma2 + fr(v * v)))));
    weight[j] = w;
    if (!(w >= 0)) ok = false;
  }
  weightsNonNegative = ok;
}

/*
 * Both searches below try a row of scales that grow step by step and re-round the block for each.
 * Two shortcuts keep the result identical to ggml's while sparing most of the f32-rounded work:
 *
 * - Re-rounding: as the inverse scale s grows, each code only moves when |s·x| crosses the next
 *   half-integer. nextS[i] holds (slightly less than) the |s| at which code i can next change;
 *   below it the code is certain to stay, so only values past it are rounded again.
 * - A candidate whose codes equal those of the candidate evaluated just before it is skipped:
 *   its sums, and so its verdict, would be the same (had the previous one been taken, taking this
 *   one again changes nothing; had it been refused, nothing has changed since).
 */

/** Relative safety margin on the re-rounding thresholds (f32 products err by < 1.2e-7). */
const SAFE = 1 - 1e-6;
const nextS = new Float64Array(QK);

/** Code (l + nmax) of x·iscale for make_qx_quants, and its re-rounding threshold in nextS[i]. */
function qxCode(v: number, iscale: number, nmax: number, i: number): number {
  let l = nearestInt(fr(iscale * v));
  if (l <= -nmax) {
    l = -nmax;
    nextS[i] = Infinity;
  } else if (l >= nmax - 1) {
    l = nmax - 1;
    nextS[i] = Infinity;
  } else {
    nextS[i] = ((Math.abs(l) + 0.5) * SAFE) / Math.abs(v); // Infinity for v = 0
  }
  return l + nmax;
}

/**
 * ggml's make_qx_quants with rmse_type 1 and weights: codes L[j] ∈ [0, 2·nmax) for the block at
 * x[o..] (value = (L - nmax) · scale); returns the scale.
 */
function makeQxQuants(x: Float32Array, o: number, nmax: number): number {
  let amax = 0;
  let max = 0;
  for (let i = 0; i < QK; i++) {
    const v = x[o + i]!;
    const ax = Math.abs(v);
    if (ax > amax) {
      amax = ax;
      max = v;
    }
  }
  if (amax < GROUP_MAX_EPS) {
    L.fill(0);
    return 0;
  }
  for (let i = 0; i < QK; i++) wx[i] = weight[i]! * x[o + i]!;
  let iscale = fr(-nmax / max);
  let sumlx = 0;
  let suml2 = 0;
  // The same two sums in double, kept up to date as codes change (for the pre-check below).
  let sd = 0;
  let td = 0;
  for (let i = 0; i < QK; i++) {
    const code = qxCode(x[o + i]!, iscale, nmax, i);
    L[i] = code;
    Laux[i] = code;
    const l = code - nmax;
    const w = weight[i]!;
    sumlx = fr(sumlx + fr(wx[i]! * l));
    suml2 = fr(suml2 + fr(fr(w * l) * l));
    sd += wx[i]! * l;
    td += w * l * l;
  }
  let scale = suml2 !== 0 ? fr(sumlx / suml2) : 0;
  let best = fr(scale * sumlx);
  for (let is = -9; is <= 9; is++) {
    if (is === 0) continue;
    iscale = fr(-fr(nmax + fr(F_0_1 * is)) / max);
    // The first step is smaller than the starting scale: round everything afresh. After it,
    // |iscale| only grows, and only values past their threshold can move.
    const absS = is === -9 ? Infinity : Math.abs(iscale);
    let same = true;
    for (let i = 0; i < QK; i++) {
      if (absS >= nextS[i]!) {
        const code = qxCode(x[o + i]!, iscale, nmax, i);
        const old = Laux[i]!;
        if (old !== code) {
          same = false;
          Laux[i] = code;
          const l0 = old - nmax;
          const l1 = code - nmax;
          sd += wx[i]! * (l1 - l0);
          td += weight[i]! * (l1 * l1 - l0 * l0);
        }
      }
    }
    if (same) continue;
    if (weightsNonNegative) {
      // Cheap pre-check in double: ggml takes the candidate when Σwxl² > best·Σwl² in f32. All
      // terms of each sum share one sign (l has the sign of iscale·x, w ≥ 0), so the f32 sums are
      // within ~35 ulp (relative) of the exact ones, and sd, td within ~1e-14 of them; a candidate
      // short by more than 1e-4 is refused by ggml too. Only ranges where f32 neither overflows
      // nor goes subnormal are trusted (NaN or Inf anywhere fails the test: exact path).
      const rhs = best * td;
      if (rhs > 1e-30 && rhs < 1e30 && td > 1e-30 && sd * sd < rhs * (1 - 1e-4)) continue;
    }
    sumlx = 0;
    suml2 = 0;
    for (let i = 0; i < QK; i++) {
      const l = Laux[i]! - nmax;
      sumlx = fr(sumlx + fr(wx[i]! * l));
      suml2 = fr(suml2 + fr(fr(weight[i]! * l) * l));
    }
    if (suml2 > 0 && fr(sumlx * sumlx) > fr(best * suml2)) {
      L.set(Laux);
      scale = fr(sumlx / suml2);
      best = fr(scale * sumlx);
    }
  }
  return scale;
}

/** Offset found by the last makeQkx3Quants call (value = L · scale + qkxMin, qkxMin ≤ 0). */
let qkxMin = 0;
/** fr(x - min) per value for the current offset. */
const shifted = new Float32Array(QK);

/** Code of shifted[i]·iscale for make_qkx3_quants, and its re-rounding threshold in nextS[i]. */
function qkxCode(iscale: number, nmax: number, i: number): number {
  const v = shifted[i]!;
  let l = nearestInt(fr(iscale * v));
  if (l <= 0) {
    // v ≤ 0 stays at 0 for any larger scale; v > 0 moves up at l + 0.5.
    l = 0;
    nextS[i] = v > 0 ? (0.5 * SAFE) / v : Infinity;
  } else if (l >= nmax) {
    l = nmax;
    nextS[i] = Infinity;
  } else {
    nextS[i] = ((l + 0.5) * SAFE) / v;
  }
  return l;
}

/**
 * ggml's make_qkx3_quants (squared error, weights given, rmin -0.9, rdelta 0.05, 36 steps): codes
 * L[j] ∈ [0, nmax] for the block at x[o..]; returns the scale, leaves the offset in qkxMin.
 */
function makeQkx3Quants(x: Float32Array, o: number, nmax: number): number {
  let min = x[o]!;
  let max = min;
  let sumW = weight[0]!;
  let sumX = fr(sumW * min);
  for (let i = 1; i < QK; i++) {
    const v = x[o + i]!;
    if (v < min) min = v;
    if (v > max) max = v;
    const w = weight[i]!;
    sumW = fr(sumW + w);
    sumX = fr(sumX + fr(w * v));
  }
  if (min > 0) min = 0;
  if (max <= min) {
    L.fill(0);
    qkxMin = min;
    return 0;
  }
  let iscale = fr(nmax / fr(max - min));
  let scale = fr(1 / iscale);
  let bestMad = 0;
  for (let i = 0; i < QK; i++) {
    const v = x[o + i]!;
    let l = nearestInt(fr(iscale * fr(v - min)));
    l = l < 0 ? 0 : l > nmax ? nmax : l;
    L[i] = l;
    const diff = fr(fr(fr(scale * l) + min) - v);
    bestMad = fr(bestMad + fr(weight[i]! * fr(diff * diff)));
  }
  // The first step is always evaluated: mark the "previous candidate" as impossible.
  Laux.fill(255);
  // Whether the values must be rounded afresh (first step, or a new offset since the last one).
  let fresh = true;
  for (let is = 0; is <= NSTEP; is++) {
    // As in ggml, `min` here is the offset of the best fit so far, not the block minimum.
    iscale = fr(fr(fr(RMIN + fr(RDELTA * is)) + nmax) / fr(max - min));
    let same = true;
    if (fresh) {
      for (let i = 0; i < QK; i++) shifted[i] = x[o + i]! - min;
      for (let i = 0; i < QK; i++) {
        const l = qkxCode(iscale, nmax, i);
        if (Laux[i] !== l) {
          same = false;
          Laux[i] = l;
        }
      }
      fresh = false;
    } else {
      // Same offset, larger iscale: only values past their threshold can move.
      for (let i = 0; i < QK; i++) {
        if (iscale >= nextS[i]!) {
          const l = qkxCode(iscale, nmax, i);
          if (Laux[i] !== l) {
            same = false;
            Laux[i] = l;
          }
        }
      }
    }
    if (same) continue;
    let sumL = 0;
    let sumL2 = 0;
    let sumXL = 0;
    for (let i = 0; i < QK; i++) {
      const l = Laux[i]!;
      const wl = fr(weight[i]! * l);
      sumL = fr(sumL + wl);
      sumL2 = fr(sumL2 + fr(wl * l));
      sumXL = fr(sumXL + fr(wl * x[o + i]!));
    }
    const D = fr(fr(sumW * sumL2) - fr(sumL * sumL));
    if (D > 0) {
      let thisScale = fr(fr(fr(sumW * sumXL) - fr(sumX * sumL)) / D);
      let thisMin = fr(fr(fr(sumL2 * sumX) - fr(sumL * sumXL)) / D);
      if (thisMin > 0) {
        thisMin = 0;
        thisScale = fr(sumXL / sumL2);
      }
      let mad = 0;
      for (let i = 0; i < QK; i++) {
        const diff = fr(fr(fr(thisScale * Laux[i]!) + thisMin) - x[o + i]!);
        mad = fr(mad + fr(weight[i]! * fr(diff * diff)));
      }
      if (mad < bestMad) {
        L.set(Laux);
        bestMad = mad;
        scale = thisScale;
        if (thisMin !== min) fresh = true;
        min = thisMin;
      }
    }
  }
  qkxMin = min;
  return scale;
}

/** Packs codes L (4 bits each, or the low 4 of 5) into 16 bytes at dst[q..]; returns the fifth bits. */
function packNibbles(dst: Uint8Array, q: number): number {
  let qh = 0;
  for (let j = 0; j < 16; j++) {
    const a = L[j]!;
    const b = L[j + 16]!;
    dst[q + j] = (a & 15) | ((b & 15) << 4);
    qh |= ((a >> 4) << j) | ((b >> 4) << (j + 16));
  }
  return qh;
}

function writeU32(dst: Uint8Array, o: number, v: number): void {
  dst[o] = v;
  dst[o + 1] = v >>> 8;
  dst[o + 2] = v >>> 16;
  dst[o + 3] = v >>> 24;
}

/** Q8_0: d = max|x| / 127, q = round(x / d) (llama.cpp ignores the importance matrix here). */
export const encodeQ8_0: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q8_0, src, dst, rows, rowLength, importance);
  const blocks = (rows * rowLength) / QK;
  const ts = Q8_0.typeSize;
  for (let b = 0, x = 0, o = 0; b < blocks; b++, x += QK, o += ts) {
    let amax = 0;
    for (let j = 0; j < QK; j++) {
      const a = Math.abs(src[x + j]!);
      amax = amax > a ? amax : a; // ggml's MAX(amax, |v|), NaN handling included
    }
    const d = fr(amax / 127);
    const id = d !== 0 ? fr(1 / d) : 0;
    writeF16(dst, o, d);
    for (let j = 0; j < QK; j++) dst[o + 2 + j] = roundAway(fr(src[x + j]! * id));
  }
};

/**
 * Q4_0 / Q5_0 without importance: the value of largest magnitude gets code 0 (d = that value /
 * -2^(bits-1)), the rest round to nearest (half up), clamped to the top code. `five` selects
 * Q5_0 (fifth bits in qh).
 */
function symmetricRef(type: GgmlType, five: boolean, src: Float32Array, dst: Uint8Array, blocks: number): void {
  const ts = type.typeSize;
  const half = five ? 16 : 8;
  const top = 2 * half - 1;
  const bias = half + 0.5;
  const q = five ? 6 : 2;
  for (let b = 0, x = 0, o = 0; b < blocks; b++, x += QK, o += ts) {
    let amax = 0;
    let max = 0;
    for (let j = 0; j < QK; j++) {
      const v = src[x + j]!;
      const a = Math.abs(v);
      if (a > amax) {
        amax = a;
        max = v;
      }
    }
    const d = fr(max / -half);
    const id = d !== 0 ? fr(1 / d) : 0;
    writeF16(dst, o, d);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      let l0 = fr(fr(src[x + j]! * id) + bias) | 0;
      let l1 = fr(fr(src[x + j + 16]! * id) + bias) | 0;
      if (l0 > top) l0 = top;
      if (l1 > top) l1 = top;
      dst[o + q + j] = (l0 & 15) | (l1 << 4);
      qh |= ((l0 >> 4) << j) | ((l1 >> 4) << (j + 16));
    }
    if (five) writeU32(dst, o + 2, qh);
  }
}

/** Q4_1 / Q5_1 without importance: d = (max - min) / (2^bits - 1), m = min, round half up. */
function asymmetricRef(type: GgmlType, five: boolean, src: Float32Array, dst: Uint8Array, blocks: number): void {
  const ts = type.typeSize;
  const top = five ? 31 : 15;
  const q = five ? 8 : 4;
  for (let b = 0, x = 0, o = 0; b < blocks; b++, x += QK, o += ts) {
    let min = FLT_MAX;
    let max = -FLT_MAX;
    for (let j = 0; j < QK; j++) {
      const v = src[x + j]!;
      if (v < min) min = v;
      if (v > max) max = v;
    }
    const d = fr(fr(max - min) / top);
    const id = d !== 0 ? fr(1 / d) : 0;
    writeF16(dst, o, d);
    writeF16(dst, o + 2, min);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      // C truncates fr(y + 0.5); for f32 y in [0, 2^22) adding 0.5 + 2^-25 in double and
      // truncating gives the same integer (checked for every f32 below 40), one rounding fewer.
      let l0 = (fr(fr(src[x + j]! - min) * id) + HALF_UP) | 0;
      let l1 = (fr(fr(src[x + j + 16]! - min) * id) + HALF_UP) | 0;
      if (l0 > top) l0 = top;
      if (l1 > top) l1 = top;
      dst[o + q + j] = (l0 & 15) | (l1 << 4);
      qh |= ((l0 >> 4) << j) | ((l1 >> 4) << (j + 16));
    }
    if (five) writeU32(dst, o + 4, qh);
  }
}

function symmetricWeighted(type: GgmlType, bits: 4 | 5, src: Float32Array, dst: Uint8Array, rows: number, rowLength: number, qw: Float32Array): void {
  const ts = type.typeSize;
  const nmax = bits === 4 ? 8 : 16;
  const q = bits === 4 ? 2 : 6;
  const nb = rowLength / QK;
  const sigmas = rowSigmas(src, rows, rowLength);
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    const sigma2 = sigmas[r]!;
    for (let ib = 0; ib < nb; ib++, o += ts) {
      const x = row + ib * QK;
      blockWeights(src, x, qw, ib * QK, sigma2);
      const d = makeQxQuants(src, x, nmax);
      writeF16(dst, o, d);
      const qh = packNibbles(dst, o + q);
      if (bits === 5) writeU32(dst, o + 2, qh);
    }
  }
}

function asymmetricWeighted(type: GgmlType, bits: 4 | 5, src: Float32Array, dst: Uint8Array, rows: number, rowLength: number, qw: Float32Array): void {
  const ts = type.typeSize;
  const nmax = bits === 4 ? 15 : 31;
  const q = bits === 4 ? 4 : 8;
  const nb = rowLength / QK;
  const sigmas = rowSigmas(src, rows, rowLength);
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    const sigma2 = sigmas[r]!;
    for (let ib = 0; ib < nb; ib++, o += ts) {
      const x = row + ib * QK;
      blockWeights(src, x, qw, ib * QK, sigma2);
      const d = makeQkx3Quants(src, x, nmax);
      writeF16(dst, o, d);
      writeF16(dst, o + 2, qkxMin);
      const qh = packNibbles(dst, o + q);
      if (bits === 5) writeU32(dst, o + 4, qh);
    }
  }
}

export const encodeQ4_0: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q4_0, src, dst, rows, rowLength, importance);
  if (importance) symmetricWeighted(Q4_0, 4, src, dst, rows, rowLength, importance);
  else symmetricRef(Q4_0, false, src, dst, (rows * rowLength) / QK);
};

export const encodeQ5_0: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q5_0, src, dst, rows, rowLength, importance);
  if (importance) symmetricWeighted(Q5_0, 5, src, dst, rows, rowLength, importance);
  else symmetricRef(Q5_0, true, src, dst, (rows * rowLength) / QK);
};

export const encodeQ4_1: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q4_1, src, dst, rows, rowLength, importance);
  if (importance) asymmetricWeighted(Q4_1, 4, src, dst, rows, rowLength, importance);
  else asymmetricRef(Q4_1, false, src, dst, (rows * rowLength) / QK);
};

export const encodeQ5_1: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q5_1, src, dst, rows, rowLength, importance);
  if (importance) asymmetricWeighted(Q5_1, 5, src, dst, rows, rowLength, importance);
  else asymmetricRef(Q5_1, true, src, dst, (rows * rowLength) / QK);
};
