import { describe, expect, it } from 'vitest';
import { memorySource } from '../../src-main/core/gguf/byte-source';
import { GgufError } from '../../src-main/core/gguf/errors';
import { parseGguf } from '../../src-main/core/gguf/reader';
import { RawGguf } from '../support/raw-gguf';

const F32 = 0;
const Q4_0 = 2;

/** A valid one-tensor file: 4 F32 values at offset 0. */
function valid(): RawGguf {
  return new RawGguf()
    .header(1, 1)
    .kvString('general.architecture', 'llama')
    .tensor('w', [4], F32, 0)
    .padTo(32)
    .zeros(16);
}

function parse(bytes: Uint8Array) {
  return parseGguf(memorySource(bytes), 'bad.gguf');
}

/** Parses and returns the GgufError thrown, failing if none (or another error) is. */
function errorOf(bytes: Uint8Array): GgufError {
  try {
    parse(bytes);
  } catch (err) {
    expect(err).toBeInstanceOf(GgufError);
    expect((err as GgufError).message.startsWith('bad.gguf: ')).toBe(true);
    return err as GgufError;
  }
  throw new Error('expected the file to be rejected');
}

describe('hostile and broken GGUF files', () => {
  it('accepts the valid baseline', () => {
    const gguf = parse(valid().build());
    expect(gguf.tensors[0]!.bytes).toBe(16);
    expect(gguf.getString('general.architecture')).toBe('llama');
  });

  const cases: [string, () => Uint8Array, string, RegExp][] = [
    [
      'wrong magic',
      () => new RawGguf().bytes([0x47, 0x47, 0x4d, 0x4c]).u32(3).u64(0).u64(0).build(),
      'magic',
      /not a GGUF file/,
    ],
    ['unsupported version', () => new RawGguf().header(0, 0, 4).build(), 'version', /unsupported GGUF version 4/],
    ['big-endian file', () => new RawGguf().header(0, 0, 3 * 2 ** 24).build(), 'version', /big-endian/],
    ['empty file', () => new Uint8Array(0), 'magic', /truncated/],
    ['truncated header', () => valid().build().subarray(0, 20), 'metadata_kv_count', /truncated/],
    [
      'truncated metadata value',
      () => new RawGguf().header(0, 1).kvString('general.architecture', 'llama').build().subarray(0, 60),
      'metadata "general.architecture"',
      /truncated|exceeds/,
    ],
    ['absurd kv count', () => new RawGguf().header(0, 2n ** 40n).build(), 'header', /more than the \d+ bytes left/],
    ['absurd tensor count', () => new RawGguf().header(2n ** 50n, 0).build(), 'header', /more than the \d+ bytes left/],
    ['count beyond 2^53', () => new RawGguf().header(0, 2n ** 60n).build(), 'metadata_kv_count', /too large/],
    [
      'absurd key length',
      () =>
        new RawGguf()
          .header(0, 1)
          .u64(2n ** 40n)
          .zeros(16)
          .build(),
      'metadata[0] key',
      /exceeds/,
    ],
    [
      'absurd string length',
      () =>
        new RawGguf()
          .header(0, 1)
          .str('k')
          .u32(8)
          .u64(2n ** 33n)
          .zeros(8)
          .build(),
      'metadata "k"',
      /exceeds/,
    ],
    [
      'absurd array length',
      () =>
        new RawGguf()
          .header(0, 1)
          .str('k')
          .u32(9)
          .u32(4)
          .u64(2n ** 35n)
          .zeros(8)
          .build(),
      'metadata "k"',
      /needs \d+ bytes/,
    ],
    [
      'absurd string array length',
      () =>
        new RawGguf()
          .header(0, 1)
          .str('k')
          .u32(9)
          .u32(8)
          .u64(2n ** 35n)
          .zeros(8)
          .build(),
      'metadata "k"',
      /needs at least/,
    ],
    [
      'unknown metadata type',
      () => new RawGguf().header(0, 1).str('k').u32(13).zeros(8).build(),
      'metadata "k"',
      /unknown metadata value type 13/,
    ],
    [
      'unknown array item type',
      () => new RawGguf().header(0, 1).str('k').u32(9).u32(77).u64(1).zeros(8).build(),
      'metadata "k"',
      /unknown array item type 77/,
    ],
    [
      'deeply nested arrays',
      () => {
        const r = new RawGguf().header(0, 1).str('k').u32(9);
        for (let i = 0; i < 100; i++) r.u32(9).u64(1);
        return r.u32(4).u64(0).build();
      },
      'metadata "k"[0][0][0][0][0][0][0][0]',
      /nested more than 8 deep/,
    ],
    [
      'duplicate key',
      () => new RawGguf().header(0, 2).kvU32('a', 1).kvU32('a', 2).build(),
      'metadata "a"',
      /duplicate key/,
    ],
    [
      'duplicate tensor name',
      () => new RawGguf().header(2, 0).tensor('w', [4], F32, 0).tensor('w', [4], F32, 32).padTo(32).zeros(64).build(),
      'tensor "w"',
      /duplicate tensor name/,
    ],
    [
      'tensor data outside the file',
      () => new RawGguf().header(1, 0).tensor('w', [1024], F32, 0).padTo(32).zeros(16).build(),
      'tensor "w" data',
      /outside the file/,
    ],
    [
      'tensor offset past the end',
      () =>
        new RawGguf()
          .header(1, 0)
          .tensor('w', [4], F32, 2n ** 40n)
          .padTo(32)
          .zeros(16)
          .build(),
      'tensor "w" data',
      /outside the file/,
    ],
    [
      'overlapping tensors',
      () =>
        new RawGguf().header(2, 0).tensor('a', [16], F32, 0).tensor('b', [16], F32, 32).padTo(32).zeros(128).build(),
      'tensor "b" data',
      /overlaps tensor "a"/,
    ],
    [
      'misaligned offset',
      () => new RawGguf().header(1, 0).tensor('w', [4], F32, 4).padTo(32).zeros(32).build(),
      'tensor "w" offset',
      /not a multiple of the alignment 32/,
    ],
    [
      'dimension overflow',
      () =>
        new RawGguf()
          .header(1, 0)
          .tensor('w', [2 ** 40, 2 ** 40], F32, 0)
          .padTo(32)
          .build(),
      'tensor "w" ne',
      /overflow/,
    ],
    [
      'byte size overflow',
      () =>
        new RawGguf()
          .header(1, 0)
          .tensor('w', [2 ** 26, 2 ** 26], 28, 0)
          .padTo(32)
          .build(),
      'tensor "w" ne',
      /overflow/,
    ],
    [
      'row not a whole number of blocks',
      () => new RawGguf().header(1, 0).tensor('w', [33, 2], Q4_0, 0).padTo(32).zeros(64).build(),
      'tensor "w" ne[0]',
      /not a multiple of the Q4_0 block size 32/,
    ],
    [
      'unknown type id',
      () => new RawGguf().header(1, 0).tensor('w', [4], 99, 0).padTo(32).zeros(16).build(),
      'tensor "w" type',
      /unknown ggml type id 99/,
    ],
    [
      'removed type id',
      () => new RawGguf().header(1, 0).tensor('w', [32], 31, 0).padTo(32).zeros(32).build(),
      'tensor "w" type',
      /31 \(Q4_0_4_4\) was removed/,
    ],
    [
      'too many dimensions',
      () => new RawGguf().header(1, 0).tensor('w', [1, 1, 1, 1, 4], F32, 0).padTo(32).zeros(16).build(),
      'tensor "w" n_dims',
      /5 dimensions/,
    ],
    [
      'tensor name too long',
      () => new RawGguf().header(1, 0).tensor('x'.repeat(64), [4], F32, 0).padTo(32).zeros(16).build(),
      `tensor "${'x'.repeat(64)}"`,
      /name longer than 63/,
    ],
    [
      'alignment not a power of two',
      () => new RawGguf().header(0, 1).kvU32('general.alignment', 24).build(),
      'metadata "general.alignment"',
      /not a power of two/,
    ],
    [
      'alignment of the wrong type',
      () => new RawGguf().header(0, 1).kvString('general.alignment', '32').build(),
      'metadata "general.alignment"',
      /must be a UINT32/,
    ],
  ];

  for (const [what, make, field, problem] of cases) {
    it(`rejects ${what}, naming the field`, () => {
      const err = errorOf(make());
      expect(err.field).toBe(field);
      expect(err.problem).toMatch(problem);
      expect(err.message).not.toContain('\n');
    });
  }

  it('allocates nothing from a length that lies: a 2^40-item array claim fails fast', () => {
    const bytes = new RawGguf()
      .header(0, 1)
      .str('k')
      .u32(9)
      .u32(0)
      .u64(2n ** 40n)
      .build();
    const before = process.memoryUsage().arrayBuffers;
    errorOf(bytes);
    expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(16 * 2 ** 20);
  });
});
