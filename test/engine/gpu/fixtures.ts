/**
 * Test data for the GPU weight kernels: GGUF files of random weight tensors quantized by
 * llama.cpp's own quantizer, their exact f32 values (the bit-exact CPU decoders), references
 * computed in f64, and small helpers to run a dispatch and read a buffer back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { ggmlTypeByName, type GgmlType } from '../../../src-main/core/ggml-types';
import { decoderFor } from '../../../src-main/core/quants/decoders';
import { openGguf, writeGguf, type OpenGguf } from '../../../src-main/node/gguf-io';
import type { GpuContext } from '../../../src-main/engine/gpu/device';
import type { Dispatch } from '../../../src-main/engine/gpu/ops';
import { uploadWeights, type GpuWeight } from '../../../src-main/engine/gpu/weights';
import { f32ToF16Bits } from '../../../src-main/core/quants/half-encode';
import { ggml, llamaQuantize } from '../../support/ggml-oracle';
import { mulberry32, randomF32 } from '../../support/random';

// Kernel tests read buffers back as the engine's benches do.
export { readBack } from '../../../src-main/engine/gpu/read-back';

/** A temporary folder for a whole test file (call from beforeAll), removed after its last test. */
export function tempDirForSuite(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gufo-gpu-test-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** The types with GPU kernels, in the order. */
export const GPU_TYPE_NAMES = [
  'F32',
  'F16',
  'BF16',
  'Q8_0',
  'Q4_0',
  'Q4_1',
  'Q5_0',
  'Q5_1',
  'Q2_K',
  'Q3_K',
  'Q4_K',
  'Q5_K',
  'Q6_K',
  'IQ4_NL',
  'IQ4_XS',
  'MXFP4',
] as const;

export interface TensorSpec {
  name: string;
  type: string;
  rows: number;
  cols: number;
  seed: number;
}

export interface MadeTensor extends TensorSpec {
  ggmlType: GgmlType;
  /** The bytes as stored in the file. */
  bytes: Uint8Array;
  /** Exact f32 values of the stored weights (rows × cols). */
  values: Float32Array;
}

/** Random weights (gaussian, with a few larger outliers) quantized by llama.cpp, and their decoded values. */
export function makeTensor(spec: TensorSpec): MadeTensor {
  const type = ggmlTypeByName(spec.type);
  if (!type) throw new Error(`unknown type ${spec.type}`);
  const rng = mulberry32(spec.seed);
  const n = spec.rows * spec.cols;
  const f32 = randomF32(n, () => (rng.next() < 0.01 ? rng.studentT() * 4 : rng.gaussian()), 0.05);
  const bytes =
    type.name === 'F32' ? new Uint8Array(f32.buffer.slice(0)) : llamaQuantize(type.id, f32, spec.rows, spec.cols);
  const values = new Float32Array(n);
  decoderFor(type)(bytes, values, n / type.blockSize);
  return { ...spec, ggmlType: type, bytes, values };
}

/** Writes the tensors into one GGUF file in `dir` and opens it (memory-mapped). */
export async function writeTensors(
  dir: string,
  tensors: readonly MadeTensor[],
  file = 'weights.gguf',
): Promise<OpenGguf> {
  const path = join(dir, file);
  await writeGguf(
    path,
    { kvs: [], tensors: tensors.map((t) => ({ name: t.name, type: t.ggmlType, ne: [t.cols, t.rows] })) },
    (i) => [tensors[i]!.bytes],
  );
  return openGguf(path);
}

/**
 * The tensors written to one file in the suite's temporary folder (call from beforeAll) and
 * uploaded to `ctx`, by name; the weights are freed and the file closed after the file's last test.
 */
export async function uploadForSuite(ctx: GpuContext, tensors: readonly MadeTensor[]): Promise<Map<string, GpuWeight>> {
  const file = await writeTensors(tempDirForSuite(), tensors);
  afterAll(() => file.file.close());
  const weights = await uploadWeights(
    ctx,
    file.gguf,
    tensors.map((t) => t.name),
  );
  // Hooks run last-registered first: the weights are freed before the file closes.
  afterAll(() => {
    for (const w of weights.values()) w.destroy();
  });
  return weights;
}

/** n vectors of `cols` random f32 values. */
export function randomInput(n: number, cols: number, seed: number): Float32Array<ArrayBuffer> {
  const rng = mulberry32(seed);
  return randomF32(n * cols, () => rng.gaussian()) as Float32Array<ArrayBuffer>;
}

/**
 * y = W·x in f64 for n tokens, plus the scale of each dot product, Σ|w|·|x|, against which the
 * error of an f32 result is measured.
 */
export function referenceMatmul(
  w: Float32Array,
  rows: number,
  cols: number,
  x: Float32Array,
  n: number,
): { y: Float64Array; scale: Float64Array } {
  const y = new Float64Array(n * rows);
  const scale = new Float64Array(n * rows);
  for (let t = 0; t < n; t++) {
    for (let r = 0; r < rows; r++) {
      let s = 0;
      let a = 0;
      const wo = r * cols;
      const xo = t * cols;
      for (let c = 0; c < cols; c++) {
        const p = w[wo + c]! * x[xo + c]!;
        s += p;
        a += Math.abs(p);
      }
      y[t * rows + r] = s;
      scale[t * rows + r] = a;
    }
  }
  return { y, scale };
}

/** The first index where a and b differ bit for bit (-1: none). */
export function firstBitDifference(a: Float32Array, b: Float32Array): number {
  const ia = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const ib = new Uint32Array(b.buffer, b.byteOffset, b.length);
  return ia.findIndex((v, i) => v !== ib[i]);
}

/** Largest |got − want| / Σ|w||x| over all outputs. */
export function maxRelativeError(got: Float32Array, want: Float64Array, scale: Float64Array): number {
  let worst = 0;
  for (let i = 0; i < want.length; i++) {
    const e = Math.abs(got[i]! - want[i]!) / Math.max(scale[i]!, 1e-30);
    if (!(e <= worst)) worst = e; // NaN propagates
  }
  return worst;
}

export function storageBuffer(
  device: GPUDevice,
  data: Float32Array<ArrayBuffer> | Uint32Array<ArrayBuffer> | number,
  label = 'test',
): GPUBuffer {
  const size = typeof data === 'number' ? data : data.byteLength;
  const buffer = device.createBuffer({
    label,
    size: Math.max(16, Math.ceil(size / 4) * 4),
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
  });
  if (typeof data !== 'number') device.queue.writeBuffer(buffer, 0, data);
  return buffer;
}

/** Encodes the dispatches in one compute pass, submits, and waits. Fails on any validation error. */
export async function run(device: GPUDevice, dispatches: readonly Dispatch[]): Promise<void> {
  device.pushErrorScope('validation');
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass();
  for (const d of dispatches) d.encode(pass);
  pass.end();
  device.queue.submit([encoder.finish()]);
  const error = await device.popErrorScope();
  if (error) throw new Error(`GPU validation error: ${error.message}`);
  await device.queue.onSubmittedWorkDone();
}

/**
 * The layout row-groups.ts specifies, written out independently: where quad q (16 bytes) of block
 * b of row `row` of a part of `partRows` rows lies in its main plane, as a quad index; rows as
 * stored without `groups`.
 */
export function rowGroupQuad(
  row: number,
  b: number,
  q: number,
  shape: { partRows: number; blocksPerRow: number; quads: number },
  groups?: { lanes: number; rows: number },
): number {
  const { partRows, blocksPerRow, quads } = shape;
  const stored = (row * blocksPerRow + b) * quads + q;
  if (!groups) return stored;
  const groupRows = groups.lanes * groups.rows;
  if (row >= partRows - (partRows % groupRows)) return stored;
  // Row i of its group: row i mod rows of lane ⌊i / rows⌋.
  const i = row % groupRows;
  return (
    (row - i) * blocksPerRow * quads +
    ((b * groups.rows + (i % groups.rows)) * quads + q) * groups.lanes +
    Math.floor(i / groups.rows)
  );
}

/** The text of WGSL function `name` in `source` (from `fn name(` to its closing brace at column 0). */
export function wgslFunction(source: string, name: string): string {
  return new RegExp(`^fn ${name}\\([^]*?\\n}\\n`, 'm').exec(source)?.[0] ?? '';
}

/** llama.cpp's q8_1 of x (quantize_row_q8_1_ref): per block of 32 values, its f16 d and its codes. */
function llamaQ8_1(x: Float32Array): { d: Uint16Array; q: Int8Array } {
  const blocks = x.length / 32;
  const bytes = new Uint8Array(blocks * 36); // block_q8_1: f16 d, f16 s, int8 qs[32]
  ggml.fn('void quantize_row_q8_1_ref(const float *x, void *y, int64_t k)')(x, bytes, x.length);
  const view = new DataView(bytes.buffer);
  const d = new Uint16Array(blocks);
  const q = new Int8Array(x.length);
  for (let b = 0; b < blocks; b++) {
    d[b] = view.getUint16(36 * b, true);
    q.set(new Int8Array(bytes.buffer, 36 * b + 4, 32), 32 * b);
  }
  return { d, q };
}

/**
 * x as the GPU's integer mat-vec sees it (INT_DOT: matmul.wgsl's quantize_x): llama.cpp's q8_1
 * codes of each block of 32 times d_x = max|x| / 127, which the kernel keeps in f32 where
 * llama.cpp stores it in f16 (throws unless llama.cpp's f16 d is that value rounded).
 */
export function q8_1Values(x: Float32Array): Float32Array {
  const { d, q } = llamaQ8_1(x);
  const out = new Float32Array(x.length);
  for (let b = 0; b < x.length / 32; b++) {
    let amax = 0;
    for (let i = 32 * b; i < 32 * b + 32; i++) amax = Math.max(amax, Math.abs(x[i]!));
    const dx = Math.fround(amax / 127);
    if (f32ToF16Bits(dx) !== d[b]) throw new Error(`q8_1 block ${b}: llama.cpp's d is ${d[b]}, not f16(${dx})`);
    for (let i = 32 * b; i < 32 * b + 32; i++) out[i] = Math.fround(dx * q[i]!);
  }
  return out;
}
