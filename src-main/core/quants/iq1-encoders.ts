/**
 * f32 rows to IQ1_S, choosing the same grid points, shifts and scales as llama.cpp's
 * quantize_iq1_s, so the bytes come out identical.
 *
 * IQ1_S (50 B per 256 values): f16 d; qs[32], the low 8 bits of an 11-bit grid index per 8 values
 * (2048 entries of 8 values in {-1, 0, 1}); qh[8], a u16 per 32 values: three high index bits per
 * 8 values (bits 0..11), a 3-bit scale s (bits 12..14) and the sign of a shift δ = 1/8 (bit 15).
 * Value = d·(2s + 1)·(grid value ± δ).
 *
 * The search, per 32 values with weights w_j = imatrix_j · sqrt(σ² + x_j²) (σ² twice the mean
 * square of the super-block): with three levels the best split is found exhaustively. Sorting
 * the values, every pair of boundaries (i1 ≤ i2) assigns the lowest values level −1, the middle
 * ones 0 and the highest +1; for both shifts (+δ, −δ) the least-squares scale follows from prefix
 * sums of w·x and w, and the split and shift with the most explained weighted energy win. Each 8
 * levels that are not a grid entry are replaced by the neighbour with the least weighted error,
 * and the scale is refitted to the grid points chosen. The super-block scale is max/15 (stored
 * times 1.125, as ggml does) and each group's scale is coded against it in 3 bits.
 *
 * Needs an importance matrix, as in llama.cpp. Every arithmetic step rounds to f32 where ggml's C
 * code does; the sort keeps equal values in index order, as glibc's qsort (a merge sort) does.
 */
