/**
 * Encoders (f32 → blocks) for the k-quants Q2_K, Q3_K, Q4_K, Q5_K and Q6_K, choosing scales and
 * levels the way llama.cpp's ggml-quants.c does:
 *
 * - without an importance matrix, quantize_row_qN_K_ref: per sub-block a scale (and min) search,
 *   the block's sub-scales quantized linearly against the largest one;
 * - with one, quantize_row_qN_K_impl: sub-block weights are importance · sqrt(σ² + x²) (Q6_K: the
 *   importance alone), and the sub-scales themselves are quantized by a weighted search.
 *
 * Every step rounds to f32 where ggml's does (Math.fround, f32 scratch arrays), so the bytes match
 * llama.cpp's ggml_quantize_chunk. Platform-free; scratch space is module-level, nothing is
 * allocated per block.
 *
 * Block layouts (offsets: the type table's, ggml-types.ts), QK = 256 values:
 * Q2_K: scales[QK/16] (low nibble scale, high nibble min), qs[QK/4] (2 bits), f16 d, f16 dmin
 * Q3_K: hmask[QK/8] (third bit), qs[QK/4] (low 2 bits), scales[12] (16 × 6 bits), f16 d
 * Q4_K: f16 d, f16 dmin, scales[12] (8 scales + 8 mins, 6 bits each), qs[QK/2] (nibbles)
 * Q5_K: f16 d, f16 dmin, scales[12], qh[QK/8] (fifth bit), qs[QK/2] (low nibbles)
 * Q6_K: ql[QK/2] (low nibbles), qh[QK/4] (top 2 bits), int8 scales[QK/16], f16 d
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { blockField, blockOffsets, ggmlType, type GgmlType } from '../ggml-types';
import { f16Table } from './half';
import { writeF16 } from './half-encode';
import {
  GROUP_MAX_EPS,
  fitSymmetricScale,
  fitUnsignedScale,
  importanceWeights,
  roundHalfEven,
  signedAbsMax,
  sumOfSquares,
} from './scale-search';
import { scaleSearch } from '../wasm/scale-search';

const Q2_K = ggmlType('Q2_K');
const Q3_K = ggmlType('Q3_K');
const Q4_K = ggmlType('Q4_K');
const Q5_K = ggmlType('Q5_K');
const Q6_K = ggmlType('Q6_K');

/** Values per super-block (the same for all five types). */
const QK = Q4_K.blockSize;
/** Bytes of packed 6-bit scales (and mins) in Q3_K, Q4_K and Q5_K. */
const K_SCALE_SIZE = blockField('Q4_K', 'scales').bytes;

const fr = Math.fround;

/** Writes `v` (an f32 value) as f16 at `at`, returns the f16's value as f32. */
function putF16(y: Uint8Array, at: number, v: number): number {
  return f16Table()[writeF16(y, at, v)]!;
}

// ---- scratch, shared by all encoders (one block at a time) ----

const L = new Uint8Array(QK);
const SCALES = new Float32Array(QK / 16);
const MINS = new Float32Array(QK / 16);
const SW = new Float32Array(QK / 16);
const LS = new Uint8Array(QK / 16);
const LM = new Uint8Array(QK / 16);

const NEG_0_5 = fr(-0.5);
const NEG_0_9 = fr(-0.9);
const F0_1 = fr(0.1);
const F0_05 = fr(0.05);

/** Runs `block(xAt, importanceAt, dstAt)` over every block of every row. */
function forEachBlock(
  type: GgmlType,
  rows: number,
  rowLength: number,
  block: (xAt: number, qwAt: number, yAt: number) => void,
): void {
  const perRow = rowLength / QK;
  let yAt = 0;
  for (let r = 0; r < rows; r++) {
    for (let b = 0; b < perRow; b++, yAt += type.typeSize) block(r * rowLength + b * QK, b * QK, yAt);
  }
}

