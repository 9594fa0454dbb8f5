/**
 * f32 rows to IQ2_XXS, IQ2_XS and IQ2_S, choosing the same grid points, signs and scales as
 * llama.cpp's quantize_iq2_xxs / quantize_iq2_xs / quantize_iq2_s, so the bytes come out identical.
 *
 * Both store groups of 8 values as an entry of an 8-dimensional grid (values 1, 3, 5 in units of
 * a scale; IQ2XXS_GRID has 256 entries, IQ2XS_GRID 512) plus 7 sign bits (the 8th is implied:
 * an even number of values is negated). Layouts (see ggml-types.ts):
 *   IQ2_XXS (66 B per 256): f16 d; per 32 values a u32 of four 8-bit grid indices, then a u32 of
 *     four 7-bit sign indices and a 4-bit scale s (bits 28..31)
 *   IQ2_XS  (74 B per 256): f16 d; per 8 values a u16 (9-bit grid index | sign index << 9); a
 *     4-bit scale per 16 values in scales[8]
 * Each group's scale is stored as s = round((scale/d − 1)/2), d = the largest group scale / 31.
 *
 * The search, per group (32 values for IQ2_XXS, 16 for IQ2_XS) with weights w_j = imatrix_j ·
 * sqrt(σ² + x_j²) (σ² the mean square of the super-block): take |x|, and when an odd number of
 * each 8 values is negative keep the sign of the one that costs least (smallest w·x²) flipped;
 * then try a range of scales around the largest value, snapping each 8 values to the nearest
 * grid entry (or the best of its neighbours when rounding lands off the grid), and keep the
 * least-squares scale that explains most of the weighted energy. IQ2_XXS starts its range from a
 * fitted 4-level scale (make_qp_quants) and re-snaps every group with the chosen scale; IQ2_XS
 * re-snaps only the groups that were off the grid.
 *
 * IQ2_S (82 B per 256) searches as IQ2_XS, on a 1024-entry grid (neighbour lists of one distance),
 * with all 8 signs stored (no folding), σ² twice the mean square, and d stored ×0.9875; the
 * layout: f16 d; 32 low bytes of the 10-bit grid indices; 32 sign bytes; 2 high index bits per 8
 * values in qh[8]; 4-bit scales per 16 values in scales[8].
 *
 * IQ2_XXS and IQ2_XS need an importance matrix: llama.cpp refuses to quantize to them without one, since the
 * result is too poor to use. Every arithmetic step rounds to f32 where ggml's C code does.
 */
