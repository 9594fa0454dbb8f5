/**
 * The k-quants (256-value super-blocks, ggml-common.h), decoded to f32 exactly as ggml's
 * dequantize_row_* does: the same sub-block scales and the same f32 results. `src` may sit at any
 * byte offset.
 *
 * Field offsets come from the type table's block layouts (ggml-types.ts), read once per call:
 * Q2_K: scales[16] (low nibble scale, high nibble min), qs[64], f16 d, f16 dmin
 * Q3_K: hmask[32], qs[64], scales[12] (sixteen 6-bit scales, biased by 32), f16 d
 * Q4_K: f16 d, f16 dmin, scales[12] (eight 6-bit scale/min pairs), qs[128]
 * Q5_K: f16 d, f16 dmin, scales[12], qh[32], qs[128]
 * Q6_K: ql[128], qh[64], int8 scales[16], f16 d
 * Q8_K: f32 d, int8 qs[256], int16 bsums[16] (bsums are not needed to decode)
 *
 * Rounding: ggml rounds d·scale to f32, then multiplies by q (and subtracts min·m). An f16 times a
 * ≤ 8-bit integer is exact in f32, so no intermediate rounding is needed; the remaining product
 * (≤ 25 significant bits) is exact in f64 and the store into the Float32Array rounds it once, as
 * f32 arithmetic does; a difference of two f32 values computed in f64 and rounded once to f32 is
 * also the f32 difference (f64 has more than 2·24 + 2 bits).
 */
import { checkSpan, type BlockDecoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { f16Table } from './half';
import { wasmBlockDecoder } from '../wasm/decoders';

const Q2_K = ggmlType('Q2_K');
const Q2_K_AT = blockOffsets('Q2_K');
const Q3_K = ggmlType('Q3_K');
const Q3_K_AT = blockOffsets('Q3_K');
const Q4_K = ggmlType('Q4_K');
const Q5_K = ggmlType('Q5_K');
const Q6_K = ggmlType('Q6_K');
const Q8_K = ggmlType('Q8_K');
const Q8_K_AT = blockOffsets('Q8_K');

/**
 * Q2_K: 128 values per 32 qs bytes; 2-bit field s (s = 0..3) of byte l (l = 0..31) is value
 * 32s + l, in sub-block 2s + (l ≥ 16) whose scale byte is scales[8n + 2s + (l ≥ 16)].
 */
export const decodeQ2_K: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q2_K, src, dst, blocks);
  const h = f16Table();
  const ts = Q2_K.typeSize;
  const { scales: SC, qs: QS, d: D, dmin: DMIN } = Q2_K_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts) {
    const d = h[src[o + D]! | (src[o + D + 1]! << 8)]!;
    const min = h[src[o + DMIN]! | (src[o + DMIN + 1]! << 8)]!;
    for (let n = 0; n < 2; n++, y += 128) {
      const q = o + QS + 32 * n;
      for (let half = 0; half < 2; half++) {
        const s = o + SC + 8 * n + half;
        const sc0 = src[s]!;
        const sc1 = src[s + 2]!;
        const sc2 = src[s + 4]!;
        const sc3 = src[s + 6]!;
        const d0 = d * (sc0 & 15), m0 = min * (sc0 >> 4);
        const d1 = d * (sc1 & 15), m1 = min * (sc1 >> 4);
        const d2 = d * (sc2 & 15), m2 = min * (sc2 >> 4);
        const d3 = d * (sc3 & 15), m3 = min * (sc3 >> 4);
        const qq = q + 16 * half;
        const z0 = y + 16 * half;
        for (let l = 0; l < 16; l++) {
          const v = src[qq + l]!;
          const z = z0 + l;
          dst[z] = d0 * (v & 3) - m0;
          dst[z + 32] = d1 * ((v >> 2) & 3) - m1;
          dst[z + 64] = d2 * ((v >> 4) & 3) - m2;
          dst[z + 96] = d3 * (v >> 6) - m3;
        }
      }
    }
  }
};

/** Q3_K's 6-bit scale k (0..15), unbiased: low 4 bits in scales[k % 8] (high nibble for k ≥ 8), high 2 bits in scales[8 + k % 4]. */
export function q3kScale(src: Uint8Array, sc: number, k: number): number {
  const lo = k < 8 ? src[sc + k]! & 15 : src[sc + k - 8]! >> 4;
  const hi = (src[sc + 8 + (k & 3)]! >> (2 * (k >> 2))) & 3;
  return (lo | (hi << 4)) - 32;
}

