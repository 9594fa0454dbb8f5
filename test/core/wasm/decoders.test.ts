/**
 * The chunking of the WebAssembly decoders (src-main/core/wasm/decoders.ts): tensors bigger than
 * one chunk, chunk sizes that do not divide the block count, and single blocks all decode exactly
 * as llama.cpp does. The per-type bit-exactness tests are with each family (test/core/quants/).
 */
import { describe, it } from 'vitest';
import { decoderFor } from '../../../src-main/core/quants/decoders';
import { expectBitExact, typeOf } from '../../support/decoder-check';
import { llamaQuantize } from '../../support/ggml-oracle';
import { mulberry32 } from '../../support/random';

const WASM_TYPES = ['Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q8_0', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K', 'IQ4_NL', 'IQ4_XS'];

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
