import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import type { BlockDecoder, RowEncoder } from '../../../src-main/core/quants/codec';
import {
  encodeQ4_0,
  encodeQ4_1,
  encodeQ5_0,
  encodeQ5_1,
  encodeQ8_0,
} from '../../../src-main/core/quants/legacy-encoders';
import {
  decodeQ4_0,
  decodeQ4_1,
  decodeQ5_0,
  decodeQ5_1,
  decodeQ8_0,
} from '../../../src-main/core/quants/legacy-quants';
import {
  itMatchesLlama,
  itMatchesLlamaOnEdgeCases,
  itMatchesLlamaOnNonFinite,
  itMatchesLlamaOnTies,
  storiesMatrices,
  STORIES_TENSORS,
  syntheticMatrices,
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
  const subject = { type, encode, decode, sameBytes: true };
  itMatchesLlama(subject, matrices);
  itMatchesLlamaOnTies(subject);
  itMatchesLlamaOnEdgeCases(subject);
  itMatchesLlamaOnNonFinite(subject);

  it('rejects rows that are not whole blocks and buffers that are too small', () => {
    const src = new Float32Array(64);
    const bytes = (64 / type.blockSize) * type.typeSize;
    expect(() => encode(src, new Uint8Array(bytes), 2, 31, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes - 1), 1, 64, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, 64, new Float32Array(32))).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, 64, null)).not.toThrow();
  });
});
