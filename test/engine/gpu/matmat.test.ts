/**
 * The prefill kernels (on a CPU adapter shaders/matmat.wgsl: rows per thread, each decoded unit used
 * for a tile of tokens; on a GPU shaders/matmat-tiled.wgsl: 64 rows × 32 tokens per workgroup,
 * staged in workgroup memory, forced here with cpuShapes: false) for every GPU weight type, at the tile edges: rows not a multiple of the workgroup's
 * rows, token counts not a multiple of the token tile, against the f64 product of the bit-exact
 * decoded weights (the reference of matmul.test.ts, same tolerance). Runs on SwiftShader (its 4 × 4
 * shape); with VK_ICD_FILENAMES set to lavapipe's, the 8 × 16 shape and the f16 decoders.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import {
  GPU_TYPE_NAMES,
  uploadForSuite,
  makeTensor,
  maxRelativeError,
  readBack,
  randomInput,
  referenceMatmul,
  run,
  storageBuffer,
  type MadeTensor,
} from './fixtures';

const TOLERANCE = 1e-5;
// Both shapes' edges: 256 rows (32 threads × 8) or 16 (4 × 4) per workgroup, tiles of 16 or 4 tokens.
const ROWS = 300; // one full workgroup of 256 rows and part of a second (18 of 16 rows and part of a 19th)
const COLS = 256; // one k-quant super-block
const TOKENS = [2, 17, 64]; // a partial tile, one past full ones, whole tiles

let ctx: GpuContext;
let weights: Map<string, GpuWeight>;
const made = new Map<string, MadeTensor>();
/** A float type whose rows end inside a 32-value unit. */
const ODD = { name: 'odd.F16', type: 'F16', rows: 37, cols: 99, seed: 82 };

beforeAll(async () => {
  ctx = await openGpu();
  const tensors = [
    ...GPU_TYPE_NAMES.map((type, i) => makeTensor({ name: `w.${type}`, type, rows: ROWS, cols: COLS, seed: 2000 + i })),
    makeTensor(ODD),
  ];
  for (const t of tensors) made.set(t.name, t);
  weights = await uploadForSuite(ctx, tensors);
});

afterAll(() => {
  ctx?.destroy();
});

/**
 * Worst relative error of y (+)= W·x for n random tokens; xOffset not a multiple of 4 makes the
 * kernel read x one f32 at a time. With accumulate, y starts as random values added to.
 */
async function check(
  name: string,
  n: number,
  seed: number,
  options: { xOffset?: number; accumulate?: boolean; cpuShapes?: boolean } = {},
): Promise<number> {
  const t = made.get(name)!;
  const xOffset = options.xOffset ?? 0;
  const x = randomInput(n, t.cols, seed);
  const padded = new Float32Array(xOffset + x.length);
  padded.set(x, xOffset);
  const base = options.accumulate ? randomInput(n, t.rows, seed + 1) : new Float32Array(n * t.rows);
  const xb = storageBuffer(ctx.device, padded);
  const yb = storageBuffer(ctx.device, base);
  try {
    const kernels = new MatmulKernels(ctx, { cpuShapes: options.cpuShapes });
    await run(ctx.device, [kernels.matmul(weights.get(name)!, xb, yb, n, options)]);
    const y = new Float32Array(await readBack(ctx.device, yb), 0, n * t.rows);
    const ref = referenceMatmul(t.values, t.rows, t.cols, x, n);
    const want = ref.y.map((v, i) => v + base[i]!);
    const scale = ref.scale.map((v, i) => v + Math.abs(base[i]!));
    return maxRelativeError(y, want, scale);
  } finally {
    xb.destroy();
    yb.destroy();
  }
}

