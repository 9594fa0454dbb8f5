import { describe, expect, it } from 'vitest';
import { decodeMXFP4, decodeNVFP4 } from '../../../src-main/core/quants/fp4-quants';
import { e8m0ToF32Half, ue4m3ToF32 } from '../../../src-main/core/quants/half';
import {
  expectBitExact,
  expectBitExactOnQuantized,
  expectBitExactOnRandom,
  expectDecoderContract,
  typeOf,
} from '../../support/decoder-check';

/** One block per scale byte value, its codes covering all 16 FP4 values. */
function everyScale(typeName: string, scaleBytes: number): Uint8Array {
  const t = typeOf(typeName);
  const bytes = new Uint8Array(256 * t.typeSize);
  for (let s = 0; s < 256; s++) {
    const o = s * t.typeSize;
    bytes.fill(s, o, o + scaleBytes);
    for (let j = scaleBytes; j < t.typeSize; j++) bytes[o + j] = ((j * 7) & 15) | (((j * 3 + 5) & 15) << 4);
  }
  return bytes;
}

describe('FP4 quants decode bit-exactly like llama.cpp', () => {
  it("MXFP4: blocks made by llama.cpp's quantizer", () => expectBitExactOnQuantized('MXFP4', decodeMXFP4));
  it('MXFP4: random blocks (every E8M0 scale, subnormal and overflowing ones included), unaligned', () =>
    expectBitExactOnRandom('MXFP4', decodeMXFP4, []));
  it('MXFP4: all 256 E8M0 scales × all 16 codes', () => {
    expectBitExact('MXFP4', decodeMXFP4, everyScale('MXFP4', 1), 256);
    expect(e8m0ToF32Half(128)).toBe(1);
    expect(e8m0ToF32Half(0)).toBe(2 ** -128);
  });
  it("NVFP4: blocks made by llama.cpp's quantizer", () => expectBitExactOnQuantized('NVFP4', decodeNVFP4));
  it('NVFP4: random blocks (random UE4M3 scales), unaligned', () => expectBitExactOnRandom('NVFP4', decodeNVFP4, []));
  it('NVFP4: all 256 UE4M3 scale bytes × all 16 codes', () => {
    expectBitExact('NVFP4', decodeNVFP4, everyScale('NVFP4', 4), 256);
    expect(ue4m3ToF32(0x38)).toBe(1);
    expect(ue4m3ToF32(0x01)).toBe(2 ** -9);
    expect(ue4m3ToF32(0x7f)).toBe(0);
  });
  it('both refuse short buffers and do nothing for 0 blocks', () => {
    expectDecoderContract('MXFP4', decodeMXFP4);
    expectDecoderContract('NVFP4', decodeNVFP4);
  });
});
