import { describe, expect, it } from 'vitest';
import { decodeQ1_0, decodeQ2_0 } from '../../../src-main/core/quants/q1-q2-quants';
import {
  expectBitExact,
  expectBitExactOnQuantized,
  expectBitExactOnRandom,
  expectDecoderContract,
  typeOf,
} from '../../support/decoder-check';

describe('Q1_0 and Q2_0 decode bit-exactly like llama.cpp', () => {
  it("Q1_0: blocks made by llama.cpp's quantizer", () => expectBitExactOnQuantized('Q1_0', decodeQ1_0));
  it('Q1_0: random blocks at unaligned offsets', () =>
    expectBitExactOnRandom('Q1_0', decodeQ1_0, [{ at: 0, kind: 'f16' }]));
  it("Q2_0: blocks made by llama.cpp's quantizer", () => expectBitExactOnQuantized('Q2_0', decodeQ2_0));
  it('Q2_0: random blocks at unaligned offsets', () =>
    expectBitExactOnRandom('Q2_0', decodeQ2_0, [{ at: 0, kind: 'f16' }]));
  it('Q1_0: a zero scale gives -0 for clear bits and +0 for set bits, as llama.cpp does', () => {
    const t = typeOf('Q1_0');
    const bytes = new Uint8Array(t.typeSize);
    bytes[2] = 0b01;
    const out = expectBitExact('Q1_0', decodeQ1_0, bytes, 1);
    expect(Object.is(out[0], 0)).toBe(true);
    expect(Object.is(out[1], -0)).toBe(true);
  });
  it('both refuse short buffers and do nothing for 0 blocks', () => {
    expectDecoderContract('Q1_0', decodeQ1_0);
    expectDecoderContract('Q2_0', decodeQ2_0);
  });
});