/** Packs L (values 0..3) four to a byte: byte l of each 32 holds values l, l+32, l+64, l+96 of 128. */
function pack2Bit(y: Uint8Array, at: number): void {
  for (let j = 0; j < QK; j += 128) {
    const q = at + j / 4;
    for (let l = 0; l < 32; l++) {
      y[q + l] = L[j + l]! | (L[j + l + 32]! << 2) | (L[j + l + 64]! << 4) | (L[j + l + 96]! << 6);
    }
  }
}

// ================================ Q2_K ================================

const { scales: Q2_SCALES, qs: Q2_QS, d: Q2_D, dmin: Q2_DMIN } = blockOffsets('Q2_K');

/** Requantizes each 16-value sub-block against its stored scale and min, then packs. */
function finishQ2(x: Float32Array, xAt: number, y: Uint8Array, o: number, dAll: number, mAll: number): void {
  for (let j = 0; j < QK / 16; j++) {
    const sc = y[o + Q2_SCALES + j]!;
    const d = fr(dAll * (sc & 0xf));
    if (d === 0) continue;
    const dm = fr(mAll * (sc >> 4));
    const base = 16 * j;
    for (let i = 0; i < 16; i++) {
      const l = roundHalfEven(fr(fr(x[xAt + base + i]! + dm) / d));
      L[base + i] = l < 0 ? 0 : l > 3 ? 3 : l;
    }
  }
  pack2Bit(y, o + Q2_QS);
}

function q2Plain(x: Float32Array, xAt: number, y: Uint8Array, o: number): void {
  const search = blockToSearch(x, xAt);
  const w = search.w;
  for (let i = 0; i < QK; i++) w[i] = Math.abs(x[xAt + i]!);
  search.fitScaleAndMinGroups(QK / 16, 16, 3, NEG_0_5, F0_1, 15, 1);
  takeGroups(search, QK / 16);
  let maxScale = 0;
  let maxMin = 0;
  for (let j = 0; j < QK / 16; j++) {
    if (SCALES[j]! > maxScale) maxScale = SCALES[j]!;
    if (MINS[j]! > maxMin) maxMin = MINS[j]!;
  }
  let dAll: number;
  if (maxScale > 0) {
    const iscale = fr(15 / maxScale);
    for (let j = 0; j < QK / 16; j++) y[o + Q2_SCALES + j] = roundHalfEven(fr(iscale * SCALES[j]!));
    dAll = putF16(y, o + Q2_D, fr(maxScale / 15));
  } else {
    y.fill(0, o + Q2_SCALES, o + Q2_SCALES + QK / 16);
    dAll = putF16(y, o + Q2_D, 0);
  }
  let mAll: number;
  if (maxMin > 0) {
    const iscale = fr(15 / maxMin);
    for (let j = 0; j < QK / 16; j++) y[o + Q2_SCALES + j]! |= roundHalfEven(fr(iscale * MINS[j]!)) << 4;
    mAll = putF16(y, o + Q2_DMIN, fr(maxMin / 15));
  } else {
    mAll = putF16(y, o + Q2_DMIN, 0);
  }
  finishQ2(x, xAt, y, o, dAll, mAll);
}

function q2Weighted(x: Float32Array, xAt: number, qw: Float32Array, qwAt: number, y: Uint8Array, o: number): void {
  const sigma2 = fr(sumOfSquares(x, xAt, QK) / QK);
  const search = blockToSearch(x, xAt);
  for (let j = 0; j < QK / 16; j++)
    SW[j] = importanceWeights(x, xAt + 16 * j, qw, qwAt + 16 * j, 16, sigma2, search.w, 16 * j);
  search.fitScaleAndMinGroups(QK / 16, 16, 3, NEG_0_9, F0_05, 36, 0);
  takeGroups(search, QK / 16);
  const dm = fitUnsignedScale(QK / 16, 15, SCALES, 0, LS, 0, SW, 0);
  const mm = fitUnsignedScale(QK / 16, 15, MINS, 0, LM, 0, SW, 0);
  const dAll = putF16(y, o + Q2_D, dm);
  const mAll = putF16(y, o + Q2_DMIN, mm);
  for (let j = 0; j < QK / 16; j++) y[o + Q2_SCALES + j] = LS[j]! | (LM[j]! << 4);
  finishQ2(x, xAt, y, o, dAll, mAll);
}

