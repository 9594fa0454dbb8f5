import { describe, expect, it } from 'vitest';
import type { BlockDecoder } from '../../../src-main/core/quants/codec';
import {
  decodeIQ1_M,
  decodeIQ1_S,
  decodeIQ2_S,
  decodeIQ2_XS,
  decodeIQ2_XXS,
  decodeIQ3_S,
  decodeIQ3_XXS,
  decodeIQ4_NL,
  decodeIQ4_XS,
} from '../../../src-main/core/quants/iq-quants';
import { expectBitExact, expectBitExactOnQuantized, randomBlocks, saneF16, typeOf } from '../../support/decoder-check';
import { llamaQuantize } from '../../support/ggml-oracle';
import { mulberry32 } from '../../support/random';

/** Where a type keeps its f16 super-block scale d (IQ1_M spreads it over four nibbles). */
type ScaleAt = { f16At: number } | 'iq1m';

interface Case {
  name: string;
  decode: BlockDecoder;
  scale: ScaleAt;
  /** llama.cpp refuses to quantize this type without an importance matrix. */
  needsImatrix: boolean;
}

const CASES: Case[] = [
  { name: 'IQ1_S', decode: decodeIQ1_S, scale: { f16At: 0 }, needsImatrix: true },
  { name: 'IQ1_M', decode: decodeIQ1_M, scale: 'iq1m', needsImatrix: true },
  { name: 'IQ2_XXS', decode: decodeIQ2_XXS, scale: { f16At: 0 }, needsImatrix: true },
  { name: 'IQ2_XS', decode: decodeIQ2_XS, scale: { f16At: 0 }, needsImatrix: true },
  { name: 'IQ2_S', decode: decodeIQ2_S, scale: { f16At: 0 }, needsImatrix: false },
  { name: 'IQ3_XXS', decode: decodeIQ3_XXS, scale: { f16At: 0 }, needsImatrix: false },
  { name: 'IQ3_S', decode: decodeIQ3_S, scale: { f16At: 0 }, needsImatrix: false },
  { name: 'IQ4_NL', decode: decodeIQ4_NL, scale: { f16At: 0 }, needsImatrix: false },
  { name: 'IQ4_XS', decode: decodeIQ4_XS, scale: { f16At: 0 }, needsImatrix: false },
];

/** Writes f16 bits `h` as the scale of block `b`. */
function setScale(bytes: Uint8Array, c: Case, b: number, h: number): void {
  const base = b * typeOf(c.name).typeSize;
  if (c.scale === 'iq1m') {
    // The four u16 scale words at bytes 48..55 carry d's nibbles in their top 4 bits, low first.
    for (let k = 0; k < 4; k++) {
      const at = base + 49 + 2 * k;
      bytes[at] = (bytes[at]! & 0x0f) | (((h >> (4 * k)) & 15) << 4);
    }
  } else {
    bytes[base + c.scale.f16At] = h & 255;
    bytes[base + c.scale.f16At + 1] = h >> 8;
  }
}

/** Random blocks whose scale d is a sane finite f16, everything else random bytes. */
function randomCaseBlocks(c: Case, blocks: number, seed: number): Uint8Array {
  const rng = mulberry32(seed);
  const bytes = randomBlocks(rng, c.name, blocks, []);
  for (let b = 0; b < blocks; b++) setScale(bytes, c, b, saneF16(rng));
  return bytes;
}

function imatrix(rowLength: number, seed: number): Float32Array {
  const rng = mulberry32(seed);
  const w = new Float32Array(rowLength);
  for (let i = 0; i < rowLength; i++) w[i] = 0.05 + rng.next() * 4;
  return w;
}

describe('IQ quants decode bit-exactly like llama.cpp', () => {
  for (const c of CASES) {
    const type = typeOf(c.name);

    it(`${c.name}: blocks made by llama.cpp's quantizer (random importance matrix)`, () => {
      expectBitExactOnQuantized(c.name, c.decode, {
        seed: 4321,
        rows: 4,
        rowLength: 512,
        quantize: (data, rows, rowLength) =>
          llamaQuantize(type.id, data, rows, rowLength, imatrix(rowLength, rows * 7 + rowLength)),
      });
    });

    if (!c.needsImatrix) {
      it(`${c.name}: blocks made by llama.cpp's quantizer (no importance matrix)`, () => {
        expectBitExactOnQuantized(c.name, c.decode, { seed: 1234, rows: 4, rowLength: 512 });
      });
    } else {
      it(`${c.name}: blocks made by llama.cpp's quantizer (uniform importance matrix)`, () => {
        expectBitExactOnQuantized(c.name, c.decode, {
          seed: 1234,
          rows: 3,
          rowLength: 768,
          quantize: (data, rows, rowLength) =>
            llamaQuantize(type.id, data, rows, rowLength, new Float32Array(rowLength).fill(1)),
        });
      });
    }

    it(`${c.name}: random blocks at unaligned offsets`, () => {
      const blocks = type.blockSize === 32 ? 8192 : 2048;
      const bytes = randomCaseBlocks(c, blocks, 99 + type.id);
      expectBitExact(c.name, c.decode, bytes, blocks, { offset: 1, label: 'random blocks' });
      expectBitExact(c.name, c.decode, bytes, blocks, { offset: 3, label: 'random blocks' });
    });

    it(`${c.name}: edge scales (±0, subnormals, largest finite, ±infinity, NaNs with payloads)`, () => {
      const scales = [
        0x0000, 0x8000, 0x0001, 0x83ff, 0x0400, 0x7bff, 0xfbff, 0x7c00, 0xfc00, 0x7e00, 0x7c01, 0xfe55, 0xffff,
      ];
      const per = 8;
      const blocks = scales.length * per;
      const bytes = randomCaseBlocks(c, blocks, 7 + type.id);
      scales.forEach((h, i) => {
        for (let k = 0; k < per; k++) setScale(bytes, c, i * per + k, h);
      });
      if (c.name === 'IQ4_XS') {
        // Sub-block scale 32 makes the multiplier d·0: ∞·0 and NaN·0 must give llama.cpp's NaN.
        for (let b = 0; b < blocks; b += 2) {
          const base = b * type.typeSize;
          bytes[base + 2] = (bytes[base + 2]! & ~3) | 2;
          bytes[base + 4] = bytes[base + 4]! & 0xf0;
        }
      }
      expectBitExact(c.name, c.decode, bytes, blocks, { offset: 1, label: 'edge scales' });
    });
  }

  it('every decoder leaves values past the given block count alone and refuses short buffers', () => {
    for (const c of CASES) {
      const type = typeOf(c.name);
      const bytes = randomCaseBlocks(c, 3, 5);
      const dst = new Float32Array(3 * type.blockSize).fill(42);
      c.decode(bytes, dst, 2);
      expect(
        dst.subarray(2 * type.blockSize).every((v) => v === 42),
        c.name,
      ).toBe(true);
      expect(() => c.decode(bytes.subarray(0, 3 * type.typeSize - 1), dst, 3), c.name).toThrow(RangeError);
      expect(() => c.decode(bytes, dst.subarray(1), 3), c.name).toThrow(RangeError);
    }
  });
});
