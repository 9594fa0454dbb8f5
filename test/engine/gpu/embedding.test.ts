/**
 * Embedding row lookup on the GPU for every GPU weight type: each looked-up row is bitwise equal
 * to the row decoded on the CPU by the bit-exact decoders (decoderFor).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import { mulberry32 } from '../../support/random';
import { GPU_TYPE_NAMES, makeTensor, readBack, run, storageBuffer, uploadForSuite, type MadeTensor } from './fixtures';

const ROWS = 50;
const COLS = 256;

let ctx: GpuContext;
let weights: Map<string, GpuWeight>;
let kernels: MatmulKernels;
const made = new Map<string, MadeTensor>();

beforeAll(async () => {
  ctx = await openGpu();
  kernels = new MatmulKernels(ctx);
  const tensors = [
    ...GPU_TYPE_NAMES.map((type, i) =>
      makeTensor({ name: `emb.${type}`, type, rows: ROWS, cols: COLS, seed: 2000 + i }),
    ),
    makeTensor({ name: 'odd.F16', type: 'F16', rows: 7, cols: 33, seed: 2100 }),
    makeTensor({ name: 'odd.F32', type: 'F32', rows: 7, cols: 70, seed: 2101 }),
  ];
  for (const t of tensors) made.set(t.name, t);
  weights = await uploadForSuite(ctx, tensors);
});

afterAll(() => {
  ctx?.destroy();
});

/** Looks up `ids` and compares each output row bit for bit with the decoded row. */
async function lookUp(name: string, ids: number[]): Promise<void> {
  const t = made.get(name)!;
  const w = weights.get(name)!;
  const idsBuffer = storageBuffer(ctx.device, new Uint32Array(ids));
  const out = storageBuffer(ctx.device, new Float32Array(ids.length * t.cols).fill(Number.NaN));
  try {
    await run(ctx.device, [kernels.embedding(w, idsBuffer, out, ids.length)]);
    const got = new Uint32Array(await readBack(ctx.device, out), 0, ids.length * t.cols);
    const values = new Uint32Array(t.values.buffer);
    for (const [i, id] of ids.entries()) {
      const want = id < t.rows ? values.subarray(id * t.cols, (id + 1) * t.cols) : new Uint32Array(t.cols);
      const row = got.subarray(i * t.cols, (i + 1) * t.cols);
      expect(row, `${name}: row ${id} (token ${i})`).toEqual(want);
    }
  } finally {
    idsBuffer.destroy();
    out.destroy();
  }
}

function someIds(rows: number, seed: number): number[] {
  const rng = mulberry32(seed);
  return [0, rows - 1, ...Array.from({ length: 6 }, () => rng.int(rows)), 3, 3];
}

describe.each(GPU_TYPE_NAMES)('%s', (type) => {
  it('rows come out bitwise equal to the decoded rows', async () => {
    await lookUp(`emb.${type}`, someIds(ROWS, 7));
  });
});

describe('edge cases', () => {
  it('rows that end inside a 32-value unit, and start mid-word (F16, odd row length)', async () => {
    await lookUp('odd.F16', [0, 1, 2, 6, 5]);
    await lookUp('odd.F32', [6, 0, 3]);
  });

  it('an id past the table gives a row of zeros', async () => {
    await lookUp('emb.Q4_K', [1, ROWS, 2, 0xffffffff]);
  });

  it('ids and output offsets', async () => {
    const { device } = ctx;
    const t = made.get('emb.Q6_K')!;
    const idsBuffer = storageBuffer(device, new Uint32Array([99, 99, 4, 9]));
    const outOffset = 5;
    const outStride = COLS + 3;
    const out = storageBuffer(device, new Float32Array(outOffset + 2 * outStride).fill(-1));
    const dispatch = kernels.embedding(weights.get('emb.Q6_K')!, idsBuffer, out, 2, {
      idsOffset: 2,
      outOffset,
      outStride,
    });
    await run(device, [dispatch]);
    const got = new Float32Array(await readBack(device, out));
    expect(got.subarray(0, outOffset)).toEqual(new Float32Array(outOffset).fill(-1));
    expect(got.subarray(outOffset, outOffset + COLS)).toEqual(t.values.subarray(4 * COLS, 5 * COLS));
    expect(got.subarray(outOffset + COLS, outOffset + outStride)).toEqual(new Float32Array(3).fill(-1));
    expect(got.subarray(outOffset + outStride, outOffset + outStride + COLS)).toEqual(
      t.values.subarray(9 * COLS, 10 * COLS),
    );
    dispatch.setTokens(1);
    device.queue.writeBuffer(out, 0, new Float32Array(outOffset + 2 * outStride).fill(-1));
    await run(device, [dispatch]);
    const one = new Float32Array(await readBack(device, out));
    expect(one.subarray(outOffset + outStride)).toEqual(
      new Float32Array(outOffset + 2 * outStride - outOffset - outStride).fill(-1),
    );
    idsBuffer.destroy();
    out.destroy();
  });
});
