/**
 * FP4 (E2M1) block quants, decoded to f32 exactly as ggml's dequantize_row_* does. Both use ggml's
 * doubled FP4 value table (0, 1, 2, 3, 4, 6, 8, 12, sign in bit 3) times half the block scale.
 * `src` may sit at any byte offset.
 *
 * MXFP4 (17 B, 32 values): E8M0 scale byte e (half scale 2^(e−128)), qs[16]: low nibble of qs[j]
 *   is value j, high nibble value j + 16.
 * NVFP4 (36 B, 64 values): four UE4M3 scale bytes (one per 16 values), qs[32]: sub-block s uses
 *   qs[8s..8s+8): low nibbles are its values 0..7, high nibbles its values 8..15.
 */
import { checkSpan, type BlockDecoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { e8m0ToF32Half, FP4_DOUBLED, ue4m3Table } from './half';

const MXFP4 = ggmlType('MXFP4');
const MXFP4_AT = blockOffsets('MXFP4');
const NVFP4 = ggmlType('NVFP4');
const NVFP4_AT = blockOffsets('NVFP4');

let e8m0Half: Float32Array | undefined;

export const decodeMXFP4: BlockDecoder = (src, dst, blocks) => {
  checkSpan(MXFP4, src, dst, blocks);
  const kv = FP4_DOUBLED;
  const scales = (e8m0Half ??= Float32Array.from({ length: 256 }, (_, e) => e8m0ToF32Half(e)));
  const ts = MXFP4.typeSize;
  const { e: E, qs: QS } = MXFP4_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts, y += 32) {
    const d = scales[src[o + E]!]!;
    const q = o + QS;
    for (let j = 0; j < 16; j += 2) {
      const v0 = src[q + j]!;
      const v1 = src[q + j + 1]!;
      const z = y + j;
      dst[z] = kv[v0 & 15]! * d;
      dst[z + 1] = kv[v1 & 15]! * d;
      dst[z + 16] = kv[v0 >> 4]! * d;
      dst[z + 17] = kv[v1 >> 4]! * d;
    }
  }
};

export const decodeNVFP4: BlockDecoder = (src, dst, blocks) => {
  checkSpan(NVFP4, src, dst, blocks);
  const kv = FP4_DOUBLED;
  const ue = ue4m3Table();
  const ts = NVFP4.typeSize;
  const { d: D, qs: QS } = NVFP4_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts) {
    for (let s = 0; s < 4; s++, y += 16) {
      const d = ue[src[o + D + s]!]! * 0.5; // exact: UE4M3 values are far from the f32 subnormals
      const q = o + QS + 8 * s;
      for (let j = 0; j < 8; j += 2) {
        const v0 = src[q + j]!;
        const v1 = src[q + j + 1]!;
        const z = y + j;
        dst[z] = kv[v0 & 15]! * d;
        dst[z + 1] = kv[v1 & 15]! * d;
        dst[z + 8] = kv[v0 >> 4]! * d;
        dst[z + 9] = kv[v1 >> 4]! * d;
      }
    }
  }
};
