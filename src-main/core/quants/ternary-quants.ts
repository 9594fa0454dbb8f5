/**
 * Ternary quants (values −d, 0, +d), decoded to f32 exactly as ggml's dequantize_row_* does.
 * `src` may sit at any byte offset.
 *
 * TQ1_0 (54 B): qs[48], qh[4], f16 d. Five trits per qs byte and four per qh byte, stored as a
 *   base-3 fixed-point fraction: trit n of byte x is ((x · 3^n mod 256) · 3) >> 8. Value order:
 *   qs[0..32) trit 0, then trit 1, … trit 4 (160 values); qs[32..48) trits 0..4 (80 values);
 *   qh[0..4) trits 0..3 (16 values). Value = (trit − 1) · d.
 * TQ2_0 (66 B): qs[64], f16 d. Two bits per value: value 128c + 32l + m (c = 0..1, l = 0..3,
 *   m = 0..31) is bits 2l..2l+1 of qs[32c + m]. Value = (q − 1) · d.
 */
import { checkSpan, type BlockDecoder } from './codec';
import { blockOffsets, ggmlType } from '../ggml-types';
import { f16Table } from './half';

const TQ1_0 = ggmlType('TQ1_0');
const TQ1_0_AT = blockOffsets('TQ1_0');
const TQ2_0 = ggmlType('TQ2_0');
const TQ2_0_AT = blockOffsets('TQ2_0');

/**
 * Trit n (0..4) of every byte value, minus 1: TRITS[5·x + n] ∈ {−1, 0, 1}. Built on first use.
 */
let trits: Int8Array | undefined;
function tritTable(): Int8Array {
  if (!trits) {
    trits = new Int8Array(256 * 5);
    for (let x = 0; x < 256; x++) {
      for (let n = 0, p = 1; n < 5; n++, p *= 3) trits[5 * x + n] = ((((x * p) & 255) * 3) >> 8) - 1;
    }
  }
  return trits;
}

export const decodeTQ1_0: BlockDecoder = (src, dst, blocks) => {
  checkSpan(TQ1_0, src, dst, blocks);
  const h = f16Table();
  const t = tritTable();
  const ts = TQ1_0.typeSize;
  const { qs: QS, qh: QH, d: D } = TQ1_0_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts, y += 256) {
    const d = h[src[o + D]! | (src[o + D + 1]! << 8)]!;
    // qs[0..32): trit n of byte m is value 32n + m.
    for (let m = 0; m < 32; m++) {
      const k = 5 * src[o + QS + m]!;
      const z = y + m;
      dst[z] = t[k]! * d;
      dst[z + 32] = t[k + 1]! * d;
      dst[z + 64] = t[k + 2]! * d;
      dst[z + 96] = t[k + 3]! * d;
      dst[z + 128] = t[k + 4]! * d;
    }
    // qs[32..48): trit n of byte 32 + m is value 160 + 16n + m.
    for (let m = 0; m < 16; m++) {
      const k = 5 * src[o + QS + 32 + m]!;
      const z = y + 160 + m;
      dst[z] = t[k]! * d;
      dst[z + 16] = t[k + 1]! * d;
      dst[z + 32] = t[k + 2]! * d;
      dst[z + 48] = t[k + 3]! * d;
      dst[z + 64] = t[k + 4]! * d;
    }
    // qh[0..4): trit n (0..3) of byte j is value 240 + 4n + j.
    for (let j = 0; j < 4; j++) {
      const k = 5 * src[o + QH + j]!;
      const z = y + 240 + j;
      dst[z] = t[k]! * d;
      dst[z + 4] = t[k + 1]! * d;
      dst[z + 8] = t[k + 2]! * d;
      dst[z + 12] = t[k + 3]! * d;
    }
  }
};

export const decodeTQ2_0: BlockDecoder = (src, dst, blocks) => {
  checkSpan(TQ2_0, src, dst, blocks);
  const h = f16Table();
  const ts = TQ2_0.typeSize;
  const { qs: QS, d: D } = TQ2_0_AT;
  for (let b = 0, o = 0, y = 0; b < blocks; b++, o += ts) {
    const d = h[src[o + D]! | (src[o + D + 1]! << 8)]!;
    for (let c = QS; c < QS + 64; c += 32, y += 128) {
      for (let m = 0; m < 32; m++) {
        const v = src[o + c + m]!;
        const z = y + m;
        dst[z] = ((v & 3) - 1) * d;
        dst[z + 32] = (((v >> 2) & 3) - 1) * d;
        dst[z + 64] = (((v >> 4) & 3) - 1) * d;
        dst[z + 96] = ((v >> 6) - 1) * d;
      }
    }
  }
};
