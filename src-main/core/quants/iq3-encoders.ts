/**
 * f32 rows to IQ3_XXS and IQ3_S, choosing the same grid points, signs and scales as llama.cpp's
 * quantize_iq3_xxs / quantize_iq3_s (quantize_row_iq3_xxs_impl, quantize_row_iq3_s_impl), so the
 * bytes come out identical.
 *
 * Both store groups of 4 values as an entry of a 4-dimensional grid (values 1, 3, ..., 15 in
 * units of a scale; levels 0..7) and a 4-bit scale s per 32 values, stored as
 * s = round((scale/d − 1)/2) with d = the largest group scale / 31. Layouts (see ggml-types.ts):
 *   IQ3_XXS (98 B per 256): f16 d (written ×1.0125); qs[64], one 8-bit index per 4 values into a
 *     grid of 256; per 32 values a u32 of four 7-bit sign indices (as IQ2_XXS: the 8th sign of
 *     each 8 is implied, an even number being negated) and s in bits 28..31
 *   IQ3_S (110 B per 256): f16 d (written ×1.033); qs[64], the low 8 bits of each index into a
 *     grid of 512; qh[8], per 32 values the 9th bit of its 8 indices; signs[32], one bit per
 *     value; scales[4], two 4-bit s per byte
 *
 * The search, per 32 values with weights w_j = imatrix_j · sqrt(σ² + x_j²) (σ² twice the mean
 * square of the super-block; x² without an importance matrix): take |x| (IQ3_XXS keeps the
 * cheapest sign of an odd-negative 8 flipped), try scales around the largest value (31 for
 * IQ3_XXS, 19 for IQ3_S), snapping each 4 values to the nearest grid entry (or the best of its
 * neighbours when rounding lands off the grid), keep the least-squares scale that explains most
 * of the weighted energy, and when a kept group was off the grid re-snap with it (IQ3_XXS the
 * groups off the grid, IQ3_S all 8). Every arithmetic step rounds to f32 where ggml's C code does.
 * Neither needs an importance matrix in ggml; llama-quantize refuses IQ3_XXS tensors without one.
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { writeF16 } from './half-encode';
import { importanceWeights, sumOfSquares } from './scale-search';
import { IQ3S_GRID, IQ3XXS_GRID } from './iq-tables';
import { buildLattice, oddLevelSums, type Lattice } from './iq-lattice';
import { foldSigns, ggmlNearestInt, scaleCode, writeWords } from './iq2-encoders';

const IQ3_XXS = ggmlType('IQ3_XXS');
const IQ3_S = ggmlType('IQ3_S');
const XXS_AT = blockOffsets('IQ3_XXS');
const AT = blockOffsets('IQ3_S');
const QK = 256;
const GROUP = 32;
if (IQ3_S.blockSize !== QK || IQ3_XXS.blockSize !== QK) throw new Error('iq3-encoders: unexpected IQ3 block size');

const fr = Math.fround;
const F02 = fr(0.2);
const FLT_MAX = fr(3.4028234663852886e38);
/** Largest level (grid values 1, 3, ..., 15 are levels 0..7). */
const MAX_LEVEL = 7;
/** ggml stores d a little above max scale / 31 (its d · 1.033f for IQ3_S, d · 1.0125f for IQ3_XXS). */
const D_FACTOR = fr(1.033);
const XXS_D_FACTOR = fr(1.0125);
/** ggml's GROUP_MAX_EPS_IQ3_XXS: groups whose largest value is below it are stored as zeros. */
const XXS_MAX_EPS = fr(1e-8);
/** The grid values the IQ3_XXS decoder table holds for levels 0..7 (the encoder works with 1, 3, ..., 15). */
const XXS_GRID_VALUES = [4, 12, 20, 28, 36, 44, 52, 62] as const;

let lattice: Lattice | undefined;
let xxsLattice: Lattice | undefined;

// ---- scratch (one group of 32 at a time) ----
const weight = new Float32Array(GROUP);
const waux = new Float32Array(GROUP);
const xval = new Float32Array(GROUP);
const L = new Uint8Array(GROUP);
const Laux = new Uint8Array(GROUP);
const onGrid = new Array<boolean>(GROUP / 4).fill(false);
const onGridAux = new Array<boolean>(GROUP / 4).fill(false);
const signs = new Uint8Array(GROUP / 8);
const scales = new Float32Array(QK / GROUP);
/** IQ3_XXS: per 32 values, four 7-bit sign indices and the 4-bit scale (bits 28..31). */
const signsAndScales = new Uint32Array(QK / GROUP);

/** scale · (2l + 1) for each level l at the scale candidates are scored at (set by scaleLevels, once per scale tried). */
const scaledLevels = new Float32Array(MAX_LEVEL + 1);

function scaleLevels(scale: number): void {
  for (let l = 0; l <= MAX_LEVEL; l++) scaledLevels[l] = fr(scale * (2 * l + 1));
}

