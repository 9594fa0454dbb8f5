import { describe, expect, it } from 'vitest';
import { GGML_TYPES, ggmlTypeByName } from '../../../src-main/core/ggml-types';
import { encoderFor, hasEncoder, needsImportance } from '../../../src-main/core/quants/encoders';
import { requantCandidates } from '../../../src-main/node/inspect/requant-error';
import { ggml } from '../../support/ggml-oracle';
import type { BlockDecoder, RowEncoder } from '../../../src-main/core/quants/codec';
import { encodeIQ2_S, encodeIQ2_XS, encodeIQ2_XXS } from '../../../src-main/core/quants/iq2-encoders';
import { encodeIQ1_M, encodeIQ1_S } from '../../../src-main/core/quants/iq1-encoders';
import { encodeIQ3_S, encodeIQ3_XXS } from '../../../src-main/core/quants/iq3-encoders';
import {
  decodeIQ1_M,
  decodeIQ1_S,
  decodeIQ2_S,
  decodeIQ2_XS,
  decodeIQ2_XXS,
  decodeIQ3_S,
  decodeIQ3_XXS,
} from '../../../src-main/core/quants/iq-quants';
import {
  awkwardImatrices,
  compareWithLlama,
  edgeImatrix,
  edgeMatrix,
  expectSameDecode,
  IMATRICES,
  storiesMatrices,
  STORIES_TENSORS,
  syntheticMatrices,
  tieProneMatrices,
  type TestMatrix,
} from '../../support/encoder-check';

const TYPES: [string, RowEncoder, BlockDecoder][] = [
  ['IQ2_XXS', encodeIQ2_XXS, decodeIQ2_XXS],
  ['IQ2_XS', encodeIQ2_XS, decodeIQ2_XS],
  ['IQ1_S', encodeIQ1_S, decodeIQ1_S],
  ['IQ1_M', encodeIQ1_M, decodeIQ1_M],
  ['IQ2_S', encodeIQ2_S, decodeIQ2_S],
  ['IQ3_S', encodeIQ3_S, decodeIQ3_S],
  ['IQ3_XXS', encodeIQ3_XXS, decodeIQ3_XXS],
];

/** Rows of 256 and 512, several seeds; some matrices with whole zero rows. */
function randomMatrices(): TestMatrix[] {
  const out: TestMatrix[] = [];
  for (const seed of [1, 2, 3]) {
    for (const rowLength of [256, 512])
      out.push(
        ...syntheticMatrices(8, rowLength, seed).map((m) => ({
          ...m,
          label: `${m.label} seed ${seed} rows of ${rowLength}`,
        })),
      );
  }
  for (const m of syntheticMatrices(6, 512, 4)) {
    const data = m.data.slice();
    data.fill(0, 0, 512);
    data.fill(0, 3 * 512, 4 * 512);
    out.push({ ...m, data, label: `${m.label} with zero rows` });
  }
  return out;
}

describe.each(TYPES)('%s encoder', (name, encode, decode) => {
  const type = ggmlTypeByName(name)!;
  const withImatrix = IMATRICES.filter((im) => im.label !== 'no imatrix');

  const expectSameBytes = (m: TestMatrix, imatrix: Float32Array | null, label: string) => {
    const r = compareWithLlama(type, encode, m, imatrix);
    expect(r.differingBytes, `${name}, ${m.label}, ${label}: bytes differing from llama.cpp`).toBe(0);
    expectSameDecode(type, decode, r.ours, `${name}, ${m.label}, ${label}`);
  };

  it('writes the same bytes as llama.cpp on random tensors with an importance matrix', () => {
    for (const m of randomMatrices()) for (const im of withImatrix) expectSameBytes(m, im.make(m.rowLength), im.label);
  });

  it('writes the same bytes as llama.cpp on real stories260K weights', () => {
    for (const m of storiesMatrices(type.blockSize, STORIES_TENSORS))
      for (const im of withImatrix) expectSameBytes(m, im.make(m.rowLength), im.label);
  });

  it('makes the same choices as llama.cpp on tie-prone data and awkward importance', () => {
    for (const m of tieProneMatrices(4, 512))
      for (const { label, imatrix } of awkwardImatrices(m.rowLength)) expectSameBytes(m, imatrix, label);
  });

  it('handles zero, constant, tiny, huge and one-sided blocks as llama.cpp does', () => {
    const m = edgeMatrix(512);
    expectSameBytes(m, edgeImatrix(m.rowLength), 'imatrix with zeros');
  });

  if (needsImportance(type)) {
    it('refuses to encode without an importance matrix, as llama.cpp does', () => {
      const src = new Float32Array(256);
      expect(() => encode(src, new Uint8Array(type.typeSize), 1, 256, null)).toThrow(/needs an importance matrix/);
    });
  } else {
    // ggml writes these without one too (only llama-quantize's file types that use them refuse it).
    it('writes the same bytes as llama.cpp without an importance matrix', () => {
      for (const m of randomMatrices()) expectSameBytes(m, null, 'no imatrix');
      for (const m of storiesMatrices(type.blockSize, STORIES_TENSORS)) expectSameBytes(m, null, 'no imatrix');
    });
  }

  it('rejects rows that are not whole blocks and buffers that are too small', () => {
    const n = 2 * type.blockSize;
    const src = new Float32Array(n);
    const w = new Float32Array(n).fill(1);
    const bytes = 2 * type.typeSize;
    expect(() => encode(src, new Uint8Array(bytes), 2, type.blockSize - 1, w)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes - 1), 1, n, w)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, n, new Float32Array(type.blockSize))).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, n, w)).not.toThrow();
  });
});

describe('types that need an importance matrix', () => {
  it('are the ones llama.cpp refuses without one (ggml_quantize_requires_imatrix)', () => {
    const requires = ggml.fn('bool ggml_quantize_requires_imatrix(int type)');
    for (const t of GGML_TYPES) expect(needsImportance(t), t.name).toBe(Boolean(requires(t.id)));
  });

  it('IQ2_XXS, IQ2_XS and IQ1_S can be written, and are left out of the re-quantization error table (it has no importance matrix)', () => {
    for (const name of ['IQ2_XXS', 'IQ2_XS', 'IQ1_S']) {
      const type = ggmlTypeByName(name)!;
      expect(hasEncoder(type)).toBe(true);
      expect(encoderFor(type)).toBeTypeOf('function');
      expect(requantCandidates().map((t) => t.name)).not.toContain(name);
    }
  });

  it('IQ2_S and IQ3_XXS can be written without one, so the re-quantization error table lists them', () => {
    for (const name of ['IQ2_S', 'IQ3_XXS']) {
      const type = ggmlTypeByName(name)!;
      expect(needsImportance(type)).toBe(false);
      expect(requantCandidates().map((t) => t.name)).toContain(name);
    }
  });
});