export const encodeQ2_K: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q2_K, src, dst, rows, rowLength, importance);
  if (importance) forEachBlock(Q2_K, rows, rowLength, (xAt, qwAt, o) => q2Weighted(src, xAt, importance, qwAt, dst, o));
  else forEachBlock(Q2_K, rows, rowLength, (xAt, _qwAt, o) => q2Plain(src, xAt, dst, o));
};

// ================================ Q3_K ================================

const { hmask: Q3_HMASK, qs: Q3_QS, scales: Q3_SCALES, d: Q3_D } = blockOffsets('Q3_K');
// finishQ3 writes hmask and qs as one run of bytes.
if (Q3_QS !== Q3_HMASK + QK / 8) throw new Error('Q3_K blocks must hold qs right after hmask');

/** Stores 6-bit scale `l` (0..63) of sub-block j: low nibbles in bytes 0..7, top 2 bits in 8..11. */
function putQ3Scale(y: Uint8Array, s: number, j: number, l: number): void {
  if (j < 8) y[s + j] = l & 0xf;
  else y[s + j - 8]! |= (l & 0xf) << 4;
  y[s + 8 + (j & 3)]! |= (l >> 4) << (2 * (j >> 2));
}

/**
 * Requantizes each sub-block against its stored 6-bit scale and packs the high and low bits, in
 * WebAssembly: the block's values and levels must be in `search` (where its sub-block search left them).
 */
function finishQ3(search: ReturnType<typeof scaleSearch>, y: Uint8Array, o: number, dAll: number): void {
  const s = o + Q3_SCALES;
  const d = search.scales;
  for (let j = 0; j < QK / 16; j++) {
    const low = j < 8 ? y[s + j]! & 0xf : y[s + j - 8]! >> 4;
    const sc = (low | (((y[s + 8 + (j & 3)]! >> (2 * (j >> 2))) & 3) << 4)) - 32;
    d[j] = fr(dAll * sc);
  }
  search.finishQ3();
  y.set(search.q3Bits, o + Q3_HMASK);
}

function q3Plain(x: Float32Array, xAt: number, y: Uint8Array, o: number): void {
  const search = blockToSearch(x, xAt);
  search.fitSymmetricIterativeGroups(QK / 16, 16, 4);
  takeGroups(search, QK / 16);
  const maxScale = signedAbsMax(SCALES, 0, QK / 16);
  const s = o + Q3_SCALES;
  y.fill(0, s, s + K_SCALE_SIZE);
  let dAll: number;
  if (maxScale !== 0) {
    const iscale = fr(-32 / maxScale);
    for (let j = 0; j < QK / 16; j++) {
      let l = (roundHalfEven(fr(iscale * SCALES[j]!)) << 24) >> 24; // ggml keeps it in an int8
      l = (l < -32 ? -32 : l > 31 ? 31 : l) + 32;
      putQ3Scale(y, s, j, l);
    }
    dAll = putF16(y, o + Q3_D, fr(1 / iscale));
  } else {
    dAll = putF16(y, o + Q3_D, 0);
  }
  finishQ3(search, y, o, dAll);
}

function q3Weighted(x: Float32Array, xAt: number, qw: Float32Array, qwAt: number, y: Uint8Array, o: number): void {
  const sigma2 = fr(fr(2 * sumOfSquares(x, xAt, QK)) / QK);
  // The sub-blocks' weights go to the search's memory, which searches them four at a time.
  const search = blockToSearch(x, xAt);
  for (let j = 0; j < QK / 16; j++)
    SW[j] = importanceWeights(x, xAt + 16 * j, qw, qwAt + 16 * j, 16, sigma2, search.w, 16 * j);
  search.fitSymmetricSubBlocks(QK / 16, 16, 4, 1);
  takeGroups(search, QK / 16);
  const s = o + Q3_SCALES;
  y.fill(0, s, s + K_SCALE_SIZE);
  const dBlock = fitSymmetricScale(QK / 16, 32, SCALES, 0, LS, 0, SW, 0);
  for (let j = 0; j < QK / 16; j++) putQ3Scale(y, s, j, LS[j]!);
  const dAll = putF16(y, o + Q3_D, dBlock);
  // The block scale's own search used the search's memory since: the values and levels go back.
  blockToSearch(x, xAt).levels.set(L);
  finishQ3(search, y, o, dAll);
}

