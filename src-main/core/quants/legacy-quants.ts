/**
 * The original 32-value block quants (ggml-common.h), decoded to f32 exactly as ggml's
 * dequantize_row_* does, in WebAssembly SIMD (assembly/decoders.ts). `src` may sit at any byte offset.
 *
 * Q4_0: f16 d, qs[16]          value = (nibble − 8) · d
 * Q4_1: f16 d, f16 m, qs[16]   value = nibble · d + m
 * Q5_0: f16 d, qh[4], qs[16]   value = (nibble | fifth bit << 4 − 16) · d
 * Q5_1: f16 d, f16 m, qh[4], qs[16]   value = (nibble | fifth bit << 4) · d + m
 * Q8_0: f16 d, int8 qs[32]     value = q · d
 * Within a block, byte j's low nibble is value j and its high nibble value j + 16; bit j of the
 * little-endian qh word is the fifth bit of value j.
 *
 * Rounding: ggml computes in f32, and so do the f32x4 lanes. A small integer times an f16 scale
 * (≤ 5 + 11 significant bits) is exact in f32, so q·d needs no intermediate rounding and (q·d) + m
 * rounds once, as in ggml. The operands keep ggml's order, so a NaN d wins over a NaN m and
 * 0 · ±inf gives the x86 default NaN, as there.
 */
import type { BlockDecoder } from './codec';
import { ggmlType } from '../ggml-types';
import { wasmBlockDecoder } from '../wasm/decoders';

export const decodeQ4_0: BlockDecoder = wasmBlockDecoder(ggmlType('Q4_0'), 'decodeQ4_0');
export const decodeQ4_1: BlockDecoder = wasmBlockDecoder(ggmlType('Q4_1'), 'decodeQ4_1');
export const decodeQ5_0: BlockDecoder = wasmBlockDecoder(ggmlType('Q5_0'), 'decodeQ5_0');
export const decodeQ5_1: BlockDecoder = wasmBlockDecoder(ggmlType('Q5_1'), 'decodeQ5_1');
export const decodeQ8_0: BlockDecoder = wasmBlockDecoder(ggmlType('Q8_0'), 'decodeQ8_0');