import { checkEncodeSpan, requireImportance, type RowEncoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { writeF16 } from './half-encode';
import { importanceWeights, nearestInt, sumOfSquares } from './scale-search';
import { IQ1_DELTA, IQ1S_GRID } from './iq-tables';
import { buildLattice, type Lattice } from './iq-lattice';

const IQ1_S = ggmlType('IQ1_S');
const AT = blockOffsets('IQ1_S');
const QK = 256;
/** Values per scale. */
const GROUP = 32;
if (IQ1_S.blockSize !== QK) throw new Error('iq1-encoders: unexpected IQ1_S block size');

const fr = Math.fround;
const FLT_MAX = fr(3.4028234663852886e38);
/** ggml's GROUP_MAX_EPS_IQ1_S: a group whose largest magnitude is below this is stored as zero. */
const GROUP_MAX_EPS = fr(1e-12);
/** The level values with the shift added (+δ) and subtracted (−δ). */
const SHIFTED_UP = Float32Array.of(-1 + IQ1_DELTA, IQ1_DELTA, 1 + IQ1_DELTA);
const SHIFTED_DOWN = Float32Array.of(-1 - IQ1_DELTA, -IQ1_DELTA, 1 - IQ1_DELTA);
const [P0, P1, P2] = SHIFTED_UP as unknown as [number, number, number];
const [M0, M1, M2] = SHIFTED_DOWN as unknown as [number, number, number];
/** ggml stores d·1.125 (a correction its authors found to help). */
const D_FUDGE = fr(1.125);

let lattice: Lattice | undefined;

// ---- scratch (one group at a time) ----
const weight = new Float32Array(GROUP);
const L = new Uint8Array(GROUP);
const order: number[] = Array.from({ length: GROUP }, (_, i) => i);
const sumx = new Float32Array(GROUP + 1);
const sumw = new Float32Array(GROUP + 1);
const index = new Uint16Array(GROUP / 8);
const scales = new Float32Array(QK / GROUP);
const shifts = new Int8Array(QK / GROUP);
const qh = new Uint16Array(QK / GROUP);

/** Explained energy of the last tried split: the scale it implies and its score. */
let bestScore = 0;
let scale = 0;

/** Tries the split with prefix sums at i1, i2 under level values v0..v2; true when it is the best so far. */
function trySplit(i1: number, i2: number, v0: number, v1: number, v2: number): boolean {
  const sx = fr(fr(fr(fr(sumx[i1]! - sumx[0]!) * v0) + fr(fr(sumx[i2]! - sumx[i1]!) * v1)) + fr(fr(sumx[GROUP]! - sumx[i2]!) * v2));
  const sq = fr(fr(fr(fr(fr(sumw[i1]! - sumw[0]!) * v0) * v0) + fr(fr(fr(sumw[i2]! - sumw[i1]!) * v1) * v1)) + fr(fr(fr(sumw[GROUP]! - sumw[i2]!) * v2) * v2));
  if (sq > 0 && fr(sx * sx) > fr(bestScore * sq)) {
    scale = fr(sx / sq);
    bestScore = fr(scale * sx);
    return true;
  }
  return false;
}

/**
 * The neighbour of an off-grid key with the least weighted squared error at `s`, level values
 * `xx`, for the 8 values at x[xo..] (weights at weight[wo..]); writes its levels to L[wo..].
 */
function bestNeighbour(lat: Lattice, key: number, x: Float32Array, xo: number, wo: number, s: number, xx: Float32Array): number {
  const levels = lat.levels;
  const list = lat.neighbours(key);
  let best = FLT_MAX;
  let grid = -1;
  for (let j = 0; j < list.length; j++) {
    const at = 8 * list[j]!;
    let d2 = 0;
    for (let i = 0; i < 8; i++) {
      const diff = fr(fr(s * xx[levels[at + i]!]!) - x[xo + i]!);
      d2 = fr(d2 + fr(fr(weight[wo + i]! * diff) * diff));
    }
    if (d2 < best) {
      best = d2;
      grid = list[j]!;
    }
  }
  if (grid < 0) throw new Error('IQ1_S encoder: no grid neighbour has a finite error (non-finite values or weights)');
  for (let i = 0; i < 8; i++) L[wo + i] = levels[8 * grid + i]!;
  return grid;
}

/**
 * Encodes the 32 values at x[xo..] (weights prepared): writes their grid indices into
 * dst[qs..] and the high bits into qh[ib]; returns the group scale (shift in shifts[ib]).
 */
function encodeGroup(lat: Lattice, x: Float32Array, xo: number, ib: number, dst: Uint8Array, qs: number): number {
  shifts[ib] = 1;
  let max = Math.abs(x[xo]!);
  for (let i = 1; i < GROUP; i++) {
    const a = Math.abs(x[xo + i]!);
    max = max > a ? max : a;
  }
  if (max < GROUP_MAX_EPS) return 0;
  for (let j = 0; j < GROUP; j++) order[j] = j;
  order.sort((a, b) => (x[xo + a]! < x[xo + b]! ? -1 : x[xo + a]! > x[xo + b]! ? 1 : 0));
  sumx[0] = sumw[0] = 0;
  for (let j = 0; j < GROUP; j++) {
    const i = order[j]!;
    sumx[j + 1] = sumx[j]! + fr(weight[i]! * x[xo + i]!);
    sumw[j + 1] = sumw[j]! + weight[i]!;
  }
  bestScore = -FLT_MAX;
  scale = max;
  let best1 = -1;
  let best2 = -1;
  let shift = 0;
  for (let i1 = 0; i1 <= GROUP; i1++) {
    for (let i2 = i1; i2 <= GROUP; i2++) {
      if (trySplit(i1, i2, P0, P1, P2)) {
        best1 = i1;
        best2 = i2;
        shift = 1;
      }
      if (trySplit(i1, i2, M0, M1, M2)) {
        best1 = i1;
        best2 = i2;
        shift = -1;
      }
    }
  }
  if (best1 < 0 || best2 < 0 || shift === 0) return 0;
  let s = scale;
  for (let j = 0; j < GROUP; j++) L[order[j]!] = j < best1 ? 0 : j < best2 ? 1 : 2;
  if (s < 0) {
    for (let j = 0; j < GROUP; j++) L[j] = 2 - L[j]!;
    s = -s;
    shift = -shift;
  }
  const xx = shift === 1 ? SHIFTED_UP : SHIFTED_DOWN;
  let allOnGrid = true;
  for (let k = 0; k < GROUP / 8; k++) {
    let key = 0;
    for (let j = 0; j < 8; j++) key |= L[8 * k + j]! << (2 * j);
    let g = lat.index[key]!;
    if (g < 0) {
      allOnGrid = false;
      g = bestNeighbour(lat, key, x, xo + 8 * k, 8 * k, s, xx);
    }
    index[k] = g;
  }
  if (!allOnGrid) {
    let sx = 0;
    let sq = 0;
    for (let k = 0; k < GROUP / 8; k++) {
      const at = 8 * index[k]!;
      for (let j = 0; j < 8; j++) {
        const w = weight[8 * k + j]!;
        const q = xx[lat.levels[at + j]!]!;
        sx = fr(sx + fr(fr(w * q) * x[xo + 8 * k + j]!));
        sq = fr(sq + fr(fr(w * q) * q));
      }
    }
    if (sx > 0 && sq > 0) s = fr(sx / sq);
  }
  let h = 0;
  for (let k = 0; k < GROUP / 8; k++) {
    dst[qs + k] = index[k]! & 255;
    h |= (index[k]! >> 8) << (3 * k);
  }
  qh[ib] = h;
  shifts[ib] = shift;
  return s;
}

export const encodeIQ1_S: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ1_S, src, dst, rows, rowLength, importance);
  requireImportance(IQ1_S, importance);
  const lat = (lattice ??= buildLattice(IQ1S_GRID, [-1, 0, 1], 3));
  const ts = IQ1_S.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      dst.fill(0, o, o + ts);
      qh.fill(0);
      const sigma2 = fr(fr(2 * sumOfSquares(src, xbl, QK)) / QK);
      let maxScale = 0;
      for (let ib = 0; ib < QK / GROUP; ib++) {
        importanceWeights(src, xbl + GROUP * ib, importance, ibl * QK + GROUP * ib, GROUP, sigma2, weight, 0);
        const s = encodeGroup(lat, src, xbl + GROUP * ib, ib, dst, o + AT.qs + (GROUP / 8) * ib);
        scales[ib] = s;
        maxScale = maxScale > s ? maxScale : s;
      }
      if (maxScale !== 0) {
        const d = fr(maxScale / 15);
        writeF16(dst, o + AT.d, fr(d * D_FUDGE));
        const id = fr(1 / d);
        for (let ib = 0; ib < QK / GROUP; ib++) {
          let l = nearestInt(fr(0.5 * fr(fr(id * scales[ib]!) - 1)));
          l = l < 0 ? 0 : l > 7 ? 7 : l;
          if (shifts[ib] === -1) l |= 8;
          qh[ib]! |= l << 12;
        }
      }
      for (let ib = 0; ib < QK / GROUP; ib++) {
        dst[o + AT.qh + 2 * ib] = qh[ib]! & 255;
        dst[o + AT.qh + 2 * ib + 1] = qh[ib]! >>> 8;
      }
    }
  }
};
