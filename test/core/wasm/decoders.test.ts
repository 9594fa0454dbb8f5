/**
 * The chunking of the WebAssembly decoders (src-main/core/wasm/decoders.ts): tensors bigger than
 * one chunk, chunk sizes that do not divide the block count, and single blocks all decode exactly
 * as llama.cpp does, into any Float32Array and straight into decodedValues buffers. The per-type
 * bit-exactness tests are with each family (test/core/quants/).
 */
import { describe, expect, it } from 'vitest';
import { decodedValues, decoderFor } from '../../../src-main/core/quants/decoders';
import { atOffset, expectBitExact, firstMismatch, typeOf } from '../../support/decoder-check';
import { llamaDequantize, llamaQuantize } from '../../support/ggml-oracle';
import { mulberry32 } from '../../support/random';

const WASM_TYPES = [
  'F16',
  'BF16',
  'Q4_0',
  'Q4_1',
  'Q5_0',
  'Q5_1',
  'Q8_0',
  'Q2_K',
  'Q3_K',
  'Q4_K',
  'Q5_K',
  'Q6_K',
  'IQ4_NL',
  'IQ4_XS',
];

describe('WebAssembly decoders over many chunks', () => {
  for (const name of WASM_TYPES) {
    const type = typeOf(name);
    it(`${name}: a tensor of several chunks and a ragged tail, then one block`, () => {
      const rng = mulberry32(7);
      const rowLength = 4096;
      const rows = 37; // 151552 values: four and a half chunks of 32768 values
      const data = Float32Array.from({ length: rows * rowLength }, () => rng.gaussian());
      const bytes = llamaQuantize(type.id, data, rows, rowLength);
      const blocks = (rows * rowLength) / type.blockSize;
      expectBitExact(name, decoderFor(type), bytes, blocks, { offset: 5 });
      expectBitExact(name, decoderFor(type), bytes.subarray(type.typeSize, 2 * type.typeSize), 1, { offset: 1 });
    });
  }
});

describe('decodedValues: buffers the decoders write into directly', () => {
  for (const name of WASM_TYPES) {
    const type = typeOf(name);
    it(`${name}: several chunks decode bit-exact into a view inside one, the values around it untouched`, () => {
      const rng = mulberry32(11);
      const rowLength = 4096;
      const rows = 41; // more than one input chunk for every type (64 KiB of blocks)
      const n = rows * rowLength;
      const bytes = llamaQuantize(
        type.id,
        Float32Array.from({ length: n }, () => rng.gaussian()),
        rows,
        rowLength,
      );
      const theirs = llamaDequantize(type.id, bytes.slice(), n);
      const buffer = decodedValues(n + 64);
      buffer.fill(-7);
      const ours = buffer.subarray(32, 32 + n);
      decoderFor(type)(atOffset(bytes, 5), ours, n / type.blockSize);
      // Another buffer made meanwhile must not detach or move this one.
      decodedValues(1 << 20);
      expect(firstMismatch(ours, theirs), `${name}: first value that differs from llama.cpp`).toBeNull();
      expect(
        [...buffer.subarray(0, 32), ...buffer.subarray(32 + n)].every((v) => v === -7),
        'values outside the view',
      ).toBe(true);
    });
  }

  it('starts zeroed and refuses a length that is not a whole number of values', () => {
    expect(decodedValues(5)).toEqual(new Float32Array(5));
    expect(() => decodedValues(-1)).toThrow(/decodedValues: length -1 is not a whole number of values/);
    expect(() => decodedValues(2 ** 31)).toThrow(/decodedValues: 2147483648 values do not fit a WebAssembly memory/);
  });
});
