/**
 * Bit-exact comparison of a block decoder against llama.cpp's own dequantize_row_*: the bytes are
 * placed at an unaligned offset inside a bigger buffer (as a view into a memory-mapped file would
 * be), decoded by ours, decoded by llama.cpp from a separate copy, and compared value by value as
 * f32 bit patterns (stricter than Object.is: NaN payloads must match too).
 */
import { expect } from 'vitest';
import type { BlockDecoder } from '../../src-main/core/quants/codec';
import { ggmlTypeByName, type GgmlType } from '../../src-main/core/ggml-types';
import { llamaDequantize, llamaQuantize } from './ggml-oracle';
import { mulberry32, type Rng } from './random';

export function typeOf(typeName: string): GgmlType {
  const t = ggmlTypeByName(typeName);
  if (!t) throw new Error(`unknown ggml type ${typeName}`);
  return t;
}

/** `bytes` copied to `offset` inside a larger buffer, returned as a view (byteOffset = offset). */
export function atOffset(bytes: Uint8Array, offset: number): Uint8Array {
  const big = new Uint8Array(bytes.length + offset + 5);
  big.fill(0xa5);
  big.set(bytes, offset);
  return big.subarray(offset, offset + bytes.length);
}

export interface Mismatch {
  index: number;
  ours: number;
  theirs: number;
  oursBits: number;
  theirsBits: number;
  count: number;
}

const hex = (x: number): string => `0x${(x >>> 0).toString(16).padStart(8, '0')}`;

/**
 * The first value where `ours` and `theirs` differ as bit patterns (and how many differ), or null.
 * With `anyNaN`, two NaNs count as equal whatever their payloads (Object.is semantics).
 */
export function firstMismatch(ours: Float32Array, theirs: Float32Array, anyNaN = false): Mismatch | null {
  if (ours.length !== theirs.length) throw new Error(`length ${ours.length} vs ${theirs.length}`);
  const a = new Uint32Array(ours.buffer, ours.byteOffset, ours.length);
  const b = new Uint32Array(theirs.buffer, theirs.byteOffset, theirs.length);
  let first = -1;
  let count = 0;
  for (let i = 0; i < a.length; i++) {
    if (a[i] !== b[i] && !(anyNaN && Number.isNaN(ours[i]) && Number.isNaN(theirs[i]))) {
      if (first < 0) first = i;
      count++;
    }
  }
  if (first < 0) return null;
  return {
    index: first,
    ours: ours[first]!,
    theirs: theirs[first]!,
    oursBits: a[first]!,
    theirsBits: b[first]!,
    count,
  };
}

export interface BitExactOptions {
  /** Byte offset of the source view inside its buffer (default 3: not 2- or 4-byte aligned). */
  offset?: number;
  /** What to compare against instead of llama.cpp's dequantize_row_* (e.g. for F32, which has none). */
  reference?: Float32Array;
  /** Label for failure messages. */
  label?: string;
  /**
   * Accept any NaN where llama.cpp has a NaN. By default payloads must match too, which holds for
   * every decoder here on x86-64 (NaNs arise only from NaN/inf scales, i.e. corrupt blocks).
   */
  anyNaN?: boolean;
}

/**
 * Decodes `blocks` blocks of `bytes` with `decoder` from an unaligned view and with llama.cpp, and
 * expects every value to match bit for bit. On failure, names the first mismatching value, its
 * block and the source bytes of that block. Returns our decoded values.
 */
export function expectBitExact(
  typeName: string,
  decoder: BlockDecoder,
  bytes: Uint8Array,
  blocks: number,
  options: BitExactOptions = {},
): Float32Array {
  const type = typeOf(typeName);
  const n = blocks * type.blockSize;
  expect(bytes.length, `${typeName}: byte count`).toBe(blocks * type.typeSize);
  // llama.cpp has no dequantize_row_f32: F32 "decodes" as the identity on its bytes.
  const theirs =
    options.reference ??
    (type.name === 'F32' ? new Float32Array(bytes.slice().buffer) : llamaDequantize(type.id, bytes.slice(), n));
  const src = atOffset(bytes, options.offset ?? 3);
  // The output is a view at a non-zero offset too (decoders that write through integer views must honour it).
  const ours = new Float32Array(n + 8).subarray(4, 4 + n).fill(Number.NaN);
  decoder(src, ours, blocks);
  const m = firstMismatch(ours, theirs, options.anyNaN ?? false);
  if (m) {
    const block = Math.floor(m.index / type.blockSize);
    const blockBytes = Array.from(bytes.subarray(block * type.typeSize, (block + 1) * type.typeSize), (x) =>
      x.toString(16).padStart(2, '0'),
    ).join(' ');
    expect.fail(
      `${typeName}${options.label ? ` (${options.label})` : ''}: ${m.count} of ${n} values differ; first at value ${m.index} ` +
        `(block ${block}, element ${m.index % type.blockSize}): ours ${m.ours} (${hex(m.oursBits)}) vs llama.cpp ${m.theirs} (${hex(m.theirsBits)}); ` +
        `block bytes: ${blockBytes}`,
    );
  }
  return ours;
}

/** A finite f16 of moderate magnitude (2^-12 .. 2^4, either sign), as its 16 bits. */
export function saneF16(rng: Rng): number {
  const exp = 3 + rng.int(17); // biased exponent 3..19 → 2^-12 .. 2^4
  return (rng.int(2) << 15) | (exp << 10) | rng.int(1024);
}

