/**
 * The GPU decode mat-vec's x through workgroup memory (weight-io.wgsl's stage_x): the workgroup's
 * threads load a chunk of x side by side, each then reads its own units from the stage. Each
 * thread takes the same units in the same order as when it loads x itself, so the two give the
 * same bits; rows here are wider than one stage (2 · 64 units), so the chunks' hand-over, a last
 * partial chunk and (F16) a row that ends inside a unit are all crossed. And the per-vendor shapes
 * (GPU_MATVEC_SHAPES, GUFO_MATVEC_SHAPE): each one's mat-vec against the f32 product. The float
 * steps (intDot off), and the integer ones, which stage x's q8_1 blocks, likewise.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { GPU_MATVEC_SHAPES, INT_DOT_TYPES, MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import {
  firstBitDifference,
  makeTensor,
  maxRelativeError,
  randomInput,
  readBack,
  referenceMatmul,
  run,
  storageBuffer,
  uploadForSuite,
  type MadeTensor,
  type TensorSpec,
} from './fixtures';

/**
 * One type per way a GPU step takes its units: Q4_K a pair (MV_UNITS 2), Q6_K units u and u + 2,
 * Q8_0 one (unit-step.wgsl), F16 one, its rows ending inside a unit (read as f32s, not vec4s).
 * 4,608 columns: a whole stage of 4,096 and half of another.
 */
const SHAPES: TensorSpec[] = [
  { name: 'w.Q4_K', type: 'Q4_K', rows: 13, cols: 4608, seed: 91 },
  { name: 'w.Q6_K', type: 'Q6_K', rows: 13, cols: 4608, seed: 92 },
  { name: 'w.Q8_0', type: 'Q8_0', rows: 13, cols: 4608, seed: 93 },
  { name: 'w.F16', type: 'F16', rows: 5, cols: 4201, seed: 94 },
];
const TOLERANCE = 1e-5;

let ctx: GpuContext;
let weights: Map<string, GpuWeight>;
const made = new Map<string, MadeTensor>();

beforeAll(async () => {
  ctx = await openGpu();
  const tensors = SHAPES.map(makeTensor);
  for (const t of tensors) made.set(t.name, t);
  weights = await uploadForSuite(ctx, tensors);
});

afterAll(() => ctx?.destroy());

/** y = W·x for one token through `kernels` (x at element `xOffset`: 1 reads it one f32 at a time). */
async function matvec(kernels: MatmulKernels, name: string, x: Float32Array, xOffset = 0): Promise<Float32Array> {
  const w = weights.get(name)!;
  const padded = new Float32Array(xOffset + x.length);
  padded.set(x, xOffset);
  const xb = storageBuffer(ctx.device, padded);
  const yb = storageBuffer(ctx.device, w.rows * 4);
  try {
    await run(ctx.device, [kernels.matmul(w, xb, yb, 1, { xOffset })]);
    return new Float32Array(await readBack(ctx.device, yb), 0, w.rows);
  } finally {
    xb.destroy();
    yb.destroy();
  }
}

