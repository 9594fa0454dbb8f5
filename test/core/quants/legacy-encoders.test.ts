import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import type { BlockDecoder, RowEncoder } from '../../../src-main/core/quants/codec';
import { encodeQ4_0, encodeQ4_1, encodeQ5_0, encodeQ5_1, encodeQ8_0 } from '../../../src-main/core/quants/legacy-encoders';
import { decodeQ4_0, decodeQ4_1, decodeQ5_0, decodeQ5_1, decodeQ8_0 } from '../../../src-main/core/quants/legacy-quants';
import {
  awkwardImatrices, compareWithLlama, edgeImatrix, edgeMatrix, expectSameDecode, IMATRICES, storiesMatrices, STORIES_TENSORS,
  syntheticMatrices, tieProneMatrices,
} from '../../support/encoder-check';

const TYPES: [string, RowEncoder, BlockDecoder][] = [
  ['Q8_0', encodeQ8_0, decodeQ8_0],
  ['Q4_0', encodeQ4_0, decodeQ4_0],
  ['Q4_1', encodeQ4_1, decodeQ4_1],
  ['Q5_0', encodeQ5_0, decodeQ5_0],
  ['Q5_1', encodeQ5_1, decodeQ5_1],
];

const matrices = [...syntheticMatrices(48, 512), ...storiesMatrices(32, STORIES_TENSORS)];

describe.each(TYPES)('%s encoder', (name, encode, decode) => {
  const type = ggmlTypeByName(name)!;

  for (const im of IMATRICES) {
    it(`matches llama.cpp's ggml_quantize_chunk with ${im.label}`, () => {
      for (const m of matrices) {
        const label = `${name}, ${m.label}, ${im.label}`;
        const r = compareWithLlama(type, encode, m, im.make(m.rowLength));
        // The acceptance bound: no worse than llama.cpp by more than 1 % ...
        expect(r.rmseOurs, `${label}: RMSE ${r.rmseOurs} vs llama.cpp ${r.rmseTheirs}`).toBeLessThanOrEqual(1.01 * r.rmseTheirs);
        // ... and in fact the same bytes, since the same scales are chosen.
        expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
        expectSameDecode(type, decode, r.ours, label);
      }
    });
  }

  it('makes the same choices as llama.cpp on tie-prone data and awkward importance', () => {
    for (const m of tieProneMatrices(8, 512)) {
      for (const { label: il, imatrix } of [{ label: 'no imatrix', imatrix: null }, ...awkwardImatrices(m.rowLength)]) {
        const label = `${name}, ${m.label}, ${il}`;
        const r = compareWithLlama(type, encode, m, imatrix);
        expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
      }
    }
  });

  it('handles zero, constant, tiny, huge and one-sided blocks as llama.cpp does', () => {
    const m = edgeMatrix(512);
    for (const imatrix of [null, edgeImatrix(m.rowLength)]) {
      const label = `${name}, edge cases, ${imatrix ? 'imatrix with zeros' : 'no imatrix'}`;
      const r = compareWithLlama(type, encode, m, imatrix);
      expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
      expectSameDecode(type, decode, r.ours, label);
    }
  });

  it('rejects rows that are not whole blocks and buffers that are too small', () => {
    const src = new Float32Array(64);
    const bytes = (64 / type.blockSize) * type.typeSize;
    expect(() => encode(src, new Uint8Array(bytes), 2, 31, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes - 1), 1, 64, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, 64, new Float32Array(32))).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, 64, null)).not.toThrow();
  });
});
