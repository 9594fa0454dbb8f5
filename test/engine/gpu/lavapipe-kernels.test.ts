/**
 * The weight kernels where Mesa lavapipe (a CPU adapter with shader-f16) runs code of its own,
 * against the f64 product of the bit-exact decoded weights (matmat.test.ts's and matmul.test.ts's
 * reference and tolerance, checked there on SwiftShader):
 *   - a batched decode step's matmuls: with several slots (KernelOptions.batchedDecode), 2–4
 *     tokens go through the decode mat-vec's shape with a tile of 4 tokens (each row read once for
 *     all of them), and each token gets the bits the one-token mat-vec gives it;
 *   - prefill tiles (TILED), x broadcast over the subgroup (MatmulKernels.xLanes);
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
  wgslFunction,
  type MadeTensor,
} from './fixtures';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { openGpu } = await import('../../../src-main/engine/gpu/device');
const { MatmulKernels } = await import('../../../src-main/engine/gpu/matmul');

const TOLERANCE = 1e-5;
/** Each decode step of its own: the K-quants', Q8_0's and quant/unit-matvec.wgsl's units, the plain floats'. */
const TYPES = ['Q4_K', 'Q5_K', 'Q6_K', 'Q8_0', 'Q4_0', 'F32', 'BF16'];
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

/** y = W·x through `kernels` for the tokens in x (each `cols` long), W the type's tensor. */
async function matmulOf(kernels: MatmulKernelsType, type: string, x: Float32Array<ArrayBuffer>): Promise<Float32Array> {
  const t = made.get(`w.${type}`)!;
  const n = x.length / t.cols;
  const xb = storageBuffer(ctx.device, x);
  const yb = storageBuffer(ctx.device, new Float32Array(n * t.rows));
  try {
    await run(ctx.device, [kernels.matmul(weights.get(t.name)!, xb, yb, n)]);
    return new Float32Array(await readBack(ctx.device, yb), 0, n * t.rows);
  } finally {
    xb.destroy();
    yb.destroy();
  }
}

/** Worst relative error of y = W·x for n random tokens (seed `seed`) through `kernels`; and x and y. */
async function productError(kernels: MatmulKernelsType, type: string, n: number, seed: number) {
  const t = made.get(`w.${type}`)!;
  const x = randomInput(n, t.cols, seed);
  const y = await matmulOf(kernels, type, x);
  const ref = referenceMatmul(t.values, t.rows, t.cols, x, n);
  return { x, y, error: maxRelativeError(y, ref.y, ref.scale) };
}

describe('batched decode steps on lavapipe', () => {
  it('take 2–4 tokens through the mat-vec with several slots only, 4 tokens a tile', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    expect(ctx.hasF16).toBe(true);
    const batched = new MatmulKernels(ctx, { batchedDecode: true });
    expect(batched.tokenSteps()).toEqual([1, 2, 5]);
    const source = batched.source({ kernel: 'batchvec', vec4: true }, 'Q4_K');
    expect(source).toMatch(/const TT: u32 = 4u;/);
    expect(source).toMatch(/fn matvec_step/);
    expect(new MatmulKernels(ctx).tokenSteps()).toEqual([1, 2]);
  });

  it.each(['Q4_K', 'Q5_K', 'Q6_K'])(
    "%s steps over a super-block two units at a time: each token's x before the row loop, each row's scales and codes once for the tokens",
    (type) => {
      const step = wgslFunction(
        new MatmulKernels(ctx, { batchedDecode: true }).source({ kernel: 'batchvec', vec4: true }, type),
        'matvec_step',
      );
      expect(step).toMatch(/for \(var j = 0u; j < 4u; j\+\+\)/);
      const [beforeRows, rowBody] = step.split(/for \(var r = 0u; r < rows; r\+\+\)/);
      for (const t of [0, 1, 2, 3])
        expect(beforeRows).toMatch(new RegExp(`let x${t} = x_pair\\(token_x\\(xb, ${t}u\\)`));
      expect(rowBody).not.toMatch(/x_unit\(|x_pair\(|x_halves\(/);
      // d (and dmin) with the pair's scales once per row and pair, the four tokens' sums after.
      expect(rowBody!.match(type === 'Q6_K' ? /q6_pair\(/g : /kpair\(/g)).toHaveLength(1);
      expect(rowBody!.match(/\(\*acc\)\[r \* TT \+ \du\] \+=/g)).toHaveLength(4);
    },
  );

  it.each(TYPES)(
    "%s: 2, 3 and 4 tokens over 300 rows give each token the one-token mat-vec's bits",
    async (type) => {
      const batched = new MatmulKernels(ctx, { batchedDecode: true });
      const t = made.get(`w.${type}`)!;
      for (const n of [2, 3, 4]) {
        const { x, y, error } = await productError(batched, type, n, 30 + n);
        expect(error, `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
        for (let i = 0; i < n; i++) {
          const one = await matmulOf(batched, type, x.slice(i * t.cols, (i + 1) * t.cols));
          expect(y.subarray(i * t.rows, (i + 1) * t.rows), `token ${i} of ${n}`).toEqual(one);
        }
      }
    },
    300_000,
  );

  it.each(['Q4_K', 'Q6_K', 'F32'])(
    "%s: with the GLU made as x is loaded (ffn_down's prologue), each of 3 tokens gets the one-token mat-vec's bits",
    async (type) => {
      const batched = new MatmulKernels(ctx, { batchedDecode: true });
      const t = made.get(`w.${type}`)!;
      const n = 3;
      const rows = randomInput(n, 2 * t.cols, 90); // per token a gate|up row: gate, then up
      const run1 = async (x: Float32Array<ArrayBuffer>, tokens: number) => {
        const xb = storageBuffer(ctx.device, x);
        const yb = storageBuffer(ctx.device, new Float32Array(tokens * t.rows));
        try {
          const options = { xStride: 2 * t.cols, prologue: { glu: 'silu' as const } };
          await run(ctx.device, [batched.matmul(weights.get(t.name)!, xb, yb, tokens, options)]);
          return new Float32Array(await readBack(ctx.device, yb), 0, tokens * t.rows);
        } finally {
          xb.destroy();
          yb.destroy();
        }
      };
      const y = await run1(rows, n);
      for (let i = 0; i < n; i++) {
        const one = await run1(rows.slice(2 * i * t.cols, 2 * (i + 1) * t.cols), 1);
        expect(y.subarray(i * t.rows, (i + 1) * t.rows), `token ${i}`).toEqual(one);
      }
      expect(y.some((v) => v !== 0)).toBe(true);
    },
    120_000,
  );
});

describe('prefill tiles on lavapipe', () => {
  it.each(['Q4_K', 'Q6_K', 'Q8_0'])(
    '%s: 17 tokens (TILED, x broadcast over the subgroup) match the f32 product',
    async (type) => {
      const kernels = new MatmulKernels(ctx);
      expect(kernels.xLanes).toBe(true);
      expect((await productError(kernels, type, 17, 41)).error).toBeLessThanOrEqual(TOLERANCE);
    },
    120_000,
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
      expect((await productError(new MatmulKernels(ctx), type, 1, 7)).error).toBeLessThanOrEqual(TOLERANCE);
    },
    60_000,
  );
});
