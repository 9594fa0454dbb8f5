/**
 * Q1_0 and Q2_0: one f16 scale per block and 1 or 2 bits per value, decoded to f32 exactly as
 * ggml's dequantize_row_* does. `src` may sit at any byte offset.
 *
 * Q1_0 (18 B, 128 values): f16 d, qs[16]; bit i % 8 of qs[i / 8] set → +d, clear → −d.
 * Q2_0 (18 B, 64 values): f16 d, qs[16]; q = bits 2(i % 4).. of qs[i / 4]; value = (q − 1) · d.
 */
import { checkSpan, type BlockDecoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { f16BitsTableI32, f16Table } from './half';

const Q1_0 = ggmlType('Q1_0');
const Q1_0_AT = blockOffsets('Q1_0');
const Q2_0 = ggmlType('Q2_0');
const Q2_0_AT = blockOffsets('Q2_0');

/**
 * Written as bit patterns: +d is d's f32 bits, −d the same with the sign bit flipped (as ggml's
 * negation does, NaNs included); no branch per value.
 */
export const decodeQ1_0: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q1_0, src, dst, blocks);
  const hb = f16BitsTableI32();
  const out = new Int32Array(dst.buffer, dst.byteOffset, blocks * Q1_0.blockSize);
  const ts = Q1_0.typeSize;
  const { d: D, qs: QS } = Q1_0_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts) {
    const neg = hb[src[o + D]! | (src[o + D + 1]! << 8)]! ^ 0x80000000; // −d; a set bit flips it back to +d
    for (let j = QS; j < QS + 16; j++, y += 8) {
      const v = src[o + j]!;
      out[y] = neg ^ ((v & 1) << 31);
      out[y + 1] = neg ^ ((v & 2) << 30);
      out[y + 2] = neg ^ ((v & 4) << 29);
      out[y + 3] = neg ^ ((v & 8) << 28);
      out[y + 4] = neg ^ ((v & 16) << 27);
      out[y + 5] = neg ^ ((v & 32) << 26);
      out[y + 6] = neg ^ ((v & 64) << 25);
      out[y + 7] = neg ^ ((v & 128) << 24);
    }
  }
};

export const decodeQ2_0: BlockDecoder = (src, dst, blocks) => {
  checkSpan(Q2_0, src, dst, blocks);
  const h = f16Table();
  const ts = Q2_0.typeSize;
  const { d: D, qs: QS } = Q2_0_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts) {
    const d = h[src[o + D]! | (src[o + D + 1]! << 8)]!;
    for (let j = QS; j < QS + 16; j++) {
      const v = src[o + j]!;
      dst[y++] = ((v & 3) - 1) * d;
      dst[y++] = (((v >> 2) & 3) - 1) * d;
      dst[y++] = (((v >> 4) & 3) - 1) * d;
      dst[y++] = ((v >> 6) - 1) * d;
    }
  }
};