import { checkEncodeSpan, requireImportance, type RowEncoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { f32Bits, writeF16 } from './half-encode';
import { GROUP_MAX_EPS, fitUnsignedScale, importanceWeights, nearestInt, sumOfSquares } from './scale-search';
import { IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID } from './iq-tables';
import { buildLattice, oddLevelSums, type Lattice } from './iq-lattice';

const IQ2_XXS = ggmlType('IQ2_XXS');
const IQ2_XS = ggmlType('IQ2_XS');
const XXS_AT = blockOffsets('IQ2_XXS');
const XS_AT = blockOffsets('IQ2_XS');
const QK = 256;
if (IQ2_XXS.blockSize !== QK || IQ2_XS.blockSize !== QK) throw new Error('iq2-encoders: unexpected IQ2 block size');

const fr = Math.fround;
const F01 = fr(0.1);
const FLT_MAX = fr(3.4028234663852886e38);
/** Largest level (grid values 1, 3, 5 are levels 0, 1, 2). */
const MAX_LEVEL = 2;
/** The grid values the decoder tables hold for levels 0, 1, 2. */
const GRID_VALUES = [8, 25, 43] as const;

let xxsLattice: Lattice | undefined;
let xsLattice: Lattice | undefined;

/**
 * ggml's nearest_int over its whole range: the low 23 bits of the f32 sum v + 1.5·2^23, less
 * 2^22. Within |v| < 2^22 that is nearestInt's rounding; beyond, it is not a rounding, but ggml
 * clamps what comes out, so the bits must match.
 */
export function ggmlNearestInt(v: number): number {
  if (v > -4194304 && v < 4194304) return nearestInt(v);
  return (f32Bits(v + 12582912) & 0x7fffff) - 0x400000;
}

// ---- scratch (one group at a time) ----
const weight = new Float32Array(32);
const waux = new Float32Array(32);
const xval = new Float32Array(32);
const L = new Uint8Array(32);
const Laux = new Uint8Array(32);
const qpLevels = new Uint8Array(32);
const signs = new Uint8Array(4);
const onGrid = [true, true];
const onGridAux = [true, true];
const scales = new Float32Array(QK / 16);

/**
 * Writes |x| of the 8 values at x[xo..] to xval[vo..] and returns their sign bits (bit i: value i
 * negated). With `signMask` 127 (IQ2_XXS, IQ2_XS, IQ3_XXS: 7 stored bits, the 8th implied) it
 * flips back the cheapest value (least weight[vo + i]·x²) when an odd number were negative; with
 * 255 (IQ2_S stores all 8) it does not.
 */
export function foldSigns(
  x: Float32Array,
  xo: number,
  weight: Float32Array,
  xval: Float32Array,
  vo: number,
  signMask: number,
): number {
  let nflip = 0;
  let s = 0;
  for (let i = 0; i < 8; i++) {
    const v = x[xo + i]!;
    if (v >= 0) xval[vo + i] = v;
    else {
      xval[vo + i] = -v;
      nflip++;
      s |= 1 << i;
    }
  }
  if (signMask === 127 && nflip & 1) {
    let imin = 0;
    let min = fr(fr(weight[vo]! * x[xo]!) * x[xo]!);
    for (let i = 1; i < 8; i++) {
      const ax = fr(fr(weight[vo + i]! * x[xo + i]!) * x[xo + i]!);
      if (ax < min) {
        min = ax;
        imin = i;
      }
    }
    xval[vo + imin] = -xval[vo + imin]!;
    s ^= 1 << imin;
  }
  return s & signMask;
}

/** Whether the last snap landed on the grid directly (no neighbour search). */
let snappedOnGrid = true;

/**
 * Rounds the 8 values at xval[o..] at inverse scale `id` to levels, writes the levels of the grid
 * entry chosen (the key itself when on the grid, else the neighbour with the least waux-weighted
 * error at `scale`) to out[o..], and returns its grid index.
 */
function snap(lat: Lattice, o: number, id: number, scale: number, out: Uint8Array): number {
  let key = 0;
  for (let i = 0; i < 8; i++) {
    let l = ggmlNearestInt(fr(0.5 * fr(fr(id * xval[o + i]!) - 1)));
    l = l < 0 ? 0 : l > MAX_LEVEL ? MAX_LEVEL : l;
    out[o + i] = l;
    key |= l << (2 * i);
  }
  const g = lat.index[key]!;
  snappedOnGrid = g >= 0;
  return g >= 0 ? g : bestNeighbour(lat, key, o, scale, out);
}

/** terms[3i + l]: value i's weighted squared error if it takes level l (scratch of bestNeighbour). */
const terms = new Float32Array(24);

function bestNeighbour(lat: Lattice, key: number, o: number, scale: number, out: Uint8Array): number {
  // Each candidate's error is a sum of 8 of these 24 terms, so they are computed once (the same
  // f32 steps as ggml's, which computes them per candidate).
  for (let i = 0; i < 8; i++) {
    const x = xval[o + i]!;
    const w = waux[o + i]!;
    for (let l = 0; l < 3; l++) {
      const diff = fr(fr(scale * (2 * l + 1)) - x);
      terms[3 * i + l] = fr(w * diff) * diff;
    }
  }
  const levels = lat.levels;
  const list = lat.neighbours(key);
  let best = FLT_MAX;
  let grid = -1;
  for (let j = 0; j < list.length; j++) {
    const at = 8 * list[j]!;
    let d2 = 0;
    for (let i = 0; i < 8; i++) d2 = fr(d2 + terms[3 * i + levels[at + i]!]!);
    if (d2 < best) {
      best = d2;
      grid = list[j]!;
    }
  }
  if (grid < 0) throw new Error('IQ2 encoder: no grid neighbour has a finite error (non-finite values or weights)');
  for (let i = 0; i < 8; i++) out[o + i] = levels[8 * grid + i]!;
  return grid;
}

/** The grid index of the 8 levels at levels[o..] (they must be a grid entry). */
function gridIndexOf(lat: Lattice, levels: Uint8Array, o: number): number {
  let key = 0;
  for (let i = 0; i < 8; i++) key |= levels[o + i]! << (2 * i);
  const g = lat.index[key]!;
  if (g < 0)
    throw new Error(`IQ2 encoder: levels ${Array.from(levels.subarray(o, o + 8)).join(' ')} are not on the grid`);
  return g;
}

/**
 * Weights, folded signs (see foldSigns) and the largest folded value of the n values at x[xo..]
 * (importance at qw[qo..]; without it, ggml's σ²/4 + x²); fills weight, waux, xval and signs.
 */
function prepareGroup(
  x: Float32Array,
  xo: number,
  qw: Float32Array | null,
  qo: number,
  n: number,
  sigma2: number,
  signMask = 127,
): number {
  if (qw) importanceWeights(x, xo, qw, qo, n, sigma2, weight, 0);
  else {
    const quarter = fr(0.25 * sigma2);
    for (let i = 0; i < n; i++) weight[i] = fr(quarter + fr(x[xo + i]! * x[xo + i]!));
  }
  for (let i = 0; i < n; i++) waux[i] = fr(Math.sqrt(weight[i]!));
  for (let k = 0; k < n / 8; k++) signs[k] = foldSigns(x, xo + 8 * k, weight, xval, 8 * k, signMask);
  let max = xval[0]!;
  for (let i = 1; i < n; i++) max = max > xval[i]! ? max : xval[i]!;
  return max;
}

/** The 4-bit code of each group scale against the super-block scale d = max/31 (ggml's rounding of (scale/d − 1)/2). */
export function scaleCode(id: number, scale: number): number {
  const l = ggmlNearestInt(fr(0.5 * fr(fr(id * scale) - 1)));
  return l < 0 ? 0 : l > 15 ? 15 : l;
}

// ---- IQ2_XXS ----

const xxsWords = new Uint32Array(2 * (QK / 32));

/** The scale of the 32 values prepared in xval; writes their grid indices and signs into xxsWords[2ib..]. */
function xxsGroup(lat: Lattice, ib: number, max: number): number {
  if (max < GROUP_MAX_EPS) return 0;
  let scale = fitUnsignedScale(32, MAX_LEVEL + 2, xval, 0, qpLevels, 0, weight, 0);
  const effMax = fr(scale * (MAX_LEVEL + 1));
  if (effMax <= 0) return 0;
  let best = 0;
  for (let is = -6; is <= 6; is++) {
    const id = fr(fr(5 + fr(is * F01)) / effMax);
    const thisScale = fr(1 / id);
    for (let k = 0; k < 4; k++) snap(lat, 8 * k, id, thisScale, Laux);
    const sums = oddLevelSums(weight, xval, Laux, 32);
    if (sums.sumq2 > 0 && fr(sums.sumqx * sums.sumqx) > fr(best * sums.sumq2)) {
      scale = fr(sums.sumqx / sums.sumq2);
      best = fr(scale * sums.sumqx);
      L.set(Laux);
    }
  }
  if (scale > 0) {
    const id = fr(1 / scale);
    for (let k = 0; k < 4; k++) snap(lat, 8 * k, id, scale, L);
    const sums = oddLevelSums(weight, xval, L, 32);
    if (sums.sumq2 > 0) scale = fr(sums.sumqx / sums.sumq2);
  }
  if (scale < 0) {
    // All signs flipped instead: the scale is stored unsigned.
    scale = -scale;
    for (let k = 0; k < 4; k++) signs[k] = ~signs[k]! & 127;
  }
  for (let k = 0; k < 4; k++) {
    xxsWords[2 * ib]! |= gridIndexOf(lat, L, 8 * k) << (8 * k);
    xxsWords[2 * ib + 1]! |= signs[k]! << (7 * k);
  }
  return scale;
}

export const encodeIQ2_XXS: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ2_XXS, src, dst, rows, rowLength, importance);
  requireImportance(IQ2_XXS, importance);
  const lat = (xxsLattice ??= buildLattice(IQ2XXS_GRID.values, GRID_VALUES, 2));
  const ts = IQ2_XXS.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      xxsWords.fill(0);
      const sigma2 = fr(sumOfSquares(src, xbl, QK) / QK);
      let maxScale = 0;
      for (let ib = 0; ib < QK / 32; ib++) {
        const max = prepareGroup(src, xbl + 32 * ib, importance, ibl * QK + 32 * ib, 32, sigma2);
        const scale = xxsGroup(lat, ib, max);
        scales[ib] = scale;
        maxScale = maxScale > scale ? maxScale : scale;
      }
      writeF16(dst, o + XXS_AT.d, 0);
      if (maxScale !== 0) {
        const d = fr(maxScale / 31);
        writeF16(dst, o + XXS_AT.d, d);
        const id = fr(1 / d);
        for (let ib = 0; ib < QK / 32; ib++) xxsWords[2 * ib + 1]! |= scaleCode(id, scales[ib]!) << 28;
      } else xxsWords.fill(0);
      writeWords(dst, o + XXS_AT.qs, xxsWords, 4);
    }
  }
};

