import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import type { BlockDecoder, RowEncoder } from '../../../src-main/core/quants/codec';
import { encodeBF16, encodeF16, encodeF32 } from '../../../src-main/core/quants/float-encoders';
import { decodeBF16, decodeF16 } from '../../../src-main/core/quants/float-types';
import {
  f32BitsToBF16Bits,
  f32BitsToF16Bits,
  f32ToBF16Bits,
  f32ToF16Bits,
} from '../../../src-main/core/quants/half-encode';
import { llamaQuantize } from '../../support/ggml-oracle';
import { expectSameDecode } from '../../support/encoder-check';
import { mulberry32 } from '../../support/random';

/** f32 values given as bit patterns. */
function fromBits(bits: ArrayLike<number>): Float32Array {
  return new Float32Array(Uint32Array.from(bits).buffer);
}

/**
 * Every f32 where f16 or bf16 rounding can go wrong: around each of the 65536 half / bfloat16
 * values (as f32), the exact midpoint to the next one and one f32 ulp either side of both, plus
 * zeros, infinities, NaNs with assorted payloads and signs, and f32 subnormals.
 */
function boundaryBits(shift: 13 | 16): Uint32Array {
  const out: number[] = [];
  const half = 1 << (shift - 1);
  if (shift === 13) {
    // f16: walk the f32 images of every half (normal range: bits are (h - 15 + 127) << 23 ...).
    for (let e = 0x70 - 11; e <= 0x8f; e++) {
      for (let m = 0; m < 1 << 10; m++) {
        const base = ((e << 23) | (m << 13)) >>> 0;
        for (const d of [0, 1, -1, half, half - 1, half + 1]) {
          out.push((base + d) >>> 0, ((base + d) | 0x80000000) >>> 0);
        }
      }
    }
    // Subnormal halves sit on a finer f32 grid: probe multiples and midpoints of 2^-24.
    for (let k = 0; k <= 2048; k++) {
      const v = k * 2 ** -25;
      const b = new Uint32Array(new Float32Array([v]).buffer)[0]!;
      out.push(b, b + 1, Math.max(0, b - 1), (b | 0x80000000) >>> 0);
    }
  } else {
    for (let h = 0; h < 0x8000; h++) {
      const base = (h << 16) >>> 0;
      for (const d of [0, 1, half, half - 1, half + 1, 0xffff])
        out.push((base + d) >>> 0, ((base + d) | 0x80000000) >>> 0);
    }
  }
  out.push(
    0,
    0x80000000,
    0x7f800000,
    0xff800000,
    0x7fc00000,
    0xffc00000,
    0x7f800001,
    0xff800001,
    0x7fbfffff,
    0x7fffffff,
    0xffffffff,
    0x7fa00000,
    0x7fc12345,
    0x7f80ffff,
    0x00000001,
    0x007fffff,
    0x80000001,
    0x807fffff,
    0x7f7fffff,
    0xff7fffff,
    0x477fe000,
    0x477fefff,
    0x477ff000,
    0x477fffff,
    0x47800000,
    0x33000000,
    0x33000001,
    0x387fe000,
    0x38800000,
  );
  return Uint32Array.from(out);
}

function randomBits(n: number, seed: number): Uint32Array {
  const rng = mulberry32(seed);
  const out = new Uint32Array(n);
  for (let i = 0; i < n; i++) out[i] = (rng.next() * 2 ** 32) >>> 0;
  return out;
}

function hex(x: number): string {
  return `0x${(x >>> 0).toString(16).padStart(8, '0')}`;
}

const CASES: [string, RowEncoder, BlockDecoder, 13 | 16, (w: number) => number, (x: number) => number][] = [
  ['F16', encodeF16, decodeF16, 13, f32BitsToF16Bits, f32ToF16Bits],
  ['BF16', encodeBF16, decodeBF16, 16, f32BitsToBF16Bits, f32ToBF16Bits],
];

describe.each(CASES)('%s encoder', (name, encode, decode, shift, fromBitsScalar, fromNumber) => {
  const type = ggmlTypeByName(name)!;

  for (const [label, bits] of [
    ['rounding boundaries, NaN, Inf, subnormals', boundaryBits(shift)],
    ['random bit patterns', randomBits(1 << 18, shift)],
  ] as const) {
    it(`writes the same bytes as llama.cpp for ${label}`, () => {
      const src = fromBits(bits);
      const theirs = llamaQuantize(type.id, src, 1, src.length);
      for (const offset of [0, 1]) {
        const big = new Uint8Array(theirs.length + 4).fill(0xa5);
        const ours = big.subarray(offset, offset + theirs.length);
        encode(src, ours, 1, src.length, null);
        for (let i = 0; i < theirs.length; i += 2) {
          if (ours[i] !== theirs[i] || ours[i + 1] !== theirs[i + 1]) {
            const h = (a: Uint8Array) => hex(a[i]! | (a[i + 1]! << 8));
            expect.fail(
              `${name} (dst offset ${offset}): f32 ${hex(bits[i >> 1]!)} gives ${h(ours)} here, ${h(theirs)} in llama.cpp`,
            );
          }
        }
        expect(big[offset + theirs.length], 'wrote past its destination').toBe(0xa5);
      }
      // The scalar helpers agree with the row encoder.
      const view = new Uint16Array(theirs.buffer);
      for (let i = 0; i < bits.length; i += 97) {
        expect(fromBitsScalar(bits[i]!)).toBe(view[i]);
        expect(fromNumber(src[i]!)).toBe(view[i]);
      }
      expectSameDecode(type, decode, theirs, `${name} ${label}`);
    });
  }

  it('encodes a matrix row by row the same as one long row', () => {
    const src = fromBits(randomBits(4 * 96, 3));
    const a = new Uint8Array(src.length * 2);
    const b = new Uint8Array(src.length * 2);
    encode(src, a, 4, 96, null);
    encode(src, b, 1, src.length, null);
    expect(a).toEqual(b);
  });
});

describe('F32 encoder', () => {
  it('copies the bits (NaN payloads, signed zeros) to any offset', () => {
    const bits = boundaryBits(16);
    const src = fromBits(bits);
    const big = new Uint8Array(src.length * 4 + 5).fill(0xa5);
    const dst = big.subarray(3, 3 + src.length * 4);
    encodeF32(src, dst, 1, src.length, null);
    const copied = new Uint32Array(dst.slice().buffer);
    let differing = 0;
    for (let i = 0; i < bits.length; i++) if (copied[i] !== bits[i]) differing++;
    expect(differing).toBe(0);
    expect(big[2]).toBe(0xa5);
    expect(big[3 + src.length * 4]).toBe(0xa5);
  });

  it('rejects a destination that is too small', () => {
    expect(() => encodeF32(new Float32Array(8), new Uint8Array(31), 1, 8, null)).toThrow(RangeError);
    expect(() => encodeF16(new Float32Array(8), new Uint8Array(15), 1, 8, null)).toThrow(RangeError);
    expect(() => encodeBF16(new Float32Array(8), new Uint8Array(15), 2, 4, null)).toThrow(RangeError);
  });
});
