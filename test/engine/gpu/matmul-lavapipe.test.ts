/**
 * The decode mat-vec on Mesa lavapipe, where its steps loop over a thread's rows at run time
 * (MatmulKernels.rowLoop) instead of unrolling them as on SwiftShader, the other GPU tests'
 * adapter: each decode step of its own (the K-quants', quant/unit-step.wgsl's, the plain floats')
 * against the f64 product of the decoded weights, as matmul.test.ts checks them on SwiftShader.
 * 37 rows: the last thread has fewer rows than the 8 it may own.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../../src-main/engine/gpu/software-driver';
import type { GpuContext } from '../../../src-main/engine/gpu/device';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import type { OpenGguf } from '../../../src-main/node/gguf-io';
import {
  makeTensor,
  maxRelativeError,
  randomInput,
  readBack,
  referenceMatmul,
  run,
  storageBuffer,
  tempDirForSuite,
  writeTensors,
  type MadeTensor,
} from './fixtures';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { openGpu } = await import('../../../src-main/engine/gpu/device');
const { MatmulKernels } = await import('../../../src-main/engine/gpu/matmul');
const { uploadWeights } = await import('../../../src-main/engine/gpu/weights');

const TOLERANCE = 1e-5; // matmul.test.ts's
const TYPES = ['Q4_K', 'Q5_K', 'Q6_K', 'Q4_0', 'F32', 'BF16'];

let ctx: GpuContext;
let file: OpenGguf;
let weights: Map<string, GpuWeight>;
const made = new Map<string, MadeTensor>();

beforeAll(async () => {
  if (!existsSync(LAVAPIPE_ICD)) return;
  ctx = await openGpu();
  for (const [i, type] of TYPES.entries())
    made.set(type, makeTensor({ name: type, type, rows: 37, cols: 512, seed: 2000 + i }));
  file = await writeTensors(tempDirForSuite(), [...made.values()]);
  weights = await uploadWeights(ctx, file.gguf, TYPES);
});

afterAll(() => {
  for (const w of weights?.values() ?? []) w.destroy();
  file?.file.close();
  ctx?.destroy();
});

describe('Mesa lavapipe, the decode row loop', () => {
  it('is installed, and its decode steps keep the rows a loop', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    expect(ctx.info.name).toMatch(/llvmpipe/);
    const kernels = new MatmulKernels(ctx);
    expect(kernels.rowLoop).toBe(true);
    expect(kernels.source({ kernel: 'matvec', vec4: true }, 'Q4_K')).toMatch(/for \(var r = 0u; r < rows; r\+\+\)/);
    // A GPU's shapes share 4 rows among a workgroup's threads: unrolled there.
    expect(new MatmulKernels(ctx, { cpuShapes: false }).rowLoop).toBe(false);
  });

  it.each(TYPES)(
    '%s: the mat-vec matches the f64 product of the decoded weights',
    async (type) => {
      const t = made.get(type)!;
      const x = randomInput(1, t.cols, 7);
      const xb = storageBuffer(ctx.device, x);
      const yb = storageBuffer(ctx.device, t.rows * 4);
      try {
        await run(ctx.device, [new MatmulKernels(ctx).matmul(weights.get(type)!, xb, yb, 1)]);
        const y = new Float32Array(await readBack(ctx.device, yb), 0, t.rows);
        const ref = referenceMatmul(t.values, t.rows, t.cols, x, 1);
        expect(maxRelativeError(y, ref.y, ref.scale)).toBeLessThanOrEqual(TOLERANCE);
      } finally {
        xb.destroy();
        yb.destroy();
      }
    },
    60_000,
  );
});
