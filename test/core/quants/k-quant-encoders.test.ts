/**
 * The k-quant encoders (Q2_K…Q6_K) against llama.cpp's ggml_quantize_chunk, without and with an
 * importance matrix: round-trip RMSE through llama.cpp's decoder no worse than llama.cpp's own
 * output by more than 1 %, in fact the same bytes (the same f32 arithmetic picks the same scales),
 * and our decoders read what we write as llama.cpp's do.
 */
import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import type { BlockDecoder, RowEncoder } from '../../../src-main/core/quants/codec';
import {
  encodeQ2_K,
  encodeQ3_K,
  encodeQ4_K,
  encodeQ5_K,
  encodeQ6_K,
} from '../../../src-main/core/quants/k-quant-encoders';
import { decodeQ2_K, decodeQ3_K, decodeQ4_K, decodeQ5_K, decodeQ6_K } from '../../../src-main/core/quants/k-quants';
import {
  itMatchesLlama,
  itMatchesLlamaOnEdgeCases,
  itMatchesLlamaOnNonFinite,
  storiesMatrices,
  STORIES_TENSORS,
  syntheticMatrices,
  type TestMatrix,
} from '../../support/encoder-check';
import { mulberry32, randomF32 } from '../../support/random';

const TYPES: [string, RowEncoder, BlockDecoder][] = [
  ['Q2_K', encodeQ2_K, decodeQ2_K],
  ['Q3_K', encodeQ3_K, decodeQ3_K],
  ['Q4_K', encodeQ4_K, decodeQ4_K],
  ['Q5_K', encodeQ5_K, decodeQ5_K],
  ['Q6_K', encodeQ6_K, decodeQ6_K],
];

/**
 * Byte-for-byte agreement needs llama.cpp's float arithmetic to be plain IEEE f32, one rounding
 * per operation: true of the x86-64 build (no FMA contraction). Elsewhere only the RMSE bound is
 * checked.
 */
const EXACT_ORACLE = process.arch === 'x64';

/** Values that sit exactly on quantization grids (ties everywhere) and a spread of magnitudes. */
function gridMatrix(rows: number, rowLength: number): TestMatrix {
  const rng = mulberry32(21);
  const data = randomF32(rows * rowLength, () => (rng.int(16) - 8) * 2 ** (rng.int(9) - 6));
  return { label: 'grid values', data, rows, rowLength };
}

// stories260K's matrices have rows of 64: they are read as rows of 256 (4 real rows each).
const matrices = [...syntheticMatrices(32, 1024), ...storiesMatrices(256, STORIES_TENSORS, 256), gridMatrix(16, 512)];

describe.each(TYPES)('%s encoder', (name, encode, decode) => {
  const type = ggmlTypeByName(name)!;
  const subject = { type, encode, decode, sameBytes: EXACT_ORACLE };
  itMatchesLlama(subject, matrices);
  itMatchesLlamaOnEdgeCases(subject);
  itMatchesLlamaOnNonFinite(subject);

  it('encodes each row on its own, wherever it sits in the matrix', () => {
    const rng = mulberry32(3);
    const rows = 3;
    const rowLength = 512;
    const src = randomF32(rows * rowLength, () => rng.studentT(3));
    const imatrix = randomF32(rowLength, () => 0.1 + rng.next());
    const rowBytes = (rowLength / type.blockSize) * type.typeSize;
    for (const im of [null, imatrix]) {
      const all = new Uint8Array(rows * rowBytes);
      encode(src, all, rows, rowLength, im);
      for (let r = 0; r < rows; r++) {
        const one = new Uint8Array(rowBytes);
        encode(src.subarray(r * rowLength, (r + 1) * rowLength), one, 1, rowLength, im);
        expect(one, `row ${r}, ${im ? 'imatrix' : 'no imatrix'}`).toEqual(
          all.subarray(r * rowBytes, (r + 1) * rowBytes),
        );
      }
    }
  });

  it('gets through NaN and infinite values', () => {
    const src = randomF32(1024, mulberry32(8).gaussian);
    src[3] = NaN;
    src[300] = Infinity;
    src[600] = -Infinity;
    src.fill(NaN, 768, 800);
    const dst = new Uint8Array((1024 / type.blockSize) * type.typeSize);
    for (const im of [null, new Float32Array(512).fill(1)]) expect(() => encode(src, dst, 2, 512, im)).not.toThrow();
  });

  it('rejects rows that are not whole blocks and buffers that are too small', () => {
    const src = new Float32Array(512);
    const bytes = (512 / type.blockSize) * type.typeSize;
    expect(() => encode(src, new Uint8Array(bytes), 2, 128, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes - 1), 1, 512, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, 512, new Float32Array(256))).toThrow(RangeError);
    expect(() => encode(new Float32Array(256), new Uint8Array(bytes), 1, 512, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, 512, null)).not.toThrow();
  });
});
