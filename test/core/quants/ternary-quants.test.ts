import { describe, expect, it } from 'vitest';
import { decodeTQ1_0, decodeTQ2_0 } from '../../../src-main/core/quants/ternary-quants';
import {
  expectBitExact,
  expectBitExactOnQuantized,
  expectBitExactOnRandom,
  expectDecoderContract,
  typeOf,
} from '../../support/decoder-check';

describe('ternary quants decode bit-exactly like llama.cpp', () => {
  it("TQ1_0: blocks made by llama.cpp's quantizer", () => expectBitExactOnQuantized('TQ1_0', decodeTQ1_0));
  it('TQ1_0: random blocks at unaligned offsets (byte values ≥ 243 included)', () =>
    expectBitExactOnRandom('TQ1_0', decodeTQ1_0, [{ at: 52, kind: 'f16' }]));
  it('TQ1_0: every byte value in every trit position', () => {
    const t = typeOf('TQ1_0');
    const blocks = 256;
    const bytes = new Uint8Array(blocks * t.typeSize);
    for (let b = 0; b < blocks; b++) {
      bytes.fill(b, b * t.typeSize, b * t.typeSize + 52);
      bytes[b * t.typeSize + 52] = 0x00;
      bytes[b * t.typeSize + 53] = 0x3c; // d = 1
    }
    const out = expectBitExact('TQ1_0', decodeTQ1_0, bytes, blocks);
    expect(out.every((v) => v === -1 || v === 0 || v === 1)).toBe(true);
  });
  it("TQ2_0: blocks made by llama.cpp's quantizer", () => expectBitExactOnQuantized('TQ2_0', decodeTQ2_0));
  it('TQ2_0: random blocks at unaligned offsets', () =>
    expectBitExactOnRandom('TQ2_0', decodeTQ2_0, [{ at: 64, kind: 'f16' }]));
  it('both refuse short buffers and do nothing for 0 blocks', () => {
    expectDecoderContract('TQ1_0', decodeTQ1_0);
    expectDecoderContract('TQ2_0', decodeTQ2_0);
  });
});
