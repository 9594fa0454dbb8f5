/**
 * The original 32-value block quants (ggml-common.h), decoded to f32 exactly as ggml's
 * dequantize_row_* does. `src` may sit at any byte offset.
 *
 * Field offsets come from the type table's block layouts (ggml-types.ts), read once per call:
 * Q4_0: f16 d, qs[16]          value = (nibble − 8) · d
 * Q4_1: f16 d, f16 m, qs[16]   value = nibble · d + m
 * Q5_0: f16 d, qh[4], qs[16]   value = (nibble | fifth bit << 4 − 16) · d
 * Q5_1: f16 d, f16 m, qh[4], qs[16]   value = (nibble | fifth bit << 4) · d + m
 * Q8_0: f16 d, int8 qs[32]     value = q · d
 * Within a block, byte j's low nibble is value j and its high nibble value j + 16; bit j of the
 * little-endian qh word is the fifth bit of value j.
 *
 * Rounding: ggml computes in f32. A small integer times an f16 scale (≤ 5 + 11 significant bits)
 * is exact in f32, so q·d needs no intermediate rounding, and (q·d) + m computed in f64 and
 * rounded once to f32 by the store equals the f32 sum (f64 has more than 2·24 + 2 bits).
 */
import { checkSpan, type BlockDecoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { f16BitsTable, f16Table } from './half';
import { wasmBlockDecoder } from '../wasm/decoders';

const Q4_0 = ggmlType('Q4_0');
const Q4_1 = ggmlType('Q4_1');
const Q4_1_AT = blockOffsets('Q4_1');
const Q5_0 = ggmlType('Q5_0');
const Q5_0_AT = blockOffsets('Q5_0');
const Q5_1 = ggmlType('Q5_1');
const Q5_1_AT = blockOffsets('Q5_1');
const Q8_0 = ggmlType('Q8_0');

export const decodeQ4_0: BlockDecoder = wasmBlockDecoder(Q4_0, 'decodeQ4_0');

/**
 * A block whose d or m is NaN (corrupt data). ggml computes q·d + m in f32, so a NaN d wins over
 * a NaN m, and 0 · ±inf gives the x86 default NaN. Written as bit patterns so the payload survives
 * whatever operand order the JIT picks for the addition.
 */
function nanBlockWithMin(src: Uint8Array, dst: Float32Array, q: number, y: number, dh: number, mh: number, qh: number): void {
  const out = new Uint32Array(dst.buffer, dst.byteOffset + y * 4, 32);
  const bits = f16BitsTable();
  const d = f16Table()[dh]!;
  const dNaN = d !== d;
  const dInf = d === Infinity || d === -Infinity;
  for (let j = 0; j < 32; j++) {
    const v = src[q + (j & 15)]!;
    const x = (j < 16 ? v & 15 : v >> 4) | (((qh >>> j) & 1) << 4);
    out[j] = dNaN ? bits[dh]! : dInf && x === 0 ? 0xffc00000 : bits[mh]!;
  }
}

export const decodeQ4_1: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q4_1, src, dst, blocks);
  const h = f16Table();
  const ts = Q4_1.typeSize;
  const { d: D, m: M, qs: QS } = Q4_1_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts, y += 32) {
    const dh = src[o + D]! | (src[o + D + 1]! << 8);
    const mh = src[o + M]! | (src[o + M + 1]! << 8);
    const d = h[dh]!;
    const m = h[mh]!;
    const q = o + QS;
    if (d !== d || m !== m) {
      nanBlockWithMin(src, dst, q, y, dh, mh, 0);
      continue;
    }
    for (let j = 0; j < 16; j += 4) {
      const v0 = src[q + j]!;
      const v1 = src[q + j + 1]!;
      const v2 = src[q + j + 2]!;
      const v3 = src[q + j + 3]!;
      const z = y + j;
      dst[z] = (v0 & 15) * d + m;
      dst[z + 1] = (v1 & 15) * d + m;
      dst[z + 2] = (v2 & 15) * d + m;
      dst[z + 3] = (v3 & 15) * d + m;
      dst[z + 16] = (v0 >> 4) * d + m;
      dst[z + 17] = (v1 >> 4) * d + m;
      dst[z + 18] = (v2 >> 4) * d + m;
      dst[z + 19] = (v3 >> 4) * d + m;
    }
  }
};

export const decodeQ5_0: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q5_0, src, dst, blocks);
  const h = f16Table();
  const ts = Q5_0.typeSize;
  const { d: D, qh: QH, qs: QS } = Q5_0_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts, y += 32) {
    const d = h[src[o + D]! | (src[o + D + 1]! << 8)]!;
    const p = o + QH;
    const qh = src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | (src[p + 3]! << 24);
    const q = o + QS;
    for (let j = 0; j < 16; j += 2) {
      const v0 = src[q + j]!;
      const v1 = src[q + j + 1]!;
      const z = y + j;
      dst[z] = (((v0 & 15) | (((qh >>> j) & 1) << 4)) - 16) * d;
      dst[z + 1] = (((v1 & 15) | (((qh >>> (j + 1)) & 1) << 4)) - 16) * d;
      dst[z + 16] = (((v0 >> 4) | (((qh >>> (j + 16)) & 1) << 4)) - 16) * d;
      dst[z + 17] = (((v1 >> 4) | (((qh >>> (j + 17)) & 1) << 4)) - 16) * d;
    }
  }
};

export const decodeQ5_1: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q5_1, src, dst, blocks);
  const h = f16Table();
  const ts = Q5_1.typeSize;
  const { d: D, m: M, qh: QH, qs: QS } = Q5_1_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts, y += 32) {
    const dh = src[o + D]! | (src[o + D + 1]! << 8);
    const mh = src[o + M]! | (src[o + M + 1]! << 8);
    const d = h[dh]!;
    const m = h[mh]!;
    const p = o + QH;
    const qh = src[p]! | (src[p + 1]! << 8) | (src[p + 2]! << 16) | (src[p + 3]! << 24);
    const q = o + QS;
    if (d !== d || m !== m) {
      nanBlockWithMin(src, dst, q, y, dh, mh, qh);
      continue;
    }
    for (let j = 0; j < 16; j += 2) {
      const v0 = src[q + j]!;
      const v1 = src[q + j + 1]!;
      const z = y + j;
      dst[z] = ((v0 & 15) | (((qh >>> j) & 1) << 4)) * d + m;
      dst[z + 1] = ((v1 & 15) | (((qh >>> (j + 1)) & 1) << 4)) * d + m;
      dst[z + 16] = ((v0 >> 4) | (((qh >>> (j + 16)) & 1) << 4)) * d + m;
      dst[z + 17] = ((v1 >> 4) | (((qh >>> (j + 17)) & 1) << 4)) * d + m;
    }
  }
};

/** Q8_0 runs in WebAssembly SIMD (assembly/decoders.ts). */
export const decodeQ8_0: BlockDecoder = wasmBlockDecoder(Q8_0, 'decodeQ8_0');
