import { describe, it } from 'vitest';
import {
  decodeQ4_0,
  decodeQ4_1,
  decodeQ5_0,
  decodeQ5_1,
  decodeQ8_0,
} from '../../../src-main/core/quants/legacy-quants';
import type { BlockDecoder } from '../../../src-main/core/quants/codec';
import {
  expectBitExactOnQuantized,
  expectBitExactOnRandom,
  expectDecoderContract,
  type ScaleField,
} from '../../support/decoder-check';

const f16 = (at: number): ScaleField => ({ at, kind: 'f16' });

const CASES: { name: string; decode: BlockDecoder; scales: ScaleField[] }[] = [
  { name: 'Q4_0', decode: decodeQ4_0, scales: [f16(0)] },
  { name: 'Q4_1', decode: decodeQ4_1, scales: [f16(0), f16(2)] },
  { name: 'Q5_0', decode: decodeQ5_0, scales: [f16(0)] },
  { name: 'Q5_1', decode: decodeQ5_1, scales: [f16(0), f16(2)] },
  { name: 'Q8_0', decode: decodeQ8_0, scales: [f16(0)] },
];

describe('legacy block quants decode bit-exactly like llama.cpp', () => {
  for (const c of CASES) {
    it(`${c.name}: blocks made by llama.cpp's quantizer`, () => expectBitExactOnQuantized(c.name, c.decode));
    it(`${c.name}: random blocks at unaligned offsets`, () => expectBitExactOnRandom(c.name, c.decode, c.scales));
    it(`${c.name}: refuses short buffers, does nothing for 0 blocks`, () => expectDecoderContract(c.name, c.decode));
  }
});
