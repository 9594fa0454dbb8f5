import { describe, expect, it } from 'vitest';
import { decodeBF16, decodeF16, decodeF32 } from '../../../src-main/core/quants/float-types';
import { bf16ToF32, f16ToF32 } from '../../../src-main/core/quants/half';
import { expectBitExact, expectBitExactOnQuantized, expectDecoderContract } from '../../support/decoder-check';
import { ggml } from '../../support/ggml-oracle';
import { mulberry32 } from '../../support/random';

/** Every 16-bit pattern, little-endian. */
function all16(): Uint8Array {
  const bytes = new Uint8Array(65536 * 2);
  for (let h = 0; h < 65536; h++) {
    bytes[2 * h] = h & 255;
    bytes[2 * h + 1] = h >> 8;
  }
  return bytes;
}

describe('plain float types decode bit-exactly like llama.cpp', () => {
  it('F16: all 65536 bit patterns (subnormals, infinities, NaN payloads) match ggml_fp16_to_fp32_row, at every alignment', () => {
    for (const offset of [0, 1, 2, 3])
      expectBitExact('F16', decodeF16, all16(), 65536, { offset, label: `offset ${offset}` });
    const out = expectBitExact('F16', decodeF16, all16(), 65536);
    expect(Number.isNaN(out[0x7c01])).toBe(true);
    expect(out[0x7c00]).toBe(Infinity);
    expect(Object.is(out[0x8000], -0)).toBe(true);
    expect(out[1]).toBe(2 ** -24);
  });

  it('F16: the scalar helper agrees with ggml_fp16_to_fp32', () => {
    const one = ggml.fn('float ggml_fp16_to_fp32(uint16_t x)');
    for (let h = 0; h < 65536; h += 7) {
      const theirs = one(h) as number;
      expect(
        Object.is(f16ToF32(h), theirs) || (Number.isNaN(theirs) && Number.isNaN(f16ToF32(h))),
        `f16 0x${h.toString(16)}`,
      ).toBe(true);
    }
  });

  it('F16: values written by llama.cpp, unaligned', () => expectBitExactOnQuantized('F16', decodeF16));

  it('BF16: all 65536 bit patterns match ggml_bf16_to_fp32_row, at every alignment', () => {
    for (const offset of [0, 1, 2, 3])
      expectBitExact('BF16', decodeBF16, all16(), 65536, { offset, label: `offset ${offset}` });
    expect(bf16ToF32(0x3f80)).toBe(1);
    expect(Object.is(bf16ToF32(0x8000), -0)).toBe(true);
  });

  it('BF16: values written by llama.cpp, unaligned', () => expectBitExactOnQuantized('BF16', decodeBF16));

  it('F32: random bit patterns (NaN payloads included) come through unchanged, unaligned', () => {
    const rng = mulberry32(7);
    const n = 4096;
    const bytes = rng.bytes(n * 4);
    // A few special patterns: signalling and quiet NaNs with payloads, infinities, -0, subnormals.
    const specials = [0x7f800001, 0xffbfffff, 0x7fc00000, 0x7f800000, 0xff800000, 0x80000000, 0x00000001, 0x807fffff];
    specials.forEach((w, i) => new DataView(bytes.buffer).setUint32(i * 4, w, true));
    const reference = new Float32Array(bytes.slice().buffer);
    for (const offset of [1, 2, 3]) expectBitExact('F32', decodeF32, bytes, n, { offset, reference });
    // And llama.cpp's own F32 "quantization" (a copy) of gaussian data.
    expectBitExactOnQuantized('F32', decodeF32);
  });
  it('F16 and BF16: lengths that are not a multiple of the unrolling, across scratch chunks, odd and even offsets', () => {
    const rng = mulberry32(11);
    for (const n of [1, 3, 7, 16385, 40003]) {
      const bytes = rng.bytes(2 * n);
      for (const offset of [0, 1, 2, 3]) {
        expectBitExact('F16', decodeF16, bytes, n, { offset, label: `n ${n}, offset ${offset}` });
        expectBitExact('BF16', decodeBF16, bytes, n, { offset, label: `n ${n}, offset ${offset}` });
      }
    }
  });

  it('all three refuse short buffers and do nothing for 0 values', () => {
    expectDecoderContract('F32', decodeF32);
    expectDecoderContract('F16', decodeF16);
    expectDecoderContract('BF16', decodeBF16);
  });
});
