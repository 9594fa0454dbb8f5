/**
 * Gate|up uploaded in row pairs (weights.ts `gluPairs`, the GPU kernel shapes' layout): every
 * product of the paired weight writes its rows in gate|up order, bit for bit those of the weight
 * uploaded in order (the decode mat-vec, the mat-mat kernels, parts split on pair boundaries), and
 * the decode mat-vec's GLU epilogue (matmul.ts `glu`) writes act(gate)·up bit for bit as
 * OpKernels.glu makes it from those rows, with or without the folded RMSNorm before it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels, type KernelOptions } from '../../../src-main/engine/gpu/matmul';
import { OpKernels, Step } from '../../../src-main/engine/gpu/ops';
import { uploadWeights, type GpuWeight } from '../../../src-main/engine/gpu/weights';
import type { OpenGguf } from '../../../src-main/node/gguf-io';
import {
  makeTensor,
  randomInput,
  readBack,
  run,
  storageBuffer,
  tempDirForSuite,
  writeTensors,
  type TensorSpec,
  firstBitDifference,
} from './fixtures';

/**
 * Gate and up of each type: 69 rows each, so the last 4-row workgroup holds one pair; Q4_K and Q6_K
 * read x a super-block at a time, Q8_0 a unit at a time, F16's 99 columns end inside a unit.
 */
const TYPES: { type: string; cols: number }[] = [
  { type: 'Q4_K', cols: 512 },
  { type: 'Q6_K', cols: 256 },
  { type: 'Q8_0', cols: 384 },
  { type: 'F16', cols: 99 },
];
const HALF_ROWS = 69;
const EPS = 1e-5;
/** Q8_0's parts when split: 20 rows of 12 blocks of 34 bytes, so a part starts on a pair. */
const SPLIT_LIMIT = 20 * 12 * 34 + 8;

let ctx: GpuContext;
let file: OpenGguf;
/** Each type's gate|up as stored (`ordered`), in pairs (`paired`), and in pairs split into parts (Q8_0's `split`). */
let ordered: Map<string, GpuWeight>;
let paired: Map<string, GpuWeight>;
let split: GpuWeight;
let ops: OpKernels;
let step: Step;

const name = (type: string) => `gu.${type}`;

beforeAll(async () => {
  ctx = await openGpu();
  const specs: TensorSpec[] = TYPES.flatMap(({ type, cols }, i) => [
    { name: `g.${type}`, type, rows: HALF_ROWS, cols, seed: 90 + 2 * i },
    { name: `u.${type}`, type, rows: HALF_ROWS, cols, seed: 91 + 2 * i },
  ]);
  file = await writeTensors(tempDirForSuite(), specs.map(makeTensor));
  const sources = TYPES.map(({ type }) => ({ name: name(type), tensors: [`g.${type}`, `u.${type}`], glu: true }));
  ordered = await uploadWeights(ctx, file.gguf, sources, { gluPairs: false });
  paired = await uploadWeights(ctx, file.gguf, sources, { gluPairs: true });
  split = (await uploadWeights(ctx, file.gguf, [sources[2]!], { gluPairs: true, maxBindingSize: SPLIT_LIMIT })).get(
    name('Q8_0'),
  )!;
  ops = new OpKernels(ctx.device);
  step = new Step(ctx.device);
  step.set(0, 1);
});

afterAll(() => {
  for (const w of [...(ordered?.values() ?? []), ...(paired?.values() ?? []), split]) w?.destroy();
  ops?.destroy();
  step?.destroy();
  file?.file.close();
  ctx?.destroy();
});

async function readF32(b: GPUBuffer, n: number): Promise<Float32Array> {
  return new Float32Array(await readBack(ctx.device, b), 0, n);
}

function expectSame(got: Float32Array, want: Float32Array, what: string): void {
  expect(want.some((v) => v !== 0)).toBe(true);
  const i = firstBitDifference(got, want);
  expect(i, `${what}: output ${i} ${got[i]} vs ${want[i]}`).toBe(-1);
}

it('the paired upload keeps the bytes and splits on pair boundaries', () => {
  const w = paired.get(name('Q8_0'))!;
  expect(w.gluPairs).toBe(true);
  expect(ordered.get(name('Q8_0'))!.gluPairs).toBeUndefined();
  expect(w.residentBytes).toBe(ordered.get(name('Q8_0'))!.residentBytes);
  expect(split.parts.length).toBeGreaterThan(2);
  for (const p of split.parts) expect(p.rowStart % 2).toBe(0);
});

