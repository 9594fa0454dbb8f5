/**
 * The k-quants (256-value super-blocks, ggml-common.h), decoded to f32 exactly as ggml's
 * dequantize_row_* does, in WebAssembly SIMD (assembly/decoders.ts): the same sub-block scales and
 * the same f32 results. `src` may sit at any byte offset. The scale helpers below are the same
 * unpacking in JavaScript, for the block inspector (block-fields.ts).
 *
 * Q2_K: scales[16] (low nibble scale, high nibble min), qs[64], f16 d, f16 dmin
 * Q3_K: hmask[32], qs[64], scales[12] (sixteen 6-bit scales, biased by 32), f16 d
 * Q4_K: f16 d, f16 dmin, scales[12] (eight 6-bit scale/min pairs), qs[128]
 * Q5_K: f16 d, f16 dmin, scales[12], qh[32], qs[128]
 * Q6_K: ql[128], qh[64], int8 scales[16], f16 d
 * Q8_K: f32 d, int8 qs[256], int16 bsums[16] (bsums are not needed to decode)
 *
 * Rounding: ggml rounds d·scale to f32, then multiplies by q (and subtracts min·m), and so do the
 * f32x4 lanes, in the same operand order (NaN payloads of corrupt blocks match too). An f16 times a
 * ≤ 8-bit integer is exact in f32, so d·scale is exact; the product with q rounds once, as in ggml.
 */
import type { BlockDecoder } from './codec';
import { ggmlType } from '../ggml-types';
import { wasmBlockDecoder } from '../wasm/decoders';

const Q2_K = ggmlType('Q2_K');
const Q3_K = ggmlType('Q3_K');
const Q4_K = ggmlType('Q4_K');
const Q5_K = ggmlType('Q5_K');
const Q6_K = ggmlType('Q6_K');
const Q8_K = ggmlType('Q8_K');

/**
 * Q2_K: 128 values per 32 qs bytes; 2-bit field s (s = 0..3) of byte l (l = 0..31) is value
 * 32s + l, in sub-block 2s + (l ≥ 16) whose scale byte is scales[8n + 2s + (l ≥ 16)].
 */
export const decodeQ2_K: BlockDecoder = wasmBlockDecoder(Q2_K, 'decodeQ2_K');

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
export const decodeQ3_K: BlockDecoder = wasmBlockDecoder(Q3_K, 'decodeQ3_K');

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

export const decodeQ8_K: BlockDecoder = wasmBlockDecoder(Q8_K, 'decodeQ8_K');