describe('prefill kernel', () => {
  it('is its own kernel: rows per thread, no shared memory and no barrier', () => {
    const source = new MatmulKernels(ctx).source({ kernel: 'tiled', vec4: true }, 'Q4_K');
    expect(source).toMatch(
      ctx.hasF16
        ? /decode_unit\(min\(row0 \+ r \* WG, P\.rows - 1u\), u, &w\[r\]\)/
        : /decode_unit\(min\(row0 \+ 3u \* WG, last_row\), u, &w\)/,
    );
    expect(source).not.toMatch(/workgroupBarrier|var<workgroup>/);
  });

  it('without shader-f16 (SwiftShader): 4 rows × 4 tokens per thread in named values, so the tests above cover its tile edges', () => {
    const kernels = new MatmulKernels(ctx, { cpuShapes: true });
    if (ctx.hasF16) {
      expect(kernels.tiled).toEqual({ wg: 32, rows: 256, tokens: 16, threadRows: 8 });
      return;
    }
    expect(kernels.tiled).toEqual({ wg: 4, rows: 16, tokens: 4, threadRows: 4 });
    const source = kernels.source({ kernel: 'tiled', vec4: true }, 'Q4_K');
    expect(source).toMatch(/const TT: u32 = 4u;[\s\S]*const RT: u32 = 4u;/);
    // The kernel indexes no array by its row or token: the sums and x units are named values.
    const kernel = source.slice(source.lastIndexOf('@compute'));
    expect(kernel).toMatch(/a3 \+= tile_dots\(w, x0, x1, x2, x3\)/);
    expect(kernel).not.toMatch(/\[(r|t|r \* TT \+ t)\]/);
  });

  it.each(GPU_TYPE_NAMES)('%s: 2, 17 and 64 tokens over 300 rows match the f32 product', async (type) => {
    for (const [i, n] of TOKENS.entries()) {
      expect(await check(`w.${type}`, n, 10 + i), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it('rows that end inside a unit, x read one f32 at a time', async () => {
    for (const n of TOKENS)
      expect(await check(ODD.name, n, 20, { xOffset: 1 }), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
  });

  it('accumulate: y += W·x', async () => {
    for (const n of TOKENS)
      expect(await check('w.Q6_K', n, 30, { accumulate: true }), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
  });
});

describe('prefill kernel on a GPU (matmat-tiled.wgsl)', () => {
  const gpu = { cpuShapes: false };
  // 300 rows: four full tiles of 64 and part of a fifth; tokens: inside one tile of 32, one past two, two whole.
  const GPU_TOKENS = [3, 33, 64];

  it('stages decoded units and x in workgroup memory within the default 16 KiB, 64 threads', () => {
    const kernels = new MatmulKernels(ctx, gpu);
    expect(kernels.prefill).toBe('wgtiled');
    const source = kernels.source({ kernel: 'wgtiled', vec4: true }, 'Q4_K');
    expect(source).toMatch(/var<workgroup> w_tile: array<vec4<f32>, BM \* STRIDE>;/);
    expect(source).toMatch(/const BM: u32 = 64u;[\s\S]*const BN: u32 = 32u;/);
    // One decode per row and unit per workgroup, not per token.
    expect(source.slice(source.lastIndexOf('@compute')).match(/decode_unit\(/g)).toHaveLength(1);
  });

  it.each(GPU_TYPE_NAMES)('%s: 3, 33 and 64 tokens over 300 rows match the f32 product', async (type) => {
    for (const [i, n] of GPU_TOKENS.entries()) {
      expect(await check(`w.${type}`, n, 40 + i, gpu), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it('rows that end inside a unit, x read one f32 at a time', async () => {
    for (const n of GPU_TOKENS)
      expect(await check(ODD.name, n, 50, { ...gpu, xOffset: 1 }), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
  });

  it('accumulate: y += W·x', async () => {
    for (const n of GPU_TOKENS)
      expect(await check('w.Q4_K', n, 60, { ...gpu, accumulate: true }), `${n} tokens`).toBeLessThanOrEqual(TOLERANCE);
  });
});
