import { describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import type { BlockDecoder, RowEncoder } from '../../../src-main/core/quants/codec';
import { encodeIQ4_NL, encodeIQ4_XS } from '../../../src-main/core/quants/iq4-encoders';
import { decodeIQ4_NL, decodeIQ4_XS } from '../../../src-main/core/quants/iq-quants';
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
  ['IQ4_NL', encodeIQ4_NL, decodeIQ4_NL],
  ['IQ4_XS', encodeIQ4_XS, decodeIQ4_XS],
];

describe.each(TYPES)('%s encoder', (name, encode, decode) => {
  const type = ggmlTypeByName(name)!;
  const matrices = [...syntheticMatrices(32, 512), ...storiesMatrices(type.blockSize, STORIES_TENSORS)];
  const subject = { type, encode, decode, sameBytes: true };
  itMatchesLlama(subject, matrices);
  itMatchesLlamaOnTies(subject);
  itMatchesLlamaOnEdgeCases(subject);
  itMatchesLlamaOnNonFinite(subject);

  it('rejects rows that are not whole blocks and buffers that are too small', () => {
    const n = 2 * type.blockSize;
    const src = new Float32Array(n);
    const bytes = 2 * type.typeSize;
    expect(() => encode(src, new Uint8Array(bytes), 2, type.blockSize - 1, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes - 1), 1, n, null)).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, n, new Float32Array(type.blockSize))).toThrow(RangeError);
    expect(() => encode(src, new Uint8Array(bytes), 1, n, null)).not.toThrow();
  });
});
