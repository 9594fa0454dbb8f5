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
 * near-ties fall the same way. Q8_0, and Q4_1 without importance, run in WebAssembly SIMD
 * (assembly/encoders.ts). Block layouts are in legacy-quants.ts.
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { ggmlType, type GgmlType } from '../ggml-types';
import { wasmEncodeBlocks } from '../wasm/encoders';
import { writeF16 } from './half-encode';
import { fitScaleAndMin, fitSymmetricScale, importanceWeights, signedAbsMax, sumOfSquares } from './scale-search';

const Q4_0 = ggmlType('Q4_0');
const Q4_1 = ggmlType('Q4_1');
const Q5_0 = ggmlType('Q5_0');
const Q5_1 = ggmlType('Q5_1');
const Q8_0 = ggmlType('Q8_0');

/** Byte offsets of a legacy block's fields, from the type table (m and qh: -1 where the type has none). */
function offsets(type: GgmlType): { d: number; m: number; qh: number; qs: number } {
  const at = (name: string): number => type.layout.find((f) => f.name === name)?.offset ?? -1;
  return { d: at('d'), m: at('m'), qh: at('qh'), qs: at('qs') };
}

/** Every legacy quant has 32 values per block (the code below relies on it). */
const QK = 32;
for (const t of [Q4_0, Q4_1, Q5_0, Q5_1, Q8_0]) {
  if (t.blockSize !== QK) throw new Error(`legacy-encoders: ${t.name} block size ${t.blockSize}, expected ${QK}`);
}

const fr = Math.fround;
/** make_qkx3_quants' search for Q4_1 / Q5_1: stretches -0.9 + 0.05·k, k = 0..36. */
const RMIN = fr(-0.9);
const RDELTA = fr(0.05);
const NSTEP = 36;
const FLT_MAX = 3.4028234663852886e38;
/** 0.5 + 2^-25: see asymmetricRef. */
const HALF_UP = 0.5 + 2 ** -25;

// Per-block scratch, allocated once.
const weight = new Float32Array(QK);
/** Chosen codes. */
const L = new Uint8Array(QK);
/** The offset the Q4_1 / Q5_1 search returns (as ggml's the_min: value = L · scale - min). */
const minOut = new Float32Array(1);

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

/** Q8_0: d = max|x| / 127, q = round(x / d), in WebAssembly (llama.cpp ignores the importance matrix here). */
export const encodeQ8_0: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q8_0, src, dst, rows, rowLength, importance);
  wasmEncodeBlocks(Q8_0, 'encodeQ8_0', src, dst, (rows * rowLength) / QK);
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
  const { d: D, qh: QH, qs: q } = offsets(type);
  for (let b = 0, x = 0, o = 0; b < blocks; b++, x += QK, o += ts) {
    const d = fr(signedAbsMax(src, x, QK) / -half);
    const id = d !== 0 ? fr(1 / d) : 0;
    writeF16(dst, o + D, d);
    let qh = 0;
    for (let j = 0; j < 16; j++) {
      let l0 = fr(fr(src[x + j]! * id) + bias) | 0;
      let l1 = fr(fr(src[x + j + 16]! * id) + bias) | 0;
      if (l0 > top) l0 = top;
      if (l1 > top) l1 = top;
      dst[o + q + j] = (l0 & 15) | (l1 << 4);
      qh |= ((l0 >> 4) << j) | ((l1 >> 4) << (j + 16));
    }
    if (five) writeU32(dst, o + QH, qh);
  }
}

/** Q4_1 / Q5_1 without importance: d = (max - min) / (2^bits - 1), m = min, round half up. */
function asymmetricRef(type: GgmlType, five: boolean, src: Float32Array, dst: Uint8Array, blocks: number): void {
  const ts = type.typeSize;
  const top = five ? 31 : 15;
  const { d: D, m: M, qh: QH, qs: q } = offsets(type);
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
    writeF16(dst, o + D, d);
    writeF16(dst, o + M, min);
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
    if (five) writeU32(dst, o + QH, qh);
  }
}

/**
 * Q4_0 / Q5_0 (`asymmetric` false) and Q4_1 / Q5_1 (true) with importance: per block, the weights
 * from the row's σ², ggml's search for the scale (and offset), the codes packed. `five` selects the
 * 5-bit types (fifth bits in qh, after d, and m where there is one).
 */
function encodeWeighted(
  type: GgmlType,
  five: boolean,
  asymmetric: boolean,
  src: Float32Array,
  dst: Uint8Array,
  rows: number,
  rowLength: number,
  qw: Float32Array,
): void {
  const ts = type.typeSize;
  const nmax = asymmetric ? (five ? 31 : 15) : five ? 16 : 8;
  const { d: D, m: M, qh: QH, qs: q } = offsets(type);
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    const row = r * rowLength;
    // σ² is the mean square over the whole row.
    const sigma2 = fr(sumOfSquares(src, row, rowLength) / rowLength);
    for (let ib = 0; ib < nb; ib++, o += ts) {
      const x = row + ib * QK;
      importanceWeights(src, x, qw, ib * QK, QK, sigma2, weight, 0);
      if (asymmetric) {
        // ggml's make_qkx3_quants(QK, nmax, x, weight, L, &the_min, Laux, -0.9, 0.05, 36, false).
        writeF16(dst, o + D, fitScaleAndMin(QK, nmax, src, x, weight, 0, L, 0, minOut, 0, RMIN, RDELTA, NSTEP, false));
        writeF16(dst, o + M, -minOut[0]!);
      } else {
        // ggml's make_qx_quants(QK, nmax, x, L, rmse_type 1, weight).
        writeF16(dst, o + D, fitSymmetricScale(QK, nmax, src, x, L, 0, weight, 0));
      }
      const qh = packNibbles(dst, o + q);
      if (five) writeU32(dst, o + QH, qh);
    }
  }
}

export const encodeQ4_0: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q4_0, src, dst, rows, rowLength, importance);
  if (importance) encodeWeighted(Q4_0, false, false, src, dst, rows, rowLength, importance);
  else symmetricRef(Q4_0, false, src, dst, (rows * rowLength) / QK);
};

export const encodeQ5_0: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q5_0, src, dst, rows, rowLength, importance);
  if (importance) encodeWeighted(Q5_0, true, false, src, dst, rows, rowLength, importance);
  else symmetricRef(Q5_0, true, src, dst, (rows * rowLength) / QK);
};

export const encodeQ4_1: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q4_1, src, dst, rows, rowLength, importance);
  if (importance) encodeWeighted(Q4_1, false, true, src, dst, rows, rowLength, importance);
  else wasmEncodeBlocks(Q4_1, 'encodeQ4_1', src, dst, (rows * rowLength) / QK);
};

export const encodeQ5_1: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q5_1, src, dst, rows, rowLength, importance);
  if (importance) encodeWeighted(Q5_1, true, true, src, dst, rows, rowLength, importance);
  else asymmetricRef(Q5_1, true, src, dst, (rows * rowLength) / QK);
};
