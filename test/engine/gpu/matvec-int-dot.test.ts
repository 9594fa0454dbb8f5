/**
 * The GPU decode mat-vec's integer steps (INT_DOT_TYPES; matmul.wgsl's INT_DOT, as llama.cpp's
 * mul_mat_vecq): quantize_x writes the token's x as q8_1 blocks, then the type's step dots its
 * codes with them (dot4I8Packed).
 *
 * - q8_1 as llama.cpp makes it: through an identity Q8_0 weight (d = 1, code 1 on the diagonal)
 *   y is x as the kernel quantized it, d_x · q, which must equal the codes of llama.cpp's own
 *   quantize_row_q8_1_ref times d_x = max|x| / 127 (kept in f32; llama.cpp stores it in f16, which
 *   it must round to), bit for bit; blocks with ties (x / d_x = k + ½: C's roundf takes them away
 *   from zero, WGSL's round to even) and an all-zero block included.
 * - Each type's step against the f64 product of its decoded weights with that quantized x (1e-5
 *   of Σ|w||x|, as matmul.test.ts holds the float steps to the exact x), the same bits whether x's
 *   blocks go through workgroup memory or not.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { INT_DOT_TYPES, MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import {
  firstBitDifference,
  makeTensor,
  maxRelativeError,
  q8_1Values,
  randomInput,
  readBack,
  referenceMatmul,
  run,
  storageBuffer,
  uploadForSuite,
  type MadeTensor,
} from './fixtures';

const COLS = 512;
const TOLERANCE = 1e-5;
const TYPES = [...INT_DOT_TYPES];

/** An identity matrix of COLS in Q8_0: each block d = 1.0 and code 1 where the row meets it. */
function identityQ8_0(): MadeTensor {
  const type = ggmlTypeByName('Q8_0')!;
  const bytes = new Uint8Array((COLS * COLS * type.typeSize) / type.blockSize);
  const values = new Float32Array(COLS * COLS);
  const blocksPerRow = COLS / 32;
  for (let r = 0; r < COLS; r++) {
    for (let b = 0; b < blocksPerRow; b++) {
      const at = (r * blocksPerRow + b) * type.typeSize;
      bytes[at] = 0x00; // f16 1.0 = 0x3c00, little-endian
      bytes[at + 1] = 0x3c;
    }
    bytes[(r * blocksPerRow + Math.floor(r / 32)) * type.typeSize + 2 + (r % 32)] = 1;
    values[r * COLS + r] = 1;
  }
  return { name: 'identity.Q8_0', type: 'Q8_0', rows: COLS, cols: COLS, seed: 0, ggmlType: type, bytes, values };
}

/** Random x, then a block of ties (amax 127, so d_x = 1: halves sit on ties), then an all-zero block. */
function testX(seed: number): Float32Array<ArrayBuffer> {
  const x = randomInput(1, COLS, seed);
  for (let i = 0; i < 32; i++) x[64 + i] = i === 0 ? 127 : (i % 7) - 3 + (i % 2 ? 0.5 : -0.5);
  x.fill(0, 128, 160);
  return x;
}

let ctx: GpuContext;
let kernels: MatmulKernels;
let weights: Map<string, GpuWeight>;
const made = new Map<string, MadeTensor>();

beforeAll(async () => {
  ctx = await openGpu();
  kernels = new MatmulKernels(ctx, { cpuShapes: false, intDot: true });
  const tensors = [
    identityQ8_0(),
    ...TYPES.map((type, i) => makeTensor({ name: `w.${type}`, type, rows: 37, cols: COLS, seed: 300 + i })),
  ];
  for (const t of tensors) made.set(t.name, t);
  weights = await uploadForSuite(ctx, tensors);
});

afterAll(() => ctx?.destroy());

async function matvec(name: string, x: Float32Array<ArrayBuffer>, through = kernels): Promise<Float32Array> {
  const w = weights.get(name)!;
  const xb = storageBuffer(ctx.device, x);
  const yb = storageBuffer(ctx.device, w.rows * 4);
  try {
    await run(ctx.device, [through.matmul(w, xb, yb, 1)]);
    return new Float32Array(await readBack(ctx.device, yb), 0, w.rows);
  } finally {
    xb.destroy();
    yb.destroy();
  }
}

describe('integer mat-vec (x as q8_1)', () => {
  it('is the GPU shape where the adapter has packed_4x8_integer_dot_product, and reported', () => {
    expect(ctx.info.wgslLanguageFeatures).toContain('packed_4x8_integer_dot_product');
    expect(kernels.intDot).toBe(true);
    expect(kernels.shapes().intDot).toBe(true);
    expect(kernels.source({ kernel: 'matvec', vec4: true, intDot: true }, 'Q4_K')).toMatch(/dot4I8Packed/);
    expect(new MatmulKernels(ctx, { cpuShapes: true, intDot: true }).intDot).toBe(false);
    expect(new MatmulKernels(ctx, { cpuShapes: false, intDot: false }).shapes().intDot).toBe(false);
  });

  it("quantizes x as llama.cpp's quantize_row_q8_1 does, ties away from zero", async () => {
    const x = testX(11);
    const got = await matvec('identity.Q8_0', x);
    const want = q8_1Values(x);
    // The tie block (d_x = 1) really holds ties that rounding halves to even would take the other way.
    const halfEven = (v: number) => (Math.abs(v % 1) === 0.5 ? 2 * Math.round(v / 2) : Math.round(v));
    expect(Array.from({ length: 31 }, (_, i) => 65 + i).some((i) => want[i] !== halfEven(x[i]!))).toBe(true);
    for (let i = 0; i < COLS; i++) expect(got[i], `x[${i}] = ${x[i]}`).toBe(want[i]);
  });

  it.each(TYPES)('%s: its codes dotted with the q8_1 x, against the f64 product', async (type) => {
    const t = made.get(`w.${type}`)!;
    const x = testX(12);
    const ref = referenceMatmul(t.values, t.rows, t.cols, q8_1Values(x), 1);
    const got = await matvec(`w.${type}`, x);
    expect(got.some((v) => v !== 0)).toBe(true);
    expect(maxRelativeError(got, ref.y, ref.scale)).toBeLessThanOrEqual(TOLERANCE);
    // x's blocks staged in workgroup memory (the default, where it fits) or read by every thread: the same bits.
    expect(kernels.xStage).toBeGreaterThan(0);
    const direct = await matvec(
      `w.${type}`,
      x,
      new MatmulKernels(ctx, { cpuShapes: false, intDot: true, xStage: false }),
    );
    expect(firstBitDifference(got, direct)).toBe(-1);
  });
});