/**
 * Q3_K: like Q2_K's layout for the low 2 bits; the third bit of value 32s + l (in the 128-value
 * half n) is bit 4n + s of hmask[l], and a clear bit subtracts 4.
 */
export const decodeQ3_K: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q3_K, src, dst, blocks);
  const h = f16Table();
  const ts = Q3_K.typeSize;
  const { hmask: HM, qs: QS, scales: SC, d: D } = Q3_K_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts) {
    const d = h[src[o + D]! | (src[o + D + 1]! << 8)]!;
    const sc = o + SC;
    for (let n = 0; n < 2; n++, y += 128) {
      const q = o + QS + 32 * n;
      const hb = 4 * n;
      for (let half = 0; half < 2; half++) {
        const k = 8 * n + half;
        const d0 = d * q3kScale(src, sc, k);
        const d1 = d * q3kScale(src, sc, k + 2);
        const d2 = d * q3kScale(src, sc, k + 4);
        const d3 = d * q3kScale(src, sc, k + 6);
        const qq = q + 16 * half;
        const hh = o + HM + 16 * half;
        const z0 = y + 16 * half;
        for (let l = 0; l < 16; l++) {
          const v = src[qq + l]!;
          const m = src[hh + l]! >> hb;
          const z = z0 + l;
          dst[z] = d0 * ((v & 3) - 4 + ((m & 1) << 2));
          dst[z + 32] = d1 * (((v >> 2) & 3) - 4 + ((m & 2) << 1));
          dst[z + 64] = d2 * (((v >> 4) & 3) - 4 + (m & 4));
          dst[z + 96] = d3 * ((v >> 6) - 4 + ((m & 8) >> 1));
        }
      }
    }
  }
};

/**
 * Q4_K/Q5_K scale and min of sub-block i (0..7), 6 bits each: for i < 4 the low 6 bits of bytes i
 * (scale) and i + 4 (min); for i ≥ 4 the nibbles of byte i + 4 (low: scale, high: min) plus the top
 * 2 bits of bytes i − 4 (scale) and i (min).
 */
export function kScale(src: Uint8Array, s: number, i: number): number {
  return i < 4 ? src[s + i]! & 63 : (src[s + i + 4]! & 15) | ((src[s + i - 4]! >> 6) << 4);
}
export function kMin(src: Uint8Array, s: number, i: number): number {
  return i < 4 ? src[s + i + 4]! & 63 : (src[s + i + 4]! >> 4) | ((src[s + i]! >> 6) << 4);
}

/** Q4_K: 64 values per 32 qs bytes: low nibbles are sub-block 2j, high nibbles sub-block 2j + 1. */
export const decodeQ4_K: BlockDecoder = wasmBlockDecoder(Q4_K, 'decodeQ4_K');

/** Q5_K: Q4_K's layout plus a fifth bit: bit 2j of qh[l] for sub-block 2j, bit 2j + 1 for 2j + 1. */
export const decodeQ5_K: BlockDecoder = wasmBlockDecoder(Q5_K, 'decodeQ5_K');

/**
 * Q6_K: per 128 values, ql[64] (4 low bits) and qh[32] (2 high bits): byte l of ql and qh gives
 * values l and l + 64 (low/high nibble of ql[l], bits 0–1 and 4–5 of qh[l]), byte l + 32 of ql gives
 * values l + 32 and l + 96 (bits 2–3 and 6–7 of qh[l]); value − 32, times d · scales[value / 16].
 */
export const decodeQ6_K: BlockDecoder = wasmBlockDecoder(Q6_K, 'decodeQ6_K');

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

export const decodeQ8_K: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q8_K, src, dst, blocks);
  const ts = Q8_K.typeSize;
  const s8 = new Int8Array(src.buffer, src.byteOffset, src.length);
  const { d: D, qs: QS } = Q8_K_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts, y += 256) {
    const at = o + D;
    u32Scratch[0] = src[at]! | (src[at + 1]! << 8) | (src[at + 2]! << 16) | (src[at + 3]! << 24);
    const d = f32Scratch[0]!;
    const q = o + QS;
    for (let j = 0; j < 256; j += 8) {
      const z = y + j;
      const p = q + j;
      dst[z] = d * s8[p]!;
      dst[z + 1] = d * s8[p + 1]!;
      dst[z + 2] = d * s8[p + 2]!;
      dst[z + 3] = d * s8[p + 3]!;
      dst[z + 4] = d * s8[p + 4]!;
      dst[z + 5] = d * s8[p + 5]!;
      dst[z + 6] = d * s8[p + 6]!;
      dst[z + 7] = d * s8[p + 7]!;
    }
  }
};
