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
 * That search runs in WebAssembly (assembly/iq3-search.ts); this file prepares each group and packs the blocks.
 * Neither needs an importance matrix in ggml; llama-quantize refuses IQ3_XXS tensors without one.
 */
import { checkEncodeSpan, type RowEncoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { writeF16 } from './half-encode';
import { importanceWeights, sumOfSquares } from './scale-search';
import { IQ3S_GRID, IQ3XXS_GRID } from './iq-tables';
import { buildLattice, type Lattice } from './iq-lattice';
import { iq3Search, type Iq3Search } from '../wasm/iq3-search';
import { foldSigns, scaleCode, writeWords } from './iq2-encoders';

const IQ3_XXS = ggmlType('IQ3_XXS');
const IQ3_S = ggmlType('IQ3_S');
const XXS_AT = blockOffsets('IQ3_XXS');
const AT = blockOffsets('IQ3_S');
const QK = 256;
const GROUP = 32;
if (IQ3_S.blockSize !== QK || IQ3_XXS.blockSize !== QK) throw new Error('iq3-encoders: unexpected IQ3 block size');

const fr = Math.fround;
/** ggml stores d a little above max scale / 31 (its d · 1.033f for IQ3_S, d · 1.0125f for IQ3_XXS). */
const D_FACTOR = fr(1.033);
const XXS_D_FACTOR = fr(1.0125);
/** ggml's GROUP_MAX_EPS_IQ3_XXS: groups whose largest value is below it are stored as zeros. */
const XXS_MAX_EPS = fr(1e-8);
/** The grid values the IQ3_XXS decoder table holds for levels 0..7 (the encoder works with 1, 3, ..., 15). */
const XXS_GRID_VALUES = [4, 12, 20, 28, 36, 44, 52, 62] as const;

/** A type's lattice and its WebAssembly group search (this thread's, made on first use). */
interface Iq3Type {
  readonly lat: Lattice;
  readonly search: Iq3Search;
}
let iq3s: Iq3Type | undefined;
let iq3xxs: Iq3Type | undefined;

function iq3Type(lat: Lattice): Iq3Type {
  return { lat, search: iq3Search(lat) };
}

// ---- scratch (one super-block at a time) ----
const signs = new Uint8Array(GROUP / 8);
const scales = new Float32Array(QK / GROUP);
/** IQ3_XXS: per 32 values, four 7-bit sign indices and the 4-bit scale (bits 28..31). */
const signsAndScales = new Uint32Array(QK / GROUP);

/** The grid index of the 4 levels at levels[o..] (they must be a grid entry). */
function gridIndexOf(lat: Lattice, levels: Uint8Array, o: number): number {
  let key = 0;
  for (let i = 0; i < 4; i++) key |= levels[o + i]! << (3 * i);
  const g = lat.index[key]!;
  if (g < 0)
    throw new Error(`IQ3 encoder: levels ${Array.from(levels.subarray(o, o + 4)).join(' ')} are not on the grid`);
  return g;
}

/**
 * How the two types search a group (assembly/iq3-search.ts groupScale): `steps` scales either
 * side of the first guess; `resnapAll`: once a kept group was off the grid, IQ3_S re-snaps all 8
 * groups with the final scale (and starts with every group marked off the grid), IQ3_XXS only
 * the groups off it.
 */
interface GroupSearch {
  readonly steps: number;
  readonly resnapAll: boolean;
}
const IQ3_S_SEARCH: GroupSearch = { steps: 9, resnapAll: true };
const IQ3_XXS_SEARCH: GroupSearch = { steps: 15, resnapAll: false };

/** Weights of the 32 values at src[xo..] (importance at qo; without it, x² as ggml does) and their square roots. */
function prepareWeights(
  search: Iq3Search,
  src: Float32Array,
  xo: number,
  importance: Float32Array | null,
  qo: number,
  sigma2: number,
): void {
  const { w, waux } = search;
  if (importance) importanceWeights(src, xo, importance, qo, GROUP, sigma2, w, 0);
  else for (let i = 0; i < GROUP; i++) w[i] = fr(src[xo + i]! * src[xo + i]!);
  for (let i = 0; i < GROUP; i++) waux[i] = fr(Math.sqrt(w[i]!));
}

/** The largest of the 32 values in x. */
function groupMax(x: Float32Array): number {
  let max = x[0]!;
  for (let i = 1; i < GROUP; i++) max = max > x[i]! ? max : x[i]!;
  return max;
}

/** Works without an importance matrix too (weights x², as ggml does). */
export const encodeIQ3_S: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ3_S, src, dst, rows, rowLength, importance);
  const { lat, search } = (iq3s ??= iq3Type(buildLattice(IQ3S_GRID.values, [1, 3, 5, 7, 9, 11, 13, 15], 3, 4, 3)));
  const { x: xval, levels: L } = search;
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
        prepareWeights(search, src, xo, importance, ibl * QK + GROUP * ib, sigma2);
        signs.fill(0);
        for (let i = 0; i < GROUP; i++) {
          const v = src[xo + i]!;
          if (v >= 0) xval[i] = v;
          else {
            xval[i] = -v;
            signs[i >> 3]! |= 1 << (i & 7);
          }
        }
        const max = groupMax(xval);
        L.fill(0);
        scales[ib] = 0;
        if (max === 0) continue;
        let scale = search.groupScale(max, IQ3_S_SEARCH.steps, IQ3_S_SEARCH.resnapAll);
        if (scale < 0) {
          scale = -scale;
          for (let k = 0; k < GROUP / 8; k++) signs[k] = ~signs[k]! & 255;
        }
        for (let k = 0; k < GROUP / 4; k++) {
          const g = gridIndexOf(lat, L, 4 * k);
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
      for (let ib = 0; ib < QK / GROUP; ib += 2)
        dst[o + AT.scales + ib / 2] = scaleCode(id, scales[ib]!) | (scaleCode(id, scales[ib + 1]!) << 4);
    }
  }
};

/**
 * Works without an importance matrix too (weights x², as ggml does; llama-quantize refuses
 * IQ3_XXS tensors without one, see quant-recipes.ts).
 */
export const encodeIQ3_XXS: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ3_XXS, src, dst, rows, rowLength, importance);
  const { lat, search } = (iq3xxs ??= iq3Type(buildLattice(IQ3XXS_GRID.values, XXS_GRID_VALUES, 2, 4, 3)));
  const { x: xval, w: weight, levels: L } = search;
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
        prepareWeights(search, src, xo, importance, ibl * QK + GROUP * ib, sigma2);
        for (let k = 0; k < GROUP / 8; k++) signs[k] = foldSigns(src, xo + 8 * k, weight, xval, 8 * k, 127);
        const max = groupMax(xval);
        L.fill(0);
        scales[ib] = 0;
        if (max < XXS_MAX_EPS) continue;
        let scale = search.groupScale(max, IQ3_XXS_SEARCH.steps, IQ3_XXS_SEARCH.resnapAll);
        if (scale < 0) {
          scale = -scale;
          for (let k = 0; k < GROUP / 8; k++) signs[k] = ~signs[k]! & 127;
        }
        for (let k = 0; k < GROUP / 4; k++) dst[o + XXS_AT.qs + (GROUP / 4) * ib + k] = gridIndexOf(lat, L, 4 * k);
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