// ---- IQ2_XS ----

const xsHalves = new Uint16Array(2 * (QK / 16));

/**
 * The scale of the 16 values prepared in xval, whose largest is `max` (IQ2_XS and IQ2_S search
 * alike); leaves their levels in L and, when the scale came out negative, flips `signs` within
 * `signMask` (the scale is stored unsigned).
 */
function pairSearch(lat: Lattice, max: number, signMask: number): number {
  let best = 0;
  let scale = fr(max / (2 * MAX_LEVEL + 1));
  onGrid[0] = onGrid[1] = true;
  for (let is = -9; is <= 9; is++) {
    const id = fr(fr(5 + fr(is * F01)) / max);
    const thisScale = fr(1 / id);
    for (let k = 0; k < 2; k++) {
      snap(lat, 8 * k, id, thisScale, Laux);
      onGridAux[k] = snappedOnGrid;
    }
    const sums = oddLevelSums(weight, xval, Laux, 16);
    if (sums.sumq2 > 0 && fr(sums.sumqx * sums.sumqx) > fr(best * sums.sumq2)) {
      scale = fr(sums.sumqx / sums.sumq2);
      best = fr(scale * sums.sumqx);
      L.set(Laux.subarray(0, 16));
      onGrid[0] = onGridAux[0]!;
      onGrid[1] = onGridAux[1]!;
    }
  }
  if ((!onGrid[0] || !onGrid[1]) && scale > 0) {
    const id = fr(1 / scale);
    for (let k = 0; k < 2; k++) if (!onGrid[k]) snap(lat, 8 * k, id, scale, L);
    const sums = oddLevelSums(weight, xval, L, 16);
    if (sums.sumq2 > 0) scale = fr(sums.sumqx / sums.sumq2);
  }
  if (scale < 0) {
    scale = -scale;
    for (let k = 0; k < 2; k++) signs[k] = ~signs[k]! & signMask;
  }
  return scale;
}