describe('x staged in workgroup memory', () => {
  let staged: MatmulKernels;
  let direct: MatmulKernels;
  beforeAll(() => {
    staged = new MatmulKernels(ctx, { cpuShapes: false, intDot: false });
    direct = new MatmulKernels(ctx, { cpuShapes: false, xStage: false, intDot: false });
  });

  it('is the GPU shape where the workgroup storage holds it, and not the CPU shapes', () => {
    expect(staged.xStage).toBe(2 * staged.matvec.wg);
    expect(staged.shapes().matvec.xStaged).toBe(true);
    expect(staged.source({ kernel: 'matvec', vec4: true }, 'Q8_0')).toMatch(/var<workgroup> x_stage/);
    expect(direct.xStage).toBe(0);
    expect(direct.source({ kernel: 'matvec', vec4: true }, 'Q8_0')).not.toMatch(/x_stage/);
    const cpu = new MatmulKernels(ctx, { cpuShapes: true });
    expect(cpu.xStage).toBe(0);
    expect(cpu.shapes().matvec).toMatchObject({ xStaged: false, tunedFor: 'cpu' });
  });

  it.each(SHAPES.map((s) => s.name))('%s: the same bits as x read by every thread, over two stages', async (name) => {
    const t = made.get(name)!;
    const x = randomInput(1, t.cols, 5);
    for (const xOffset of name === 'w.F16' ? [1] : [0, 1]) {
      const want = await matvec(direct, name, x, xOffset);
      const got = await matvec(staged, name, x, xOffset);
      expect(want.some((v) => v !== 0)).toBe(true);
      expect(firstBitDifference(got, want), `${name}, x at ${xOffset}`).toBe(-1);
      const ref = referenceMatmul(t.values, t.rows, t.cols, x, 1);
      expect(maxRelativeError(got, ref.y, ref.scale)).toBeLessThanOrEqual(TOLERANCE);
    }
    // The integer steps stage x's q8_1 blocks instead: the same bits as read by every thread.
    if (INT_DOT_TYPES.has(t.type)) {
      const ints = (xStage: boolean) => new MatmulKernels(ctx, { cpuShapes: false, intDot: true, xStage });
      const want = await matvec(ints(false), name, x);
      expect(firstBitDifference(await matvec(ints(true), name, x), want), `${name}, integer`).toBe(-1);
    }
  });
});

describe('GPU mat-vec shapes by vendor', () => {
  const saved = process.env.GUFO_MATVEC_SHAPE;
  afterEach(() => {
    if (saved === undefined) delete process.env.GUFO_MATVEC_SHAPE;
    else process.env.GUFO_MATVEC_SHAPE = saved;
  });
  const as = (vendor: string): GpuContext => ({ ...ctx, info: { ...ctx.info, vendor } });

  it.each(Object.entries(GPU_MATVEC_SHAPES))('%s: its shape, reported, and the product', async (vendor, shape) => {
    const kernels = new MatmulKernels(as(vendor), { cpuShapes: false, intDot: false });
    expect(kernels.matvec).toMatchObject({ wg: shape.wg, rows: shape.rows, threadRows: 0 });
    expect(kernels.shapes().matvec).toMatchObject({ workgroup: shape.wg, rows: shape.rows, tunedFor: vendor });
    for (const name of ['w.Q4_K', 'w.Q8_0']) {
      const t = made.get(name)!;
      const x = randomInput(1, t.cols, 6);
      const ref = referenceMatmul(t.values, t.rows, t.cols, x, 1);
      expect(
        maxRelativeError(await matvec(kernels, name, x), ref.y, ref.scale),
        `${vendor} ${name}`,
      ).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it('an unknown vendor gets 64 threads × 4 rows', () => {
    expect(new MatmulKernels(as('someone'), { cpuShapes: false }).shapes().matvec).toMatchObject({
      workgroup: 64,
      rows: 4,
      tunedFor: 'default',
    });
  });

  it('GUFO_MATVEC_SHAPE tries another; too wide a stage for the workgroup storage reads x directly', async () => {
    process.env.GUFO_MATVEC_SHAPE = '128x8';
    const wide = new MatmulKernels(as('nvidia'), { cpuShapes: false, intDot: false });
    expect(wide.shapes().matvec).toMatchObject({ workgroup: 128, rows: 8, tunedFor: 'GUFO_MATVEC_SHAPE' });
    // 256 units of x are 32 KiB, all of this adapter's workgroup storage, before the sums' arrays.
    expect(ctx.device.limits.maxComputeWorkgroupStorageSize).toBeLessThan(32 * 1024 + 8 * 128 * 4);
    expect(wide.xStage).toBe(0);
    const t = made.get('w.Q8_0')!;
    const x = randomInput(1, t.cols, 7);
    const ref = referenceMatmul(t.values, t.rows, t.cols, x, 1);
    expect(maxRelativeError(await matvec(wide, 'w.Q8_0', x), ref.y, ref.scale)).toBeLessThanOrEqual(TOLERANCE);
    for (const bad of ['64', '48x4', '64x3', '4x4']) {
      process.env.GUFO_MATVEC_SHAPE = bad;
      expect(() => new MatmulKernels(ctx, { cpuShapes: false }), bad).toThrow(/GUFO_MATVEC_SHAPE/);
    }
  });
});