export const encodeQ3_K: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q3_K, src, dst, rows, rowLength, importance);
  if (importance) forEachBlock(Q3_K, rows, rowLength, (xAt, qwAt, o) => q3Weighted(src, xAt, importance, qwAt, dst, o));
  else forEachBlock(Q3_K, rows, rowLength, (xAt, _qwAt, o) => q3Plain(src, xAt, dst, o));
};

// ============================ Q4_K and Q5_K ============================

const { d: K_D, dmin: K_DMIN, scales: K_SCALES, qs: Q4_QS } = blockOffsets('Q4_K');
const { qh: Q5_QH, qs: Q5_QS } = blockOffsets('Q5_K');
// The scale/min code below serves both types: their d, dmin and scales must sit alike.
const Q5_AT = blockOffsets('Q5_K');
if (Q5_AT.d !== K_D || Q5_AT.dmin !== K_DMIN || Q5_AT.scales !== K_SCALES)
  throw new Error('Q4_K and Q5_K blocks must share d, dmin and scales offsets');

/** Stores 6-bit scale `ls` and min `lm` of sub-block j (get_scale_min_k4's layout). */
function putScaleMin(y: Uint8Array, s: number, j: number, ls: number, lm: number): void {
  if (j < 4) {
    y[s + j] = ls;
    y[s + j + 4] = lm;
  } else {
    y[s + j + 4] = (ls & 0xf) | ((lm & 0xf) << 4);
    y[s + j - 4]! |= (ls >> 4) << 6;
    y[s + j]! |= (lm >> 4) << 6;
  }
}

/** Copies the block at x[xAt] to the WebAssembly searches' values; returns them. */
function blockToSearch(x: Float32Array, xAt: number): ReturnType<typeof scaleSearch> {
  const search = scaleSearch();
  const group = search.x;
  for (let i = 0; i < QK; i++) group[i] = x[xAt + i]!;
  return search;
}

/** A block's sub-block search results, from the search's memory: levels to L, scales to SCALES, −mins to MINS (left over by a symmetric search, unread). */
function takeGroups(search: ReturnType<typeof scaleSearch>, count: number): void {
  L.set(search.levels);
  for (let j = 0; j < count; j++) {
    SCALES[j] = search.scales[j]!;
    MINS[j] = search.mins[j]!;
  }
}

/**
 * Requantizes each 32-value sub-block to 0..nmax against its stored scale and min, in
 * WebAssembly: the block's values must be in `search.x` (blockToSearch), its levels in L.
 */
function requantScaleMin(
  search: ReturnType<typeof scaleSearch>,
  y: Uint8Array,
  o: number,
  dAll: number,
  mAll: number,
  nmax: number,
): void {
  const s = o + K_SCALES;
  const scaleLevels = search.scaleLevels;
  const minLevels = search.minLevels;
  for (let j = 0; j < QK / 32; j++) {
    if (j < 4) {
      scaleLevels[j] = y[s + j]! & 63;
      minLevels[j] = y[s + j + 4]! & 63;
    } else {
      scaleLevels[j] = (y[s + j + 4]! & 0xf) | ((y[s + j - 4]! >> 6) << 4);
      minLevels[j] = (y[s + j + 4]! >> 4) | ((y[s + j]! >> 6) << 4);
    }
  }
  search.levels.set(L);
  search.requantSubBlocks(dAll, mAll, nmax);
  L.set(search.levels);
}

