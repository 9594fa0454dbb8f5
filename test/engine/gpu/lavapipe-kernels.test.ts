/**
 * The weight kernels where Mesa lavapipe (a CPU adapter with shader-f16) runs code of its own,
 * against the f64 product of the bit-exact decoded weights (matmat.test.ts's and matmul.test.ts's
 * reference and tolerance, checked there on SwiftShader):
 *   - a batched decode step's matmuls: with several slots (KernelOptions.fewTokenTiles), 2–4
 *     tokens go through FEW_TILED, matmat.wgsl with a tile of 4 tokens rather than TILED's 16;
 *   - the decode mat-vec, whose steps loop over a thread's rows (MatmulKernels.rowLoop) where
 *     SwiftShader unrolls them: each decode step of its own (the K-quants', quant/unit-step.wgsl's,
 *     the plain floats').
 * 300 rows: one workgroup of 256 rows and part of a second; the last mat-vec thread owns 4 of its 8.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../../src-main/engine/gpu/software-driver';
import type { GpuContext } from '../../../src-main/engine/gpu/device';
import type { MatmulKernels as MatmulKernelsType } from '../../../src-main/engine/gpu/matmul';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import {
  makeTensor,
  maxRelativeError,
  randomInput,
  readBack,
  referenceMatmul,
  run,
  storageBuffer,
  uploadForSuite,
  type MadeTensor,
} from './fixtures';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { openGpu } = await import('../../../src-main/engine/gpu/device');
const { MatmulKernels } = await import('../../../src-main/engine/gpu/matmul');

const TOLERANCE = 1e-5;
/** The few-token tiles' types; the row loop's add the other decode steps. */
const TILED_TYPES = ['Q8_0', 'Q4_K'];
const TYPES = [...TILED_TYPES, 'Q5_K', 'Q6_K', 'Q4_0', 'F32', 'BF16'];
const ROWS = 300; // one workgroup of 256 rows and part of a second
const COLS = 256;

let ctx: GpuContext;
let weights: Map<string, GpuWeight>;
const made = new Map<string, MadeTensor>();

beforeAll(async () => {
  ctx = await openGpu();
  const tensors = TYPES.map((type, i) =>
    makeTensor({ name: `w.${type}`, type, rows: ROWS, cols: COLS, seed: 700 + i }),
  );
  for (const t of tensors) made.set(t.name, t);
  weights = await uploadForSuite(ctx, tensors);
}, 300_000);

afterAll(() => {
  ctx?.destroy();
});

/** Worst relative error of y = W·x for n random tokens (seed `seed`) through `kernels`, W the type's tensor. */
async function productError(kernels: MatmulKernelsType, type: string, n: number, seed: number) {
  const t = made.get(`w.${type}`)!;
  const x = randomInput(n, t.cols, seed);
  const xb = storageBuffer(ctx.device, x);
  const yb = storageBuffer(ctx.device, new Float32Array(n * t.rows));
  try {
    await run(ctx.device, [kernels.matmul(weights.get(t.name)!, xb, yb, n)]);
    const y = new Float32Array(await readBack(ctx.device, yb), 0, n * t.rows);
    const ref = referenceMatmul(t.values, t.rows, t.cols, x, n);
    return maxRelativeError(y, ref.y, ref.scale);
  } finally {
    xb.destroy();
    yb.destroy();
  }
}

describe('few-token tiles on lavapipe', () => {
  it('are chosen for 2–4 tokens with several slots only, and have a tile of 4 tokens', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    expect(ctx.hasF16).toBe(true);
    const few = new MatmulKernels(ctx, { fewTokenTiles: true });
    expect(few.tokenSteps()).toEqual([1, 2, 5]);
    expect(few.source({ kernel: 'fewtiled', vec4: true }, 'Q4_K')).toMatch(/const TT: u32 = 4u;/);
    expect(new MatmulKernels(ctx).tokenSteps()).toEqual([1, 2]);
  });

  it.each(TILED_TYPES)(
    '%s: 2, 3 and 4 tokens over 300 rows match the f32 product',
    async (type) => {
      const kernels = new MatmulKernels(ctx, { fewTokenTiles: true });
      for (const n of [2, 3, 4]) {
        expect(await productError(kernels, type, n, 30 + n), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
      }
    },
    300_000,
  );
});

describe('the decode row loop on lavapipe', () => {
  it('is on for the CPU shapes, and keeps the rows a loop', () => {
    const kernels = new MatmulKernels(ctx);
    expect(kernels.rowLoop).toBe(true);
    expect(kernels.source({ kernel: 'matvec', vec4: true }, 'Q4_K')).toMatch(/for \(var r = 0u; r < rows; r\+\+\)/);
    // A GPU's shapes share 4 rows among a workgroup's threads: unrolled there.
    expect(new MatmulKernels(ctx, { cpuShapes: false }).rowLoop).toBe(false);
  });

  it.each(TYPES)(
    '%s: the mat-vec over 300 rows matches the f32 product',
    async (type) => {
      expect(await productError(new MatmulKernels(ctx), type, 1, 7)).toBeLessThanOrEqual(TOLERANCE);
    },
    60_000,
  );
});