const PREFILL = {
  'GPU shape, tiled prefill': { cpuShapes: false },
  'GPU shape, mat-mat prefill': { cpuShapes: false, prefill: 'matmat' },
} satisfies Record<string, KernelOptions>;

describe.each(Object.entries(PREFILL))('gate|up in row pairs (%s)', (_, options) => {
  let kernels: MatmulKernels;
  beforeAll(() => {
    kernels = new MatmulKernels(ctx, options);
  });

  it.each([1, 5, 40])('%i tokens: the rows come out in gate|up order, as the weight in order gives them', async (n) => {
    for (const w of [...TYPES.map(({ type }) => paired.get(name(type))!), split]) {
      const want = ordered.get(w.name)!;
      const x = storageBuffer(ctx.device, randomInput(n, w.cols, 11));
      const yWant = storageBuffer(ctx.device, n * w.rows * 4);
      const yGot = storageBuffer(ctx.device, n * w.rows * 4);
      await run(ctx.device, [kernels.matmul(want, x, yWant, n), kernels.matmul(w, x, yGot, n)]);
      const what = `${w.name}${w.parts.length > 1 ? ` in ${w.parts.length} parts` : ''}`;
      expectSame(await readF32(yGot, n * w.rows), await readF32(yWant, n * w.rows), what);
    }
  });
});

describe.each([true, false])('the GLU epilogue (GPU shape, subgroups %s)', (subgroups) => {
  let kernels: MatmulKernels;
  beforeAll(() => {
    kernels = new MatmulKernels(ctx, { cpuShapes: false, subgroups });
  });

  for (const act of ['silu', 'gelu'] as const) {
    it(`${act}(gate)·up from the pairs' mat-vec equals the rows' mat-vec then the GLU; with the norm folded too`, async () => {
      for (const w of [...TYPES.map(({ type }) => paired.get(name(type))!), split]) {
        const want = ordered.get(w.name)!;
        const x = randomInput(1, w.cols, 12);
        for (let i = 0; i < x.length; i++) x[i]! *= 6; // past GELU's ±10 clamps now and then
        const normWeight = storageBuffer(ctx.device, randomInput(1, w.cols, 13));
        const xb = storageBuffer(ctx.device, x);
        const normed = storageBuffer(ctx.device, w.cols * 4);
        const rows = storageBuffer(ctx.device, w.rows * 4);
        const normedRows = storageBuffer(ctx.device, w.rows * 4);
        const glued = storageBuffer(ctx.device, (w.rows / 2) * 4);
        const gluedNormed = storageBuffer(ctx.device, (w.rows / 2) * 4);
        await run(ctx.device, [
          kernels.matmul(want, xb, rows, 1),
          ops.glu({ gate: rows, width: w.rows / 2, step, act }),
          ops.rmsNorm({ x: xb, w: normWeight, y: normed, n: w.cols, eps: EPS, step }),
          kernels.matmul(want, normed, normedRows, 1),
          ops.glu({ gate: normedRows, width: w.rows / 2, step, act }),
          kernels.matmul(w, xb, glued, 1, { glu: act }),
          kernels.matmul(w, xb, gluedNormed, 1, { glu: act, prologue: { norm: normWeight, eps: EPS } }),
        ]);
        const half = w.rows / 2;
        expectSame(await readF32(glued, half), await readF32(rows, half), `${w.name} ${act}`);
        expectSame(await readF32(gluedNormed, half), await readF32(normedRows, half), `${w.name} ${act}, normed`);
      }
    });
  }

  it('is for one token of a paired weight on the GPU shapes', () => {
    const b = storageBuffer(ctx.device, 16);
    const w = paired.get(name('Q8_0'))!;
    expect(() => kernels.matmul(w, b, b, 2, { glu: 'silu' })).toThrow(/one token/);
    expect(() => kernels.matmul(ordered.get(w.name)!, b, b, 1, { glu: 'silu' })).toThrow(/row pairs/);
    expect(() => new MatmulKernels(ctx, { cpuShapes: true }).matmul(w, b, b, 1, { glu: 'silu' })).toThrow(/GPU shapes/);
  });
});