/** A finite f32 of moderate magnitude (2^-20 .. 2^4, either sign), as its 32 bits. */
export function saneF32Bits(rng: Rng): number {
  const exp = 107 + rng.int(25);
  return ((rng.int(2) << 31) | (exp << 23) | rng.int(1 << 23)) >>> 0;
}

export type ScaleField = { at: number; kind: 'f16' | 'f32' };

/**
 * `blocks` blocks of random bytes where the scale fields (f16 or f32, at byte `at` of each block)
 * hold sane finite values instead.
 */
export function randomBlocks(rng: Rng, typeName: string, blocks: number, fields: readonly ScaleField[]): Uint8Array {
  const type = typeOf(typeName);
  const bytes = rng.bytes(blocks * type.typeSize);
  for (let b = 0; b < blocks; b++) {
    const base = b * type.typeSize;
    for (const f of fields) {
      if (f.kind === 'f16') {
        const h = saneF16(rng);
        bytes[base + f.at] = h & 255;
        bytes[base + f.at + 1] = h >> 8;
      } else {
        const w = saneF32Bits(rng);
        for (let k = 0; k < 4; k++) bytes[base + f.at + k] = (w >>> (8 * k)) & 255;
      }
    }
  }
  return bytes;
}

/** Data sets for quantizer-made blocks: name → draw function (per value). */
export function dataSets(rng: Rng): { name: string; draw: () => number }[] {
  return [
    { name: 'gaussian', draw: () => rng.gaussian() },
    { name: 'gaussian × 0.02', draw: () => rng.gaussian() * 0.02 },
    { name: 'student-t(3)', draw: () => rng.studentT(3) },
    { name: 'gaussian³', draw: () => rng.gaussianCubed() },
    { name: 'positive-skewed', draw: () => Math.abs(rng.gaussian()) + 0.1 },
  ];
}

export interface QuantizerCheckOptions {
  seed?: number;
  rows?: number;
  rowLength?: number;
  /** Replaces llamaQuantize (e.g. quantize_row_q8_K_ref for Q8_K, which ggml_quantize_chunk refuses). */
  quantize?: (data: Float32Array, rows: number, rowLength: number) => Uint8Array;
}

/**
 * Quantizes several rows of each data set (gaussian, small gaussian, heavy-tailed, skewed) with
 * llama.cpp, then expects `decoder` to decode the blocks bit-exactly, at byte offsets 1 and 3.
 */
export function expectBitExactOnQuantized(
  typeName: string,
  decoder: BlockDecoder,
  options: QuantizerCheckOptions = {},
): void {
  const type = typeOf(typeName);
  const rows = options.rows ?? 4;
  const rowLength = options.rowLength ?? 1024;
  const rng = mulberry32(options.seed ?? 1234);
  const quantize = options.quantize ?? ((data, r, len) => llamaQuantize(type.id, data, r, len));
  for (const set of dataSets(rng)) {
    const data = new Float32Array(rows * rowLength);
    for (let i = 0; i < data.length; i++) data[i] = set.draw();
    const bytes = quantize(data, rows, rowLength);
    const blocks = (rows * rowLength) / type.blockSize;
    expectBitExact(typeName, decoder, bytes, blocks, { offset: 1, label: set.name });
    expectBitExact(typeName, decoder, bytes, blocks, { offset: 3, label: set.name });
  }
}

/**
 * Random blocks (sane scale fields, random bytes elsewhere) at offsets 1 and 3; then wholly random
 * blocks (NaN, infinite and subnormal scales included), where NaN payloads must match only on
 * x86-64 (elsewhere ggml's own NaN results depend on the CPU's default NaN).
 */
export function expectBitExactOnRandom(
  typeName: string,
  decoder: BlockDecoder,
  fields: readonly ScaleField[],
  blocks = 2048,
  seed = 99,
): void {
  const rng = mulberry32(seed);
  const bytes = randomBlocks(rng, typeName, blocks, fields);
  expectBitExact(typeName, decoder, bytes, blocks, { offset: 1, label: 'random blocks' });
  expectBitExact(typeName, decoder, bytes, blocks, { offset: 3, label: 'random blocks' });
  const wild = rng.bytes(bytes.length);
  expectBitExact(typeName, decoder, wild, blocks, {
    offset: 3,
    label: 'wholly random blocks',
    anyNaN: process.arch !== 'x64',
  });
}

/**
 * The calling contract every decoder keeps: zero blocks is a no-op, and a source or destination
 * too short for `blocks` blocks is refused with a RangeError (rather than decoding missing bytes
 * as zeros or dropping values).
 */
export function expectDecoderContract(typeName: string, decoder: BlockDecoder): void {
  const type = typeOf(typeName);
  const untouched = new Float32Array(type.blockSize).fill(7);
  decoder(new Uint8Array(0), untouched, 0);
  expect(
    untouched.every((v) => v === 7),
    `${typeName}: 0 blocks writes nothing`,
  ).toBe(true);
  const bytes = new Uint8Array(2 * type.typeSize);
  expect(
    () => decoder(bytes.subarray(0, 2 * type.typeSize - 1), new Float32Array(2 * type.blockSize), 2),
    `${typeName}: short source`,
  ).toThrow(RangeError);
  expect(() => decoder(bytes, new Float32Array(2 * type.blockSize - 1), 2), `${typeName}: short destination`).toThrow(
    RangeError,
  );
}
