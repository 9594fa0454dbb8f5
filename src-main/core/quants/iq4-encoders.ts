/**
 * f32 rows to IQ4_NL and IQ4_XS, choosing the same scales and codes as llama.cpp's
 * ggml_quantize_chunk, so the bytes come out identical.
 *
 * Both store 4-bit indices into the 16 non-linear values of IQ4NL_VALUES (-127 … 113), times a
 * scale per 32 values:
 *   IQ4_NL (18 B per 32):  f16 d, qs[16]
 *   IQ4_XS (136 B per 256): f16 d, u16 scales_h, scales_l[4], qs[128]; sub-block i has the
 *     6-bit scale ls_i = (nibble i of scales_l) | (2 bits i of scales_h) << 4, scale d · (ls_i - 32)
 * Within each 32 values, byte j's low nibble is value j and its high nibble value j + 16.
 *
 * The search, per 32 values with weights w_j (the importance matrix times sqrt(σ² + x_j²), where
 * σ² is twice the mean square of the super-block; without one, x_j²): starting from the scale
 * that maps the value of largest magnitude onto ±127, and for the 15 inverse scales
 * (k - 127) / x_maxabs, k = -7..7, map every value to its nearest grid point, fit the
 * least-squares scale, and keep the one with the smallest weighted error. IQ4_NL stores that scale
 * in f16 and re-rounds the values with it; IQ4_XS quantizes the eight scales of a super-block to
 * 6 bits against the largest (d = -max/32) and re-rounds each sub-block with its stored scale.
 *
 * Every arithmetic step rounds to f32 where ggml's C code does (Math.fround).
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { writeF16 } from './half-encode';
import { GROUP_MAX_EPS, importanceWeights, nearestInt, signedAbsMax, sumOfSquares } from './scale-search';
import { IQ4NL_VALUES } from './iq-tables';

const IQ4_NL = ggmlType('IQ4_NL');
const IQ4_XS = ggmlType('IQ4_XS');
const NL_AT = blockOffsets('IQ4_NL');
const XS_AT = blockOffsets('IQ4_XS');

/** Values per scale (both types). */
const SUB = 32;
/** Sub-blocks per IQ4_XS super-block. */
const XS_SUBS = IQ4_XS.blockSize / SUB;
if (IQ4_NL.blockSize !== SUB || XS_SUBS !== 8) {
  throw new Error('iq4-encoders: unexpected IQ4 block geometry');
}

const fr = Math.fround;
/** Scale trials on each side of the starting one (ggml's ntry). */
const NTRY = 7;
const V0 = IQ4NL_VALUES[0]!;

/**
 * Nearest grid index by table: ggml's best_index_int8 picks the lower neighbour only when x is
 * strictly below the midpoint of two neighbours (ties go up). Every midpoint is a multiple of
 * 1/2 and the f32 differences ggml compares are exact near them, so the index depends only on
 * floor(2x): INDEX[floor(2x) + 256] for 2x in [-256, 256).
 */
const INDEX = new Uint8Array(512);
for (let k = -256; k < 256; k++) {
  let idx = 0;
  for (let i = 1; i < 16; i++) if (k >= IQ4NL_VALUES[i - 1]! + IQ4NL_VALUES[i]!) idx = i;
  INDEX[k + 256] = idx;
}

function bestIndex(x: number): number {
  const k = Math.floor(2 * x);
  if (k >= -256 && k < 256) return INDEX[k + 256]!;
  return k < -256 ? 0 : 15; // (NaN lands on 15, as in ggml)
}

const weight = new Float32Array(SUB);
const scales = new Float32Array(XS_SUBS);

/** ggml's σ² for a super-block of `n` values at x[o..]: f32 sum of squares times 2/n. */
function superSigma2(x: Float32Array, o: number, n: number): number {
  return fr(sumOfSquares(x, o, n) * fr(2 / n));
}

/** Fills `weight` for the 32 values at x[o..]; qw (at q) is the importance matrix or null. */
function subWeights(x: Float32Array, o: number, qw: Float32Array | null, q: number, sigma2: number): void {
  if (qw) {
    importanceWeights(x, o, qw, q, SUB, sigma2, weight, 0);
  } else {
    for (let j = 0; j < SUB; j++) {
      const v = x[o + j]!;
      weight[j] = v * v;
    }
  }
}

