/**
 * Shared checks for the f32 → blocks encoders against llama.cpp's ggml_quantize_chunk: seeded
 * test matrices (synthetic and real stories260K weights), realistic importance matrices, the
 * round-trip RMSE through llama.cpp's own decoder, and a decoder cross-check.
 */
import { expect, it } from 'vitest';
import type { BlockDecoder, RowEncoder } from '../../src-main/core/quants/codec';
import type { GgmlType } from '../../src-main/core/ggml-types';
import { encoderFor } from '../../src-main/core/quants/encoders';
import { openGguf } from '../../src-main/node/gguf-io';
import { typeOf } from './decoder-check';
import { llamaDequantize, llamaQuantize } from './ggml-oracle';
import { STORIES_260K } from './paths';
import { mulberry32, randomF32 } from './random';

/** A matrix to encode: `rows × rowLength` values. */
export interface TestMatrix {
  label: string;
  data: Float32Array;
  rows: number;
  rowLength: number;
}

/** Synthetic matrices: gaussian, Student-t (3 dof) and gaussian³, `rows × rowLength`, seeded. */
export function syntheticMatrices(rows: number, rowLength: number, seed = 1): TestMatrix[] {
  const rng = mulberry32(seed);
  const n = rows * rowLength;
  return [
    { label: 'gaussian', data: randomF32(n, rng.gaussian, 0.02), rows, rowLength },
    { label: 'student-t3', data: randomF32(n, () => rng.studentT(3), 0.02), rows, rowLength },
    { label: 'gaussian^3', data: randomF32(n, rng.gaussianCubed), rows, rowLength },
  ];
}

/**
 * Real 2-D weights from stories260K (F32). Each tensor keeps its own row length when that is a
 * whole number of `blockSize` blocks, else its values are read as rows of `fallbackRow`.
 */
export function storiesMatrices(blockSize: number, names: readonly string[], fallbackRow = 256): TestMatrix[] {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    return names.map((name) => {
      const t = gguf.tensors.find((x) => x.name === name);
      if (!t) throw new Error(`stories260K has no tensor ${name}`);
      if (t.type.name !== 'F32') throw new Error(`${name} is ${t.type.name}, expected F32`);
      const data = new Float32Array(gguf.tensorData(t).slice().buffer);
      const ne0 = Number(t.ne[0]);
      let rowLength = ne0 % blockSize === 0 ? ne0 : fallbackRow;
      if (rowLength % blockSize !== 0) rowLength = blockSize;
      const rows = Math.floor(data.length / rowLength);
      return { label: `stories260K ${name}`, data: data.subarray(0, rows * rowLength), rows, rowLength };
    });
  } finally {
    file.close();
  }
}

/** The stories260K tensors the quality tests use (embeddings, attention, both FFN shapes). */
export const STORIES_TENSORS = [
  'token_embd.weight',
  'output.weight',
  'blk.0.attn_q.weight',
  'blk.2.attn_v.weight',
  'blk.1.ffn_gate.weight',
  'blk.3.ffn_down.weight',
] as const;

/** An importance matrix for `rowLength` columns. */
export interface TestImatrix {
  label: string;
  make(rowLength: number): Float32Array | null;
}

export const IMATRICES: readonly TestImatrix[] = [
  { label: 'no imatrix', make: () => null },
  {
    label: 'uniform [0.1, 10] imatrix',
    make(n) {
      const rng = mulberry32(7 + n);
      return randomF32(n, () => 0.1 + 9.9 * rng.next());
    },
  },
  {
    // What llama-imatrix collects: the mean of squared activations per column. Activations here
    // have a heavy-tailed per-column scale (a few loud channels), as in real models.
    label: 'squared-activation imatrix',
    make(n) {
      const rng = mulberry32(11 + n);
      const scale = Float32Array.from({ length: n }, () => Math.exp(1.2 * rng.gaussian()));
      const out = new Float32Array(n);
      const samples = 32;
      for (let s = 0; s < samples; s++) {
        for (let j = 0; j < n; j++) {
          const a = scale[j]! * rng.gaussian();
          out[j]! += (a * a) / samples;
        }
      }
      return out;
    },
  },
];

