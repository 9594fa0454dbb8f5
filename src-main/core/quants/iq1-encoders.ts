/**
 * f32 rows to IQ1_S and IQ1_M, choosing the same grid points, shifts and scales as llama.cpp's
 * quantize_iq1_s and quantize_iq1_m, so the bytes come out identical.
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
import { f32ToF16Bits, writeF16 } from './half-encode';
import { importanceWeights, nearestInt, sumOfSquares } from './scale-search';
import { IQ1_DELTA, IQ1S_GRID } from './iq-tables';
import { buildLattice, type Lattice } from './iq-lattice';

const IQ1_S = ggmlType('IQ1_S');
const IQ1_M = ggmlType('IQ1_M');
const AT = blockOffsets('IQ1_S');
const AT_M = blockOffsets('IQ1_M');
const QK = 256;
/** Values per scale. */
const GROUP = 32;
if (IQ1_S.blockSize !== QK || IQ1_M.blockSize !== QK)
  throw new Error('iq1-encoders: unexpected IQ1_S/IQ1_M block size');

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
/** IQ1_S and IQ1_M share the grid and its search structures (ggml's iq2_data slot 2). */
const iq1Lattice = (): Lattice => (lattice ??= buildLattice(IQ1S_GRID.values, [-1, 0, 1], 3));

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
  const sx = fr(
    fr(fr(fr(sumx[i1]! - sumx[0]!) * v0) + fr(fr(sumx[i2]! - sumx[i1]!) * v1)) + fr(fr(sumx[GROUP]! - sumx[i2]!) * v2),
  );
  const sq = fr(
    fr(fr(fr(fr(sumw[i1]! - sumw[0]!) * v0) * v0) + fr(fr(fr(sumw[i2]! - sumw[i1]!) * v1) * v1)) +
      fr(fr(fr(sumw[GROUP]! - sumw[i2]!) * v2) * v2),
  );
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
function bestNeighbour(
  lat: Lattice,
  key: number,
  x: Float32Array,
  xo: number,
  wo: number,
  s: number,
  xx: Float32Array,
): number {
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
  if (grid < 0) throw new Error('IQ1 encoder: no grid neighbour has a finite error (non-finite values or weights)');
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
  const lat = iq1Lattice();
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

// ---- IQ1_M ----
/*
 * IQ1_M (56 B per 256 values, no d field): qs[32], the low 8 bits of each 8 values' grid index;
 * qh[16], a nibble per 8 values (three high index bits, bit 3 the sign of the shift δ); scales[8],
 * four u16 whose low 12 bits hold four 3-bit scales s (one per 16 values) and whose top nibbles
 * together make the f16 super-scale d. Value = d·(2s + 1)·(grid value ± δ).
 *
 * The search is IQ1_S's per 16 values, except that each half (8 values) has its own shift: for
 * every split the four shift pairs (++, +−, −+, −−) are scored. ggml sums each split afresh in
 * sorted order; the same f32 additions in the same order give the same sums, so the sums up to a
 * boundary are carried over from split to split, and the products are computed once. The
 * super-scale is refitted at the end to all the values and scales chosen.
 */

/** Values per scale. */
const GROUP_M = 16;
const HALF_M = GROUP_M / 2;
/** ggml's GROUP_MAX_EPS_IQ1_M. */
const GROUP_MAX_EPS_M = fr(1e-7);
/** ggml's correction of the refitted super-scale (another fudge factor). */
const D_FUDGE_M = fr(1.1125);
/** The qh bits of each shift pair (first half's sign at bit 3, second half's at bit 7); index is ggml's best_k. */
const SHIFT_MASKS = [0x00, 0x80, 0x08, 0x88] as const;

// ---- scratch (one group of 16 at a time) ----
/** Per sorted position j and level l (3j + l): w·(level value)·x and w·(level value)², for +δ and −δ. */
const plusX = new Float32Array(3 * GROUP_M);
const minusX = new Float32Array(3 * GROUP_M);
const plusQ = new Float32Array(3 * GROUP_M);
const minusQ = new Float32Array(3 * GROUP_M);
const orderM: number[] = Array.from({ length: GROUP_M }, (_, i) => i);
/** Whether sorted position j holds a value of the first half. */
const firstHalf = new Uint8Array(GROUP_M);
/**
 * Running f32 sums for the four shift pairs, w·q·x at 0..3 and w·q² at 4..7 (a Float32Array rounds
 * each sum to f32, as C does): over the values below the first boundary, below the second, and all.
 */
const belowFirst = new Float32Array(8);
const belowSecond = new Float32Array(8);
const sums = new Float32Array(8);
const scalesM = new Float32Array(QK / GROUP_M);
/** ggml's best_k per group: bit 1 set = first half −δ, bit 0 set = second half −δ. */
const shiftsM = new Uint8Array(QK / GROUP_M);

/** Adds the products of sorted position j at level l to the four shift pairs' sums in `acc`. */
function addTerms(acc: Float32Array, j: number, l: number): void {
  const at = 3 * j + l;
  const px = plusX[at]!,
    mx = minusX[at]!,
    pq = plusQ[at]!,
    mq = minusQ[at]!;
  const first = firstHalf[j] === 1;
  acc[0]! += px;
  acc[1]! += first ? px : mx;
  acc[2]! += first ? mx : px;
  acc[3]! += mx;
  acc[4]! += pq;
  acc[5]! += first ? pq : mq;
  acc[6]! += first ? mq : pq;
  acc[7]! += mq;
}

/** The level values of half `k` (0, 1) under shift pair `pair`. */
function halfLevels(pair: number, k: number): Float32Array {
  const minus = k === 0 ? pair >= 2 : pair % 2 === 1;
  return minus ? SHIFTED_DOWN : SHIFTED_UP;
}

/** IQ1_M's weights: ggml's importance weighting, or x² without an importance matrix. */
function weightsM(x: Float32Array, xo: number, importance: Float32Array | null, io: number, sigma2: number): void {
  if (importance) importanceWeights(x, xo, importance, io, GROUP_M, sigma2, weight, 0);
  else for (let i = 0; i < GROUP_M; i++) weight[i] = fr(x[xo + i]! * x[xo + i]!);
}

/**
 * Encodes the 16 values at x[xo..] (weights prepared): writes their grid indices into dst[qs..]
 * and dst[qs + 1], the high bits into dst[qh]; returns the group scale (shift pair in shiftsM[ib]).
 */
function encodeGroupM(
  lat: Lattice,
  x: Float32Array,
  xo: number,
  ib: number,
  dst: Uint8Array,
  qs: number,
  qh: number,
): number {
  shiftsM[ib] = 0;
  let max = Math.abs(x[xo]!);
  for (let i = 1; i < GROUP_M; i++) {
    const a = Math.abs(x[xo + i]!);
    max = max > a ? max : a;
  }
  if (max < GROUP_MAX_EPS_M) return 0;
  for (let j = 0; j < GROUP_M; j++) orderM[j] = j;
  orderM.sort((a, b) => (x[xo + a]! < x[xo + b]! ? -1 : x[xo + a]! > x[xo + b]! ? 1 : 0));
  for (let j = 0; j < GROUP_M; j++) {
    const i = orderM[j]!;
    firstHalf[j] = i < HALF_M ? 1 : 0;
    for (let l = 0; l < 3; l++) {
      const wp = fr(weight[i]! * SHIFTED_UP[l]!);
      const wm = fr(weight[i]! * SHIFTED_DOWN[l]!);
      plusX[3 * j + l] = fr(wp * x[xo + i]!);
      minusX[3 * j + l] = fr(wm * x[xo + i]!);
      plusQ[3 * j + l] = fr(wp * SHIFTED_UP[l]!);
      minusQ[3 * j + l] = fr(wm * SHIFTED_DOWN[l]!);
    }
  }
  let bestScore = -FLT_MAX;
  let scale = max;
  let best1 = -1;
  let best2 = -1;
  let bestPair = -1;
  belowFirst.fill(0);
  for (let i1 = 0; i1 <= GROUP_M; i1++) {
    belowSecond.set(belowFirst);
    for (let i2 = i1; i2 <= GROUP_M; i2++) {
      sums.set(belowSecond);
      for (let j = i2; j < GROUP_M; j++) addTerms(sums, j, 2);
      for (let k = 0; k < 4; k++) {
        const sx = sums[k]!,
          sq = sums[4 + k]!;
        if (sq > 0 && fr(sx * sx) > fr(bestScore * sq)) {
          scale = fr(sx / sq);
          bestScore = fr(scale * sx);
          best1 = i1;
          best2 = i2;
          bestPair = k;
        }
      }
      if (i2 < GROUP_M) addTerms(belowSecond, i2, 1);
    }
    if (i1 < GROUP_M) addTerms(belowFirst, i1, 0);
  }
  if (best1 < 0 || best2 < 0 || bestPair < 0) return 0;
  for (let j = 0; j < GROUP_M; j++) L[orderM[j]!] = j < best1 ? 0 : j < best2 ? 1 : 2;
  if (scale < 0) {
    for (let j = 0; j < GROUP_M; j++) L[j] = 2 - L[j]!;
    scale = -scale;
    bestPair = 3 - bestPair; // both shifts flip sign
  }
  let allOnGrid = true;
  for (let k = 0; k < 2; k++) {
    let key = 0;
    for (let j = 0; j < 8; j++) key |= L[8 * k + j]! << (2 * j);
    let g = lat.index[key]!;
    if (g < 0) {
      allOnGrid = false;
      g = bestNeighbour(lat, key, x, xo + 8 * k, 8 * k, scale, halfLevels(bestPair, k));
    }
    index[k] = g;
  }
  if (!allOnGrid) {
    let sx = 0;
    let sq = 0;
    for (let k = 0; k < 2; k++) {
      const xx = halfLevels(bestPair, k);
      const at = 8 * index[k]!;
      for (let j = 0; j < 8; j++) {
        const w = weight[8 * k + j]!;
        const q = xx[lat.levels[at + j]!]!;
        sx = fr(sx + fr(fr(w * q) * x[xo + 8 * k + j]!));
        sq = fr(sq + fr(fr(w * q) * q));
      }
    }
    if (sx > 0 && sq > 0) scale = fr(sx / sq);
  }
  dst[qs] = index[0]! & 255;
  dst[qs + 1] = index[1]! & 255;
  dst[qh] = (index[0]! >> 8) | ((index[1]! >> 8) << 4);
  shiftsM[ib] = bestPair;
  return scale;
}

/** Sets each group's 3-bit scale and shift bits against d = max/15, then refits d to every value; returns the refitted d. */
function packScalesM(
  lat: Lattice,
  src: Float32Array,
  xbl: number,
  importance: Float32Array | null,
  ibl: number,
  sigma2: number,
  maxScale: number,
  dst: Uint8Array,
  o: number,
): number {
  let d = fr(maxScale / 15);
  const id = fr(1 / d);
  let sx = 0;
  let sq = 0;
  for (let ib = 0; ib < QK / GROUP_M; ib++) {
    let l = nearestInt(fr(0.5 * fr(fr(id * scalesM[ib]!) - 1)));
    l = l < 0 ? 0 : l > 7 ? 7 : l;
    const sc = o + AT_M.scales + 2 * (ib >> 2);
    const bits = l << (3 * (ib % 4));
    dst[sc]! |= bits & 255;
    dst[sc + 1]! |= bits >> 8;
    const qh = o + AT_M.qh + ib;
    dst[qh]! |= SHIFT_MASKS[shiftsM[ib]!]!;
    weightsM(src, xbl + GROUP_M * ib, importance, ibl * QK + GROUP_M * ib, sigma2);
    const mul = 2 * l + 1;
    for (let k = 0; k < 2; k++) {
      const xx = halfLevels(shiftsM[ib]!, k);
      const g = dst[o + AT_M.qs + 2 * ib + k]! | (((dst[qh]! >> (4 * k)) & 7) << 8);
      for (let j = 0; j < 8; j++) {
        const w = weight[8 * k + j]!;
        const q = fr(xx[lat.levels[8 * g + j]!]! * mul);
        sx = fr(sx + fr(fr(w * q) * src[xbl + GROUP_M * ib + 8 * k + j]!));
        sq = fr(sq + fr(fr(w * q) * q));
      }
    }
  }
  if (sq > 0) d = fr(sx / sq);
  return d;
}

/** IQ1_M: llama.cpp writes it without an importance matrix too (weights x²), but its file types require one. */
export const encodeIQ1_M: RowEncoder = (src, dst, rows, rowLength, importance) => {
  checkEncodeSpan(IQ1_M, src, dst, rows, rowLength, importance);
  const lat = iq1Lattice();
  const ts = IQ1_M.typeSize;
  const nb = rowLength / QK;
  let o = 0;
  for (let r = 0; r < rows; r++) {
    for (let ibl = 0; ibl < nb; ibl++, o += ts) {
      const xbl = r * rowLength + ibl * QK;
      dst.fill(0, o, o + ts);
      const sigma2 = fr(fr(2 * sumOfSquares(src, xbl, QK)) / QK);
      let maxScale = 0;
      for (let ib = 0; ib < QK / GROUP_M; ib++) {
        weightsM(src, xbl + GROUP_M * ib, importance, ibl * QK + GROUP_M * ib, sigma2);
        const s = encodeGroupM(lat, src, xbl + GROUP_M * ib, ib, dst, o + AT_M.qs + 2 * ib, o + AT_M.qh + ib);
        scalesM[ib] = s;
        maxScale = maxScale > s ? maxScale : s;
      }
      if (maxScale === 0) continue;
      const d = f32ToF16Bits(fr(packScalesM(lat, src, xbl, importance, ibl, sigma2, maxScale, dst, o) * D_FUDGE_M));
      // The f16 d, a nibble at the top of each scale word.
      for (let w = 0; w < 4; w++) dst[o + AT_M.scales + 2 * w + 1]! |= ((d >> (4 * w)) & 15) << 4;
    }
  }
};
