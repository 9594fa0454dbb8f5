import { describe, it } from 'vitest';
import {
  decodeQ2_K,
  decodeQ3_K,
  decodeQ4_K,
  decodeQ5_K,
  decodeQ6_K,
  decodeQ8_K,
} from '../../../src-main/core/quants/k-quants';
import type { BlockDecoder } from '../../../src-main/core/quants/codec';
import {
  expectBitExactOnQuantized,
  expectBitExactOnRandom,
  expectDecoderContract,
  typeOf,
  type ScaleField,
} from '../../support/decoder-check';
import { ggml } from '../../support/ggml-oracle';

const f16 = (at: number): ScaleField => ({ at, kind: 'f16' });

/** ggml_quantize_chunk refuses Q8_K (it is only an activation format): use the reference quantizer. */
function quantizeQ8_K(data: Float32Array, rows: number, rowLength: number): Uint8Array {
  const t = typeOf('Q8_K');
  const out = new Uint8Array(((rows * rowLength) / t.blockSize) * t.typeSize);
  ggml.fn('void quantize_row_q8_K_ref(const float *x, void *y, int64_t k)')(data, out, rows * rowLength);
  return out;
}

const CASES: { name: string; decode: BlockDecoder; scales: ScaleField[]; quantize?: typeof quantizeQ8_K }[] = [
  { name: 'Q2_K', decode: decodeQ2_K, scales: [f16(80), f16(82)] },
  { name: 'Q3_K', decode: decodeQ3_K, scales: [f16(108)] },
  { name: 'Q4_K', decode: decodeQ4_K, scales: [f16(0), f16(2)] },
  { name: 'Q5_K', decode: decodeQ5_K, scales: [f16(0), f16(2)] },
  { name: 'Q6_K', decode: decodeQ6_K, scales: [f16(208)] },
  { name: 'Q8_K', decode: decodeQ8_K, scales: [{ at: 0, kind: 'f32' }], quantize: quantizeQ8_K },
];

describe('k-quants decode bit-exactly like llama.cpp', () => {
  for (const c of CASES) {
    it(`${c.name}: blocks made by llama.cpp's quantizer`, () =>
      expectBitExactOnQuantized(c.name, c.decode, c.quantize ? { quantize: c.quantize } : {}));
    it(`${c.name}: random blocks at unaligned offsets`, () => expectBitExactOnRandom(c.name, c.decode, c.scales));
    it(`${c.name}: refuses short buffers, does nothing for 0 blocks`, () => expectDecoderContract(c.name, c.decode));
  }
});
