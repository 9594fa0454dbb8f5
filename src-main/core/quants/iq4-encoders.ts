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
 * That search runs in WebAssembly (assembly/iq4-search.ts, 4 sub-blocks side by side); this file
 * fills the weights, quantizes the IQ4_XS scales and packs the blocks.
 *
 * Every arithmetic step rounds to f32 where ggml's C code does (Math.fround).
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { writeF16 } from './half-encode';
import { importanceWeights, nearestInt, signedAbsMax, sumOfSquares } from './scale-search';
import { IQ4NL_VALUES } from './iq-tables';
import { iq4Search, type Iq4Search } from '../wasm/iq4-search';

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

/** ggml's σ² for a super-block of `n` values at x[o..]: f32 sum of squares times 2/n. */
function superSigma2(x: Float32Array, o: number, n: number): number {
  return fr(sumOfSquares(x, o, n) * fr(2 / n));
}

/** Writes the weights of the 32 values at x[o..] to w[at..]; qw (at q) is the importance matrix or null. */
function subWeights(
  x: Float32Array,
  o: number,
  qw: Float32Array | null,
  q: number,
  sigma2: number,
  w: Float32Array,
  at: number,
): void {
  if (qw) {
    importanceWeights(x, o, qw, q, SUB, sigma2, w, at);
  } else {
    for (let j = 0; j < SUB; j++) {
      const v = x[o + j]!;
      w[at + j] = v * v;
    }
  }
}

/** This thread's WebAssembly scale search, made on first use. */
let searchInstance: Iq4Search | null = null;
function search(): Iq4Search {
  return (searchInstance ??= iq4Search());
}

/**
 * Fills search().scales[0..count) with the scales of the `count` sub-blocks of 32 values at
 * src[from..] (importance at qw[q..] or null; `superSize` values share one σ²).
 */
function searchScales(
  src: Float32Array,
  from: number,
  count: number,
  qw: Float32Array | null,
  q: number,
  superSize: number,
): Float32Array {
  const s = search();
  s.x.set(src.subarray(from, from + count * SUB));
  let sigma2 = 0;
  for (let k = 0; k < count; k++) {
    const o = k * SUB;
    if (qw && o % superSize === 0) sigma2 = superSigma2(src, from + o, superSize);
    subWeights(src, from + o, qw, q + o, sigma2, s.w, o);
  }
  s.searchScales(count);
  return s.scales;
}

/** Writes the 32 values at x[o..], divided by their scale (`inverse` = 1/scale), as nibbles at dst[q..]. */
function packSub(x: Float32Array, o: number, inverse: number, dst: Uint8Array, q: number): void {
  for (let j = 0; j < 16; j++) {
    const a = bestIndex(fr(inverse * x[o + j]!));
    const b = bestIndex(fr(inverse * x[o + j + 16]!));
    dst[q + j] = a | (b << 4);
  }
}

/** Sub-blocks of a row searched per call: as many as the module holds, in whole IQ4_XS super-blocks. */
function chunkSubs(): number {
  return search().capacity - (search().capacity % XS_SUBS);
}

export const encodeIQ4_NL: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ4_NL, src, dst, rows, rowLength, importance);
  const ts = IQ4_NL.typeSize;
  const nb = rowLength / SUB;
  const chunk = chunkSubs();
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    for (let first = 0; first < nb; first += chunk) {
      const count = Math.min(chunk, nb - first);
      const scales = searchScales(src, row + first * SUB, count, importance, first * SUB, SUB);
      for (let k = 0; k < count; k++, o += ts) {
        const d = scales[k]!;
        writeF16(dst, o + NL_AT.d, d);
        packSub(src, row + (first + k) * SUB, d !== 0 ? fr(1 / d) : 0, dst, o + NL_AT.qs);
      }
    }
  }
};

export const encodeIQ4_XS: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ4_XS, src, dst, rows, rowLength, importance);
  const ts = IQ4_XS.typeSize;
  const bs = IQ4_XS.blockSize;
  const nb = rowLength / bs;
  const chunk = chunkSubs() / XS_SUBS;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    for (let first = 0; first < nb; first += chunk) {
      const count = Math.min(chunk, nb - first);
      const scales = searchScales(src, row + first * bs, count * XS_SUBS, importance, first * bs, bs);
      for (let k = 0; k < count; k++, o += ts) {
        const xs = row + (first + k) * bs;
        const at = k * XS_SUBS;
        const d = fr(-signedAbsMax(scales, at, XS_SUBS) / 32);
        writeF16(dst, o + XS_AT.d, d);
        const id = d !== 0 ? fr(1 / d) : 0;
        let scalesH = 0;
        for (let ib = 0; ib < XS_SUBS; ib++) {
          let l = nearestInt(fr(id * scales[at + ib]!));
          l = l < -32 ? -32 : l > 31 ? 31 : l;
          const dl = fr(d * l);
          packSub(src, xs + ib * SUB, dl !== 0 ? fr(1 / dl) : 0, dst, o + XS_AT.qs + ib * 16);
          l += 32;
          const sl = o + XS_AT.scales_l + (ib >> 1);
          if ((ib & 1) === 0) dst[sl] = l & 15;
          else dst[sl]! |= (l & 15) << 4;
          scalesH |= (l >> 4) << (2 * ib);
        }
        dst[o + XS_AT.scales_h] = scalesH;
        dst[o + XS_AT.scales_h + 1] = scalesH >>> 8;
      }
    }
  }
};