export function rmse(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) {
    const d = a[i]! - b[i]!;
    s += d * d;
  }
  return Math.sqrt(s / a.length);
}

export interface EncodeComparison {
  ours: Uint8Array;
  theirs: Uint8Array;
  /** Bytes where ours and llama.cpp's differ. */
  differingBytes: number;
  /** Round-trip RMSE, both decoded by llama.cpp. */
  rmseOurs: number;
  rmseTheirs: number;
}

/** Encodes `m` with `encoder` and with llama.cpp's ggml_quantize_chunk, and compares. */
export function compareWithLlama(
  type: GgmlType,
  encoder: RowEncoder,
  m: TestMatrix,
  imatrix: Float32Array | null,
): EncodeComparison {
  const theirs = llamaQuantize(type.id, m.data, m.rows, m.rowLength, imatrix ?? undefined);
  // Our output goes to an odd offset inside a larger buffer, as a slice of an output file would.
  const big = new Uint8Array(theirs.length + 7).fill(0xa5);
  const ours = big.subarray(3, 3 + theirs.length);
  encoder(m.data, ours, m.rows, m.rowLength, imatrix);
  expect(big[2], 'wrote before its destination').toBe(0xa5);
  expect(big[3 + theirs.length], 'wrote past its destination').toBe(0xa5);
  let differingBytes = 0;
  for (let i = 0; i < ours.length; i++) if (ours[i] !== theirs[i]) differingBytes++;
  const n = m.rows * m.rowLength;
  const oursCopy = ours.slice();
  return {
    ours: oursCopy,
    theirs,
    differingBytes,
    rmseOurs: rmse(m.data, llamaDequantize(type.id, oursCopy, n)),
    rmseTheirs: rmse(m.data, llamaDequantize(type.id, theirs, n)),
  };
}

/**
 * Decodes `bytes` with llama.cpp's dequantize_row_* and with our decoder, and expects the same
 * value at every position (Object.is: signed zeros and NaNs count).
 */
export function expectSameDecode(type: GgmlType, decoder: BlockDecoder, bytes: Uint8Array, label: string): void {
  const blocks = bytes.length / type.typeSize;
  const theirs = llamaDequantize(type.id, bytes.slice(), blocks * type.blockSize);
  const ours = new Float32Array(blocks * type.blockSize);
  decoder(bytes, ours, blocks);
  for (let i = 0; i < ours.length; i++) {
    if (!Object.is(ours[i], theirs[i])) {
      expect.fail(
        `${label}: value ${i} (block ${Math.floor(i / type.blockSize)}) decodes to ${ours[i]} here, ${theirs[i]} in llama.cpp`,
      );
    }
  }
}

/**
 * Awkward rows (block-aligned runs of 32): zeros, negative zeros, a constant, a single spike, tiny
 * (subnormal scales), huge (f16 scale overflow), all-negative, alternating signs, and ordinary
 * gaussian values around them. `rowLength` must be a multiple of 256.
 */
export function edgeMatrix(rowLength: number): TestMatrix {
  const rng = mulberry32(99);
  const runs: ((j: number) => number)[] = [
    () => 0,
    () => -0,
    () => 0.375,
    (j) => (j === 5 ? -3 : 0),
    () => rng.gaussian() * 1e-7,
    () => rng.gaussian() * 1e-30,
    () => rng.gaussian() * 1e6,
    () => -Math.abs(rng.gaussian()) - 1,
    (j) => (j % 2 ? 1 : -1),
    () => Math.abs(rng.gaussian()) + 0.5,
    (j) => (j === 31 ? 1e-3 : 1e-20),
    () => rng.gaussian(),
  ];
  const rows = runs.length;
  const data = new Float32Array(rows * rowLength);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < rowLength; c++) {
      // Row r starts with 256 values of kind r, then cycles through the kinds per 32 values.
      const kind = c < 256 ? r : (r + (c >> 5)) % runs.length;
      data[r * rowLength + c] = runs[kind]!(c & 31);
    }
  }
  return { label: 'edge cases', data, rows, rowLength };
}