/** Byte l of each 32 holds value l (low nibble) and l + 32 (high nibble) of each 64 (in WebAssembly). */
function packNibbles(y: Uint8Array, at: number): void {
  const search = scaleSearch();
  search.levels.set(L);
  search.packNibbles();
  y.set(search.nibbles, at);
}

/** Q5_K's fifth bits: value l + 64k (bit 2k) and l + 32 + 64k (bit 2k+1) of qh byte l. */
function packFifthBits(y: Uint8Array, at: number): void {
  y.fill(0, at, at + QK / 8);
  for (let n = 0, shift = 0; n < QK; n += 64, shift += 2) {
    for (let j = 0; j < 32; j++) {
      y[at + j]! |= ((L[n + j]! >> 4) << shift) | ((L[n + j + 32]! >> 4) << (shift + 1));
    }
  }
}

/** quantize_row_q4_K_ref / q5_K_ref: sub-scales and mins quantized against the largest. */
function scaleMinPlain(
  x: Float32Array,
  xAt: number,
  y: Uint8Array,
  o: number,
  nmax: number,
  rmin: number,
  nstep: number,
): void {
  // The sub-blocks' weights and searches run in WebAssembly, the block's 256 values at once.
  const search = blockToSearch(x, xAt);
  search.fitSubBlocksPlain(nmax, rmin, F0_1, nstep);
  takeGroups(search, QK / 32);
  let maxScale = 0;
  let maxMin = 0;
  for (let j = 0; j < QK / 32; j++) {
    if (SCALES[j]! > maxScale) maxScale = SCALES[j]!;
    if (MINS[j]! > maxMin) maxMin = MINS[j]!;
  }
  const invScale = maxScale > 0 ? fr(63 / maxScale) : 0;
  const invMin = maxMin > 0 ? fr(63 / maxMin) : 0;
  const s = o + K_SCALES;
  for (let j = 0; j < QK / 32; j++) {
    const ls = roundHalfEven(fr(invScale * SCALES[j]!)) & 0xff; // ggml keeps them in uint8s
    const lm = roundHalfEven(fr(invMin * MINS[j]!)) & 0xff;
    putScaleMin(y, s, j, ls < 63 ? ls : 63, lm < 63 ? lm : 63);
  }
  const dAll = putF16(y, o + K_D, fr(maxScale / 63));
  const mAll = putF16(y, o + K_DMIN, fr(maxMin / 63));
  requantScaleMin(search, y, o, dAll, mAll, nmax);
}

/** quantize_row_q4_K_impl / q5_K_impl: sub-scales and mins quantized by a weighted search. */
function scaleMinWeighted(
  x: Float32Array,
  xAt: number,
  qw: Float32Array,
  qwAt: number,
  y: Uint8Array,
  o: number,
  nmax: number,
  clampLevels: boolean,
): void {
  const sigma2 = fr(fr(2 * sumOfSquares(x, xAt, QK)) / QK);
  // The sub-blocks' weights go to the search's memory, which searches them four at a time.
  const search = blockToSearch(x, xAt);
  for (let j = 0; j < QK / 32; j++)
    SW[j] = importanceWeights(x, xAt + 32 * j, qw, qwAt + 32 * j, 32, sigma2, search.w, 32 * j);
  search.fitScaleAndMinGroups(QK / 32, 32, nmax, NEG_0_9, F0_05, 36, 0);
  takeGroups(search, QK / 32);
  const dBlock = fitUnsignedScale(QK / 32, 63, SCALES, 0, LS, 0, SW, 0);
  const mBlock = fitUnsignedScale(QK / 32, 63, MINS, 0, LM, 0, SW, 0);
  const s = o + K_SCALES;
  for (let j = 0; j < QK / 32; j++) {
    let ls = LS[j]!;
    let lm = LM[j]!;
    if (clampLevels) {
      if (ls > 63) ls = 63;
      if (lm > 63) lm = 63;
    }
    putScaleMin(y, s, j, ls, lm);
  }
  const dAll = putF16(y, o + K_D, dBlock);
  const mAll = putF16(y, o + K_DMIN, mBlock);
  requantScaleMin(search, y, o, dAll, mAll, nmax);
}

