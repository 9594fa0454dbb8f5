/**
 * The mat-vec's x prologues (matmul.ts XPrologue, weight-io.wgsl): RMSNorm into the projections'
 * x load, and the GLU into ffn_down's. On random x, the fused mat-vec gives bit for bit what the
 * ops apart give (rms_norm or glu, then the plain mat-vec): it makes the same f32 x values (the
 * norm's sum of squares in rms_norm's order) and then runs the same product. Both decode shapes:
 * the CPU adapters' (threads own rows) and the GPUs' (threads share rows and reduce).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import { OpKernels, Step } from '../../../src-main/engine/gpu/ops';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import {
  makeTensor,
  randomInput,
  readBack,
  run,
  storageBuffer,
  uploadForSuite,
  type TensorSpec,
  firstBitDifference,
} from './fixtures';

/**
 * One type per way the mat-vec loads x, where a prologue could go wrong: Q4_K reads x a
 * super-block at a time (x_block; Q5_K and Q6_K too), Q8_0 a unit at a time (as the other block
 * types), and F16's 99 columns end inside a unit and are read one f32 at a time. Every load goes
 * through load_x4 with the column it reads, so the type's own decoding is no concern of the prologue.
 */
const SHAPES: TensorSpec[] = [
  { name: 'w.Q4_K', type: 'Q4_K', rows: 70, cols: 512, seed: 81 },
  { name: 'w.Q8_0', type: 'Q8_0', rows: 70, cols: 384, seed: 83 },
  { name: 'w.F16', type: 'F16', rows: 9, cols: 99, seed: 85 },
];
/**
 * GELU against SiLU is glu_act alone, the same in every load: Q4_K's GELU kernels (x_block, 256
 * GELUs a step written out), this file's slowest to compile, would add nothing the others check.
 */
const GELU_SHAPES = ['w.Q8_0', 'w.F16'];
const EPS = 1e-5;

let ctx: GpuContext;
let weights: Map<string, GpuWeight>;
let ops: OpKernels;
let step: Step;

beforeAll(async () => {
  ctx = await openGpu();
  const tensors = SHAPES.map(makeTensor);
  weights = await uploadForSuite(ctx, tensors);
  ops = new OpKernels(ctx.device);
  step = new Step(ctx.device);
  step.set(0, 1);
});

afterAll(() => {
  ops?.destroy();
  step?.destroy();
  ctx?.destroy();
});

async function readF32(b: GPUBuffer, n: number): Promise<Float32Array> {
  return new Float32Array(await readBack(ctx.device, b), 0, n);
}

const KERNELS = { 'CPU-adapter shape': { cpuShapes: true }, 'GPU shape': { cpuShapes: false } } as const;

describe.each(Object.entries(KERNELS))('mat-vec x prologue (%s)', (_, options) => {
  let kernels: MatmulKernels;
  beforeAll(() => {
    kernels = new MatmulKernels(ctx, options);
  });

  it.each(SHAPES.map((s) => s.name))(
    '%s: W · (rmsnorm(x) · w) fused equals rms_norm then the mat-vec',
    async (name) => {
      const w = weights.get(name)!;
      const x = randomInput(1, w.cols, 7);
      for (let i = 0; i < x.length; i += 17) x[i]! *= 40; // a few large activations, as residual streams have
      const normWeight = storageBuffer(ctx.device, randomInput(1, w.cols, 8));
      const xb = storageBuffer(ctx.device, x);
      const normed = storageBuffer(ctx.device, w.cols * 4);
      const apart = storageBuffer(ctx.device, w.rows * 4);
      const fused = storageBuffer(ctx.device, w.rows * 4);
      await run(ctx.device, [
        ops.rmsNorm({ x: xb, w: normWeight, y: normed, n: w.cols, eps: EPS, step }),
        kernels.matmul(w, normed, apart, 1),
        kernels.matmul(w, xb, fused, 1, { prologue: { norm: normWeight, eps: EPS } }),
      ]);
      const want = await readF32(apart, w.rows);
      const got = await readF32(fused, w.rows);
      expect(want.some((v) => v !== 0)).toBe(true);
      expect(
        firstBitDifference(got, want),
        `${name}: row ${firstBitDifference(got, want)} ${got[firstBitDifference(got, want)]} vs ${want[firstBitDifference(got, want)]}`,
      ).toBe(-1);
    },
  );

  for (const [act, names] of [
    ['silu', SHAPES.map((s) => s.name)],
    ['gelu', GELU_SHAPES],
  ] as const) {
    it.each(names)(`%s: W · ${act}(gate)·up fused from a gate|up row equals the GLU then the mat-vec`, async (name) => {
      const w = weights.get(name)!;
      const rows = randomInput(1, 2 * w.cols, 9);
      for (let i = 0; i < rows.length; i++) rows[i]! *= 4; // past GELU's ±10 clamps now and then
      const gateUp = storageBuffer(ctx.device, rows);
      const glued = storageBuffer(ctx.device, rows);
      const apart = storageBuffer(ctx.device, w.rows * 4);
      const fused = storageBuffer(ctx.device, w.rows * 4);
      await run(ctx.device, [
        ops.glu({ gate: glued, width: w.cols, step, act }),
        kernels.matmul(w, glued, apart, 1, { xStride: 2 * w.cols }),
        kernels.matmul(w, gateUp, fused, 1, { xStride: 2 * w.cols, prologue: { glu: act } }),
      ]);
      const want = await readF32(apart, w.rows);
      const got = await readF32(fused, w.rows);
      expect(want.some((v) => v !== 0)).toBe(true);
      expect(firstBitDifference(got, want), `${name} ${act}`).toBe(-1);
    });
  }

  it('a prologue is for one token only', () => {
    const w = weights.get('w.Q8_0')!;
    const b = storageBuffer(ctx.device, 16);
    expect(() => kernels.matmul(w, b, b, 2, { prologue: { glu: 'silu' } })).toThrow(/one token/);
  });
});