/**
 * Rounds the 4 values at xval[o..] at inverse scale `id` to levels and writes to out[o..] the
 * levels of the grid entry chosen: the rounded point when on the grid (returns true), else the
 * neighbour with the least waux-weighted error at the scale of scaledLevels (returns false).
 */
function snap(lat: Lattice, o: number, id: number, out: Uint8Array): boolean {
  let key = 0;
  for (let i = 0; i < 4; i++) {
    let l = ggmlNearestInt(fr(0.5 * fr(fr(id * xval[o + i]!) - 1)));
    l = l < 0 ? 0 : l > MAX_LEVEL ? MAX_LEVEL : l;
    out[o + i] = l;
    key |= l << (3 * i);
  }
  if (lat.index[key]! >= 0) return true;
  const list = lat.neighbours(key);
  let best = FLT_MAX;
  let grid = -1;
  for (let j = 0; j < list.length; j++) {
    const at = 4 * list[j]!;
    let d2 = 0;
    for (let i = 0; i < 4; i++) {
      const diff = fr(scaledLevels[lat.levels[at + i]!]! - xval[o + i]!);
      d2 = fr(d2 + fr(fr(waux[o + i]! * diff) * diff));
    }
    if (d2 < best) {
      best = d2;
      grid = list[j]!;
    }
  }
  if (grid < 0) throw new Error('IQ3 encoder: no grid neighbour has a finite error (non-finite values or weights)');
  for (let i = 0; i < 4; i++) out[o + i] = lat.levels[4 * grid + i]!;
  return false;
}

/** The grid index of the 4 levels at L[o..] (they must be a grid entry). */
function gridIndexOf(lat: Lattice, o: number): number {
  let key = 0;
  for (let i = 0; i < 4; i++) key |= L[o + i]! << (3 * i);
  const g = lat.index[key]!;
  if (g < 0) throw new Error(`IQ3 encoder: levels ${Array.from(L.subarray(o, o + 4)).join(' ')} are not on the grid`);
  return g;
}

/**
 * How the two types search a group: `steps` scales either side of the first guess; `resnapAll`:
 * once a kept group was off the grid, IQ3_S re-snaps all 8 groups with the final scale (and
 * starts with every group marked off the grid), IQ3_XXS only the groups off it.
 */
interface GroupSearch {
  readonly steps: number;
  readonly resnapAll: boolean;
}
const IQ3_S_SEARCH: GroupSearch = { steps: 9, resnapAll: true };
const IQ3_XXS_SEARCH: GroupSearch = { steps: 15, resnapAll: false };

/** The scale of the 32 values prepared in xval, whose largest is `max`; leaves their levels in L. */
function groupScale(lat: Lattice, max: number, search: GroupSearch): number {
  let best = 0;
  let scale = fr(max / (2 * MAX_LEVEL + 1));
  onGrid.fill(!search.resnapAll);
  for (let is = -search.steps; is <= search.steps; is++) {
    const id = fr(fr(2 * MAX_LEVEL + 1 + fr(is * F02)) / max);
    scaleLevels(fr(1 / id));
    for (let k = 0; k < GROUP / 4; k++) onGridAux[k] = snap(lat, 4 * k, id, Laux);
    const sums = oddLevelSums(weight, xval, Laux, GROUP);
    if (sums.sumq2 > 0 && fr(sums.sumqx * sums.sumqx) > fr(best * sums.sumq2)) {
      scale = fr(sums.sumqx / sums.sumq2);
      best = fr(scale * sums.sumqx);
      L.set(Laux);
      for (let k = 0; k < GROUP / 4; k++) onGrid[k] = onGridAux[k]!;
    }
  }
  if (onGrid.includes(false) && scale > 0) {
    const id = fr(1 / scale);
    scaleLevels(scale);
    for (let k = 0; k < GROUP / 4; k++) if (search.resnapAll || !onGrid[k]) snap(lat, 4 * k, id, L);
    const sums = oddLevelSums(weight, xval, L, GROUP);
    if (sums.sumq2 > 0) scale = fr(sums.sumqx / sums.sumq2);
  }
  return scale;
}

/** Weights of the 32 values at src[xo..] (importance at qo; without it, x² as ggml does) and their square roots. */
function prepareWeights(src: Float32Array, xo: number, importance: Float32Array | null, qo: number, sigma2: number): void {
  if (importance) importanceWeights(src, xo, importance, qo, GROUP, sigma2, weight, 0);
  else for (let i = 0; i < GROUP; i++) weight[i] = fr(src[xo + i]! * src[xo + i]!);
  for (let i = 0; i < GROUP; i++) waux[i] = fr(Math.sqrt(weight[i]!));
}

/** The largest of the 32 values in xval. */
function groupMax(): number {
  let max = xval[0]!;
  for (let i = 1; i < GROUP; i++) max = max > xval[i]! ? max : xval[i]!;
  return max;
}