export const encodeQ4_K: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q4_K, src, dst, rows, rowLength, importance);
  forEachBlock(Q4_K, rows, rowLength, (xAt, qwAt, o) => {
    if (importance) scaleMinWeighted(src, xAt, importance, qwAt, dst, o, 15, false);
    else scaleMinPlain(src, xAt, dst, o, 15, -1, 20);
    packNibbles(dst, o + Q4_QS);
  });
};

export const encodeQ5_K: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q5_K, src, dst, rows, rowLength, importance);
  forEachBlock(Q5_K, rows, rowLength, (xAt, qwAt, o) => {
    if (importance) scaleMinWeighted(src, xAt, importance, qwAt, dst, o, 31, true);
    else scaleMinPlain(src, xAt, dst, o, 31, NEG_0_5, 15);
    packFifthBits(dst, o + Q5_QH);
    packNibbles(dst, o + Q5_QS);
  });
};

// ================================ Q6_K ================================

const { ql: Q6_QL, qh: Q6_QH, scales: Q6_SCALES, d: Q6_D } = blockOffsets('Q6_K');

function q6Block(x: Float32Array, xAt: number, qw: Float32Array | null, qwAt: number, y: Uint8Array, o: number): void {
  // The 16 sub-block searches run in WebAssembly, the block's 256 values at once.
  const search = blockToSearch(x, xAt);
  if (qw) {
    const weights = search.w;
    for (let i = 0; i < QK; i++) weights[i] = qw[qwAt + i]!;
  }
  search.fitSymmetricSubBlocks(QK / 16, 16, 32, qw ? 1 : 0);
  L.set(search.levels);
  let maxScale = 0;
  let maxAbs = 0;
  for (let ib = 0; ib < QK / 16; ib++) {
    const scale = search.scales[ib]!;
    SCALES[ib] = scale;
    const a = Math.abs(scale);
    if (a > maxAbs) {
      maxAbs = a;
      maxScale = scale;
    }
  }
  if (maxAbs < GROUP_MAX_EPS) {
    y.fill(0, o, o + Q6_K.typeSize);
    return;
  }
  const iscale = fr(-128 / maxScale);
  const dAll = putF16(y, o + Q6_D, fr(1 / iscale));
  const s = o + Q6_SCALES;
  for (let ib = 0; ib < QK / 16; ib++) {
    const l = roundHalfEven(fr(iscale * SCALES[ib]!));
    y[s + ib] = l < 127 ? l : 127;
  }
  for (let j = 0; j < QK / 16; j++) {
    const d = fr(dAll * ((y[s + j]! << 24) >> 24));
    if (d === 0) continue;
    const base = 16 * j;
    for (let i = 0; i < 16; i++) {
      const l = roundHalfEven(fr(x[xAt + base + i]! / d));
      L[base + i] = (l < -32 ? -32 : l > 31 ? 31 : l) + 32;
    }
  }
  for (let j = 0, ql = o + Q6_QL, qh = o + Q6_QH; j < QK; j += 128, ql += 64, qh += 32) {
    for (let l = 0; l < 32; l++) {
      const a = L[j + l]!;
      const b = L[j + l + 32]!;
      const c = L[j + l + 64]!;
      const e = L[j + l + 96]!;
      y[ql + l] = (a & 0xf) | ((c & 0xf) << 4);
      y[ql + l + 32] = (b & 0xf) | ((e & 0xf) << 4);
      y[qh + l] = (a >> 4) | ((b >> 4) << 2) | ((c >> 4) << 4) | ((e >> 4) << 6);
    }
  }
}

export const encodeQ6_K: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(Q6_K, src, dst, rows, rowLength, importance);
  forEachBlock(Q6_K, rows, rowLength, (xAt, qwAt, o) => q6Block(src, xAt, importance, qwAt, dst, o));
};