/** Σ w·q·x and Σ w·q² (f32, in order) of the last gridSums call. */
let sumqx = 0;
let sumq2 = 0;

/** The sums for the 32 values at x[o..] mapped to their nearest grid values at inverse scale `id`. */
function gridSums(x: Float32Array, o: number, id: number): void {
  let sx = 0;
  let s2 = 0;
  for (let j = 0; j < SUB; j++) {
    const v = x[o + j]!;
    const q = IQ4NL_VALUES[bestIndex(fr(id * v))]!;
    const wq = fr(weight[j]! * q);
    sx = fr(sx + fr(wq * v));
    s2 = fr(s2 + fr(wq * q));
  }
  sumqx = sx;
  sumq2 = s2;
}

/** The best scale for the 32 values at x[o..] under `weight` (0 for an all-zero block). */
function searchScale(x: Float32Array, o: number): number {
  const max = signedAbsMax(x, o, SUB);
  if (Math.abs(max) < GROUP_MAX_EPS) return 0;
  let d = fr(-max / V0);
  gridSums(x, o, fr(1 / d));
  d = sumq2 > 0 ? fr(sumqx / sumq2) : 0;
  let best = fr(d * sumqx);
  for (let itry = -NTRY; itry <= NTRY; itry++) {
    gridSums(x, o, fr((itry + V0) / max));
    if (sumq2 > 0 && fr(sumqx * sumqx) > fr(best * sumq2)) {
      d = fr(sumqx / sumq2);
      best = fr(d * sumqx);
    }
  }
  return d;
}

/** Writes the 32 values at x[o..], divided by their scale (`inverse` = 1/scale), as nibbles at dst[q..]. */
function packSub(x: Float32Array, o: number, inverse: number, dst: Uint8Array, q: number): void {
  for (let j = 0; j < 16; j++) {
    const a = bestIndex(fr(inverse * x[o + j]!));
    const b = bestIndex(fr(inverse * x[o + j + 16]!));
    dst[q + j] = a | (b << 4);
  }
}

export const encodeIQ4_NL: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ4_NL, src, dst, rows, rowLength, importance);
  const ts = IQ4_NL.typeSize;
  const nb = rowLength / SUB;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    for (let ib = 0; ib < nb; ib++, o += ts) {
      const x = row + ib * SUB;
      subWeights(src, x, importance, ib * SUB, importance ? superSigma2(src, x, SUB) : 0);
      const d = searchScale(src, x);
      writeF16(dst, o + NL_AT.d, d);
      packSub(src, x, d !== 0 ? fr(1 / d) : 0, dst, o + NL_AT.qs);
    }
  }
};

export const encodeIQ4_XS: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ4_XS, src, dst, rows, rowLength, importance);
  const ts = IQ4_XS.typeSize;
  const bs = IQ4_XS.blockSize;
  const nb = rowLength / bs;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xs = row + ibl * bs;
      const sigma2 = importance ? superSigma2(src, xs, bs) : 0;
      for (let ib = 0; ib < XS_SUBS; ib++) {
        const x = xs + ib * SUB;
        subWeights(src, x, importance, ibl * bs + ib * SUB, sigma2);
        scales[ib] = searchScale(src, x);
      }
      const d = fr(-signedAbsMax(scales, 0, XS_SUBS) / 32);
      writeF16(dst, o + XS_AT.d, d);
      const id = d !== 0 ? fr(1 / d) : 0;
      let scalesH = 0;
      for (let ib = 0; ib < XS_SUBS; ib++) {
        let l = nearestInt(fr(id * scales[ib]!));
        l = l < -32 ? -32 : l > 31 ? 31 : l;
        const dl = fr(d * l);
        packSub(src, xs + ib * SUB, dl !== 0 ? fr(1 / dl) : 0, dst, o + XS_AT.qs + ib * 16);
        l += 32;
        const sl = o + XS_AT.scales_l + (ib >> 1);
        if ((ib & 1) === 0) dst[sl] = l & 15;
        else dst[sl] |= (l & 15) << 4;
        scalesH |= (l >> 4) << (2 * ib);
      }
      dst[o + XS_AT.scales_h] = scalesH;
      dst[o + XS_AT.scales_h + 1] = scalesH >>> 8;
    }
  }
};