/** The scale of the 16 values prepared in xval; writes their two grid/sign halves into xsHalves[2ib..]. */
function xsGroup(lat: Lattice, ib: number, max: number): number {
  L.fill(0, 0, 16);
  if (max < GROUP_MAX_EPS) return 0;
  const scale = pairSearch(lat, max, 127);
  for (let k = 0; k < 2; k++) xsHalves[2 * ib + k] = gridIndexOf(lat, L, 8 * k) | (signs[k]! << 9);
  return scale;
}

export const encodeIQ2_XS: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ2_XS, src, dst, rows, rowLength, importance);
  requireImportance(IQ2_XS, importance);
  const lat = (xsLattice ??= buildLattice(IQ2XS_GRID.values, GRID_VALUES, 2));
  const ts = IQ2_XS.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      xsHalves.fill(0);
      dst.fill(0, o + XS_AT.scales, o + XS_AT.scales + QK / 32);
      const sigma2 = fr(sumOfSquares(src, xbl, QK) / QK);
      let maxScale = 0;
      for (let ib = 0; ib < QK / 16; ib++) {
        const max = prepareGroup(src, xbl + 16 * ib, importance, ibl * QK + 16 * ib, 16, sigma2);
        const scale = xsGroup(lat, ib, max);
        scales[ib] = scale;
        maxScale = maxScale > scale ? maxScale : scale;
      }
      writeF16(dst, o + XS_AT.d, 0);
      if (maxScale !== 0) {
        const d = fr(maxScale / 31);
        writeF16(dst, o + XS_AT.d, d);
        const id = fr(1 / d);
        for (let ib = 0; ib < QK / 16; ib++)
          dst[o + XS_AT.scales + (ib >> 1)]! |= scaleCode(id, scales[ib]!) << (4 * (ib & 1));
      } else xsHalves.fill(0);
      writeWords(dst, o + XS_AT.qs, xsHalves, 2);
    }
  }
};