/** An importance matrix with zeros and extremes in it. */
export function edgeImatrix(n: number): Float32Array {
  const rng = mulberry32(5);
  return Float32Array.from({ length: n }, (_, j) => (j % 7 === 3 ? 0 : j % 11 === 0 ? 1e4 : rng.next()));
}

/**
 * Data where rounding ties and near-ties are common (values on coarse grids, few distinct values),
 * or scales differ wildly within a row: the cases where a shortcut in a scale search would
 * show up as a different byte.
 */
export function tieProneMatrices(rows: number, rowLength: number, seed = 3): TestMatrix[] {
  const rng = mulberry32(seed);
  const make = (label: string, draw: () => number): TestMatrix => ({
    label,
    data: Float32Array.from({ length: rows * rowLength }, draw),
    rows,
    rowLength,
  });
  return [
    make('multiples of 0.1', () => Math.round(rng.gaussian() * 20) * 0.1),
    make('small integers', () => rng.int(17) - 8),
    make('half-integers', () => (rng.int(33) - 16) / 2),
    make('90% zeros', () => (rng.next() < 0.9 ? 0 : rng.gaussian())),
    make('all positive', () => Math.abs(rng.gaussian()) + 3),
    make('scales 1e-6..1e5', () => rng.gaussian() * 10 ** (rng.int(12) - 6)),
    make('Cauchy', () => rng.studentT(1)),
  ];
}

/** Importance matrices with zeros, integer levels, and a 16-decade range. */
export function awkwardImatrices(n: number, seed = 4): { label: string; imatrix: Float32Array }[] {
  const rng = mulberry32(seed);
  return [
    { label: '30% zero weights', imatrix: Float32Array.from({ length: n }, () => (rng.next() < 0.3 ? 0 : rng.next())) },
    { label: 'weights 0..3', imatrix: Float32Array.from({ length: n }, () => rng.int(4)) },
    { label: 'weights 1e-8..1e8', imatrix: Float32Array.from({ length: n }, () => 10 ** (rng.next() * 16 - 8)) },
  ];
}

/**
 * Values with NaN and ±Inf among ordinary ones: NaN first in many blocks and groups (where a
 * min/max search starts from it), lone infinities, and whole blocks of NaN and of Inf.
 * `rowLength` must be a multiple of 256; four rows.
 */
export function nonFiniteMatrix(rowLength: number): TestMatrix {
  const rows = 4;
  const data = randomF32(rows * rowLength, mulberry32(8).gaussian);
  for (let i = 0; i < data.length; i += 97) data[i] = NaN;
  for (let i = 3 * rowLength; i < 4 * rowLength; i += 7) data[i] = NaN;
  data[0] = NaN;
  data[32] = NaN;
  data[256] = NaN;
  data[300] = Infinity;
  data[rowLength + 1] = Infinity;
  data[rowLength + 88] = -Infinity;
  data.fill(NaN, rowLength + 256, rowLength + 288);
  data.fill(Infinity, rowLength + 288, rowLength + 320);
  return { label: 'NaN and infinities', data, rows, rowLength };
}

/** What the shared encoder checks below need of one type. */
export interface EncoderUnderTest {
  type: GgmlType;
  encode: RowEncoder;
  decode: BlockDecoder;
  /** Whether the bytes must equal llama.cpp's (else only the RMSE bound and the decoder cross-check). */
  sameBytes: boolean;
}

