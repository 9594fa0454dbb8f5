/**
 * The WebAssembly encoders (assembly/encoders.ts, Q8_0 and Q4_1 without an importance matrix)
 * where SIMD could part from llama.cpp's scalar C: blocks whose result depends on the order C
 * visits them (which ±0 becomes the min or max, a NaN in Q8_0's running max), chunk boundaries,
 * and the module's own f32 → f16 conversion. The bulk bit-exactness tests are in
 * test/core/quants/legacy-encoders.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { encoderFor } from '../../../src-main/core/quants/encoders';
import { f32BitsToF16Bits } from '../../../src-main/core/quants/half-encode';
import { wasmF32ToF16Bits } from '../../../src-main/core/wasm/encoders';
import { typeOf } from '../../support/decoder-check';
import { llamaQuantize } from '../../support/ggml-oracle';
import { mulberry32 } from '../../support/random';

/** Blocks of 32 from `make(j)`, one block per function. */
function blocks(...makers: ((j: number) => number)[]): Float32Array {
  return Float32Array.from({ length: 32 * makers.length }, (_, i) => makers[i >> 5]!(i & 31));
}

function expectSameBytes(name: string, data: Float32Array, rows: number): void {
  const type = typeOf(name);
  const rowLength = data.length / rows;
  const theirs = llamaQuantize(type.id, data, rows, rowLength);
  const ours = new Uint8Array(theirs.length);
  encoderFor(type)(data, ours, rows, rowLength, null);
  const at = ours.findIndex((b, i) => b !== theirs[i]);
  expect(at, `${name}: first byte differing from llama.cpp (block ${Math.floor(at / type.typeSize)})`).toBe(-1);
}

describe('WebAssembly encoders', () => {
  it("Q4_1: a zero min or max keeps the sign of the block's first zero, as C's running min and max do", () => {
    const data = blocks(
      (j) => (j === 3 ? 0 : j === 9 ? -0 : j + 1),
      (j) => (j === 3 ? -0 : j === 9 ? 0 : j + 1),
      (j) => (j === 30 ? -0 : j === 31 ? 0 : 2),
      (j) => (j === 4 ? 0 : j === 5 ? -0 : -j - 1),
      (j) => (j === 4 ? -0 : j === 5 ? 0 : -j - 1),
      (j) => (j % 2 ? 0 : -0),
      (j) => (j % 2 ? -0 : 0),
      (j) => (j === 17 ? -0 : 0),
    );
    expectSameBytes('Q4_1', data, 1);
  });

  it("Q8_0: a NaN anywhere in a block gives C's order-dependent running max", () => {
    const data = blocks(
      (j) => (j === 0 ? Number.NaN : j),
      (j) => (j === 31 ? Number.NaN : j),
      (j) => (j === 7 ? Number.NaN : j === 20 ? -50 : 1),
      (j) => (j === 7 || j === 25 ? Number.NaN : j - 16),
      () => Number.NaN,
      (j) => (j === 3 ? Number.NaN : j === 1 ? Number.POSITIVE_INFINITY : 0),
    );
    expectSameBytes('Q8_0', data, 1);
  });

  it('Q8_0 and Q4_1: subnormal and overflowing scales (an infinite 1/d or d)', () => {
    const data = blocks(
      (j) => (j === 2 ? 1e-40 : j === 3 ? -2e-41 : 0),
      (j) => j * 1e-44,
      (j) => (j % 2 ? 3e38 : -3e38),
      (j) => (j === 0 ? Number.NEGATIVE_INFINITY : j),
    );
    expectSameBytes('Q8_0', data, 1);
    expectSameBytes('Q4_1', data, 1);
  });

  it('Q8_0 and Q4_1: many chunks and a ragged tail', () => {
    const rng = mulberry32(5);
    const data = Float32Array.from({ length: 37 * 1024 }, () => rng.gaussian() * 3); // 1184 blocks: 2 chunks of 512 and 160
    expectSameBytes('Q8_0', data, 37);
    expectSameBytes('Q4_1', data, 37);
  });

  it('its f32 → f16 conversion agrees with half-encode.ts on edge and random bit patterns', () => {
    const rng = mulberry32(3);
    const words = [
      0, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0x7f800001, 0x477ff000, 0x477fefff, 0x38800000, 0x387fffff,
      0x33000000, 0x33000001, 0x32ffffff, 0x00000001,
    ];
    for (let i = 0; i < 200000; i++) words.push(rng.int(2 ** 16) * 2 ** 16 + rng.int(2 ** 16));
    const scratch = new Float32Array(1);
    const bits = new Uint32Array(scratch.buffer);
    for (const w of words) {
      bits[0] = w;
      // NaNs are compared by what they convert to, not passed through a JS number (which may not keep their payload).
      if (Number.isNaN(scratch[0]!)) continue;
      const ours = wasmF32ToF16Bits(scratch[0]!);
      if (ours !== f32BitsToF16Bits(w))
        expect.fail(
          `f32 bits 0x${w.toString(16)}: wasm 0x${ours.toString(16)} vs 0x${f32BitsToF16Bits(w).toString(16)}`,
        );
    }
  });
});