/** Works without an importance matrix too (weights x², as ggml does). */
export const encodeIQ3_S: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ3_S, src, dst, rows, rowLength, importance);
  const lat = (lattice ??= buildLattice(IQ3S_GRID.values, [1, 3, 5, 7, 9, 11, 13, 15], 3, 4, 3));
  const ts = IQ3_S.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      dst.fill(0, o, o + ts);
      const sigma2 = fr(fr(2 * sumOfSquares(src, xbl, QK)) / QK);
      let maxScale = 0;
      // ggml advances its qs and signs cursors only past groups it stores: a group of zeros
      // leaves no room, and the next group's indices and signs move up into its place.
      let qsAt = o + AT.qs;
      let signsAt = o + AT.signs;
      for (let ib = 0; ib < QK / GROUP; ib++) {
        const xo = xbl + GROUP * ib;
        prepareWeights(src, xo, importance, ibl * QK + GROUP * ib, sigma2);
        signs.fill(0);
        for (let i = 0; i < GROUP; i++) {
          const v = src[xo + i]!;
          if (v >= 0) xval[i] = v;
          else {
            xval[i] = -v;
            signs[i >> 3]! |= 1 << (i & 7);
          }
        }
        const max = groupMax();
        L.fill(0);
        scales[ib] = 0;
        if (max === 0) continue;
        let scale = groupScale(lat, max, IQ3_S_SEARCH);
        if (scale < 0) {
          scale = -scale;
          for (let k = 0; k < GROUP / 8; k++) signs[k] = ~signs[k]! & 255;
        }
        for (let k = 0; k < GROUP / 4; k++) {
          const g = gridIndexOf(lat, 4 * k);
          dst[qsAt++] = g & 255;
          dst[o + AT.qh + ib]! |= (g >> 8) << k;
        }
        for (let k = 0; k < GROUP / 8; k++) dst[signsAt++] = signs[k]!;
        scales[ib] = scale;
        maxScale = maxScale > scale ? maxScale : scale;
      }
      if (maxScale === 0) continue;
      const d = fr(maxScale / 31);
      writeF16(dst, o + AT.d, fr(d * D_FACTOR));
      const id = fr(1 / d);
      for (let ib = 0; ib < QK / GROUP; ib += 2) dst[o + AT.scales + ib / 2] = scaleCode(id, scales[ib]!) | (scaleCode(id, scales[ib + 1]!) << 4);
    }
  }
};

/**
 * Works without an importance matrix too (weights x², as ggml does; llama-quantize refuses
 * IQ3_XXS tensors without one, see quant-recipes.ts).
 */
export const encodeIQ3_XXS: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ3_XXS, src, dst, rows, rowLength, importance);
  const lat = (xxsLattice ??= buildLattice(IQ3XXS_GRID.values, XXS_GRID_VALUES, 2, 4, 3));
  const ts = IQ3_XXS.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      dst.fill(0, o, o + ts);
      signsAndScales.fill(0);
      const sigma2 = fr(fr(2 * sumOfSquares(src, xbl, QK)) / QK);
      let maxScale = 0;
      for (let ib = 0; ib < QK / GROUP; ib++) {
        const xo = xbl + GROUP * ib;
        prepareWeights(src, xo, importance, ibl * QK + GROUP * ib, sigma2);
        for (let k = 0; k < GROUP / 8; k++) signs[k] = foldSigns(src, xo + 8 * k, weight, xval, 8 * k, 127);
        const max = groupMax();
        L.fill(0);
        scales[ib] = 0;
        if (max < XXS_MAX_EPS) continue;
        let scale = groupScale(lat, max, IQ3_XXS_SEARCH);
        if (scale < 0) {
          scale = -scale;
          for (let k = 0; k < GROUP / 8; k++) signs[k] = ~signs[k]! & 127;
        }
        for (let k = 0; k < GROUP / 4; k++) dst[o + XXS_AT.qs + (GROUP / 4) * ib + k] = gridIndexOf(lat, 4 * k);
        signsAndScales[ib] = signs[0]! | (signs[1]! << 7) | (signs[2]! << 14) | (signs[3]! << 21);
        scales[ib] = scale;
        maxScale = maxScale > scale ? maxScale : scale;
      }
      // A super-block of zero scales is stored as zeros, whatever was found.
      if (maxScale === 0) {
        dst.fill(0, o, o + ts);
        continue;
      }
      const d = fr(maxScale / 31);
      writeF16(dst, o + XXS_AT.d, fr(d * XXS_D_FACTOR));
      const id = fr(1 / d);
      for (let ib = 0; ib < QK / GROUP; ib++) signsAndScales[ib]! |= scaleCode(id, scales[ib]!) << 28;
      writeWords(dst, o + XXS_AT.signs_scales, signsAndScales, 4);
    }
  }
};