/**
 * One test per importance matrix of IMATRICES: every matrix of `matrices` encoded as llama.cpp's
 * ggml_quantize_chunk does it, round-trip RMSE no worse by more than 1 %, the same bytes (when
 * `sameBytes`), and our decoder reading them as llama.cpp's does.
 */
export function itMatchesLlama(
  { type, encode, decode, sameBytes }: EncoderUnderTest,
  matrices: readonly TestMatrix[],
): void {
  for (const im of IMATRICES) {
    it(`matches llama.cpp's ggml_quantize_chunk with ${im.label}`, () => {
      for (const m of matrices) {
        const label = `${type.name}, ${m.label}, ${im.label}`;
        const r = compareWithLlama(type, encode, m, im.make(m.rowLength));
        // The acceptance bound: no worse than llama.cpp by more than 1 % ...
        expect(r.rmseOurs, `${label}: RMSE ${r.rmseOurs} vs llama.cpp ${r.rmseTheirs}`).toBeLessThanOrEqual(
          1.01 * r.rmseTheirs,
        );
        // ... and in fact the same bytes, since the same scales are chosen.
        if (sameBytes) expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
        expectSameDecode(type, decode, r.ours, label);
      }
    });
  }
}

/** A test of the same bytes as llama.cpp on tieProneMatrices, without and with awkwardImatrices. */
export function itMatchesLlamaOnTies({ type, encode }: EncoderUnderTest): void {
  it('makes the same choices as llama.cpp on tie-prone data and awkward importance', () => {
    for (const m of tieProneMatrices(8, 512)) {
      for (const { label: il, imatrix } of [{ label: 'no imatrix', imatrix: null }, ...awkwardImatrices(m.rowLength)]) {
        const label = `${type.name}, ${m.label}, ${il}`;
        const r = compareWithLlama(type, encode, m, imatrix);
        expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
      }
    }
  });
}

/** A test on edgeMatrix, without and with edgeImatrix: the same bytes (when `sameBytes`), read back as llama.cpp reads them. */
export function itMatchesLlamaOnEdgeCases({ type, encode, decode, sameBytes }: EncoderUnderTest): void {
  it('handles zero, constant, tiny, huge and one-sided blocks as llama.cpp does', () => {
    const m = edgeMatrix(512);
    for (const imatrix of [null, edgeImatrix(m.rowLength)]) {
      const label = `${type.name}, edge cases, ${imatrix ? 'imatrix with zeros' : 'no imatrix'}`;
      const r = compareWithLlama(type, encode, m, imatrix);
      if (sameBytes) expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
      expectSameDecode(type, decode, r.ours, label);
    }
  });
}

/** A test on nonFiniteMatrix, without and with a uniform importance matrix: the same bytes (when `sameBytes`). */
export function itMatchesLlamaOnNonFinite({ type, encode, sameBytes }: EncoderUnderTest): void {
  it('encodes NaN and infinite values as llama.cpp does', () => {
    const m = nonFiniteMatrix(512);
    for (const imatrix of [null, new Float32Array(m.rowLength).fill(1)]) {
      const label = `${type.name}, ${m.label}, ${imatrix ? 'uniform imatrix' : 'no imatrix'}`;
      const r = compareWithLlama(type, encode, m, imatrix);
      if (sameBytes) expect(r.differingBytes, `${label}: bytes differing from llama.cpp`).toBe(0);
    }
  });
}

/** Gufo's encoder for `typeName` writes llama.cpp's bytes for these rows (and importance matrix). */
export function expectLlamaBytes(
  typeName: string,
  data: Float32Array,
  rows: number,
  rowLength: number,
  imatrix: Float32Array | null,
): void {
  const type = typeOf(typeName);
  expect(
    compareWithLlama(type, encoderFor(type), { label: typeName, data, rows, rowLength }, imatrix).differingBytes,
  ).toBe(0);
}