// ---- IQ2_S ----

const IQ2_S = ggmlType('IQ2_S');
const S_AT = blockOffsets('IQ2_S');
/** ggml's GROUP_MAX_EPS_IQ2_S. */
const IQ2_S_MAX_EPS = fr(1e-8);
/** ggml stores d a little below max scale / 31 (its d · 0.9875f). */
const IQ2_S_D_FACTOR = fr(0.9875);
let sLattice: Lattice | undefined;

/** Works without an importance matrix too (ggml does; llama-quantize's IQ2_S/IQ2_M file types refuse it). */
export const encodeIQ2_S: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ2_S, src, dst, rows, rowLength, importance);
  const lat = (sLattice ??= buildLattice(IQ2S_GRID.values, GRID_VALUES, 1));
  const ts = IQ2_S.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      dst.fill(0, o, o + ts);
      const sigma2 = fr(fr(2 * sumOfSquares(src, xbl, QK)) / QK);
      let maxScale = 0;
      for (let ib = 0; ib < QK / 16; ib++) {
        const max = prepareGroup(src, xbl + 16 * ib, importance, ibl * QK + 16 * ib, 16, sigma2, 255);
        L.fill(0, 0, 16);
        scales[ib] = 0;
        if (max < IQ2_S_MAX_EPS) continue;
        const scale = pairSearch(lat, max, 255);
        for (let k = 0; k < 2; k++) {
          const i8 = 2 * ib + k;
          const g = gridIndexOf(lat, L, 8 * k);
          dst[o + S_AT.qs + i8] = g & 255;
          dst[o + S_AT.qh + (i8 >> 2)]! |= (g >> 8) << (2 * (i8 & 3));
          dst[o + S_AT.signs + i8] = signs[k]!;
        }
        scales[ib] = scale;
        maxScale = maxScale > scale ? maxScale : scale;
      }
      if (maxScale === 0) continue;
      const d = fr(maxScale / 31);
      writeF16(dst, o + S_AT.d, fr(d * IQ2_S_D_FACTOR));
      const id = fr(1 / d);
      for (let ib = 0; ib < QK / 16; ib++)
        dst[o + S_AT.scales + (ib >> 1)]! |= scaleCode(id, scales[ib]!) << (4 * (ib & 1));
    }
  }
};

/** Stores `words` (each `bytes` wide) little-endian at dst[o..]. */
export function writeWords(dst: Uint8Array, o: number, words: Uint32Array | Uint16Array, bytes: number): void {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    for (let b = 0; b < bytes; b++) dst[o + bytes * i + b] = (w >>> (8 * b)) & 0xff;
  }
}
