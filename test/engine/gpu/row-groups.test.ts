/**
 * Row groups on a CPU adapter (row-groups.ts): the K-quants are uploaded with each group of
 * (decode lanes × rows per thread) rows interleaved at 16-byte quads, so that for every (block, row
 * of the thread, quad) the lanes read neighbouring quads; the rows after the last full group stay
 * as stored. Every reader (decode mat-vec, prefill mat-mat, embedding) gives the CPU reference's
 * results, also for row counts that are not a multiple of the group and for parts of a split tensor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import { REPACK, repackBlocks, uploadWeights, type GpuWeight } from '../../../src-main/engine/gpu/weights';
import type { OpenGguf } from '../../../src-main/node/gguf-io';
import {
  makeTensor,
  maxRelativeError,
  randomInput,
  readBack,
  referenceMatmul,
  rowGroupQuad,
  run,
  storageBuffer,
  tempDirForSuite,
  writeTensors,
  type MadeTensor,
} from './fixtures';

const TYPES = ['Q4_K', 'Q5_K', 'Q6_K'] as const;
const COLS = 512; // two super-blocks per row
const TOLERANCE = 1e-5; // as matmul.test.ts

let ctx: GpuContext;
let kernels: MatmulKernels;
let file: OpenGguf;
/** Rows per group: the decode kernel's lanes × rows per thread on this adapter. */
let groupRows: number;
const made = new Map<string, MadeTensor>();
const uploaded: GpuWeight[] = [];

beforeAll(async () => {
  ctx = await openGpu();
  kernels = new MatmulKernels(ctx);
  groupRows = kernels.matvec.wg * kernels.matvec.threadRows;
  // Two full groups and a tail of 5 rows.
  const tensors = TYPES.map((type, i) =>
    makeTensor({ name: `w.${type}`, type, rows: 2 * groupRows + 5, cols: COLS, seed: 4200 + i }),
  );
  for (const t of tensors) made.set(t.name, t);
  file = await writeTensors(tempDirForSuite(), tensors);
}, 120_000);

afterAll(() => {
  for (const w of uploaded) w.destroy();
  file?.file.close();
  ctx?.destroy();
});

async function upload(name: string, maxBindingSize?: number): Promise<GpuWeight> {
  const w = (await uploadWeights(ctx, file.gguf, [name], maxBindingSize ? { maxBindingSize } : {})).get(name)!;
  uploaded.push(w);
  return w;
}

/** The blocks as the kernels' main plane holds them in row order: the file's, without a repacked type's scale field. */
function mainPlane(t: MadeTensor): { bytes: Uint8Array; blockBytes: number } {
  const layout = REPACK[t.type];
  if (!layout) return { bytes: t.bytes, blockBytes: t.ggmlType.typeSize };
  const blocks = (t.rows * t.cols) / t.ggmlType.blockSize;
  const blockBytes = t.ggmlType.typeSize - layout.scaleBytes;
  const bytes = new Uint8Array(blocks * blockBytes);
  repackBlocks(t.ggmlType, t.bytes, blocks, bytes, new Uint8Array(blocks * layout.scaleBytes));
  return { bytes, blockBytes };
}

describe.each(TYPES)('%s on a CPU adapter', (type) => {
  it('is uploaded with each row group interleaved for the decode lanes, the rows after the last full group as stored', async () => {
    expect(ctx.info.isFallbackAdapter).toBe(true);
    const t = made.get(`w.${type}`)!;
    const w = await upload(t.name);
    const lanes = kernels.matvec.wg;
    const rows = kernels.matvec.threadRows;
    expect(w.rowGroups).toEqual({ lanes, rows });
    const back = new Uint8Array(await readBack(ctx.device, w.parts[0]!.buffer));
    const { bytes, blockBytes } = mainPlane(t);
    const shape = { partRows: t.rows, blocksPerRow: t.cols / 256, quads: blockBytes / 16 };
    let wrong = 0;
    let moved = 0;
    for (let row = 0; row < t.rows; row++) {
      for (let b = 0; b < shape.blocksPerRow; b++) {
        for (let q = 0; q < shape.quads; q++) {
          const stored = rowGroupQuad(row, b, q, shape) * 16;
          const at = rowGroupQuad(row, b, q, shape, { lanes, rows }) * 16;
          if (at !== stored) moved++;
          for (let k = 0; k < 16; k++) if (back[at + k] !== bytes[stored + k]) wrong++;
        }
      }
    }
    expect(wrong, `${t.name}: bytes away from their interleaved place`).toBe(0);
    expect(moved).toBeGreaterThan(0);
  });

  it('mat-vec, mat-mat and embedding match the CPU reference, whole and split into parts of full groups plus a tail', async () => {
    const t = made.get(`w.${type}`)!;
    const rowBytes = (t.cols / 256) * t.ggmlType.typeSize;
    // Whole, and in two parts: one group and 3 rows, one group and 2 rows.
    const split = await upload(t.name, (groupRows + 3) * rowBytes + 64);
    expect(split.parts.map((p) => p.rows)).toEqual([groupRows + 3, groupRows + 2]);
    for (const w of [await upload(t.name), split]) {
      for (const n of [1, 11]) {
        const x = randomInput(n, t.cols, 7 + n);
        const xb = storageBuffer(ctx.device, x);
        const yb = storageBuffer(ctx.device, n * t.rows * 4);
        await run(ctx.device, [kernels.matmul(w, xb, yb, n)]);
        const y = new Float32Array(await readBack(ctx.device, yb), 0, n * t.rows);
        const ref = referenceMatmul(t.values, t.rows, t.cols, x, n);
        expect(
          maxRelativeError(y, ref.y, ref.scale),
          `${t.name}, ${w.parts.length} part(s), ${n} token(s)`,
        ).toBeLessThanOrEqual(TOLERANCE);
        xb.destroy();
        yb.destroy();
      }
      // Rows in the first group, the second, and the tail.
      const ids = Uint32Array.of(0, 9, groupRows + 7, t.rows - 1, t.rows - 5);
      const idb = storageBuffer(ctx.device, ids);
      const out = storageBuffer(ctx.device, ids.length * t.cols * 4);
      await run(ctx.device, [kernels.embedding(w, idb, out, ids.length)]);
      const got = new Float32Array(await readBack(ctx.device, out), 0, ids.length * t.cols);
      for (const [i, id] of ids.entries()) {
        expect(got.subarray(i * t.cols, (i + 1) * t.cols), `${t.name}: row ${id}`).toEqual(
          t.values.subarray(id * t.cols, (id + 1) * t.cols),
        );
      }
      idb.destroy();
      out.destroy();
    }
  });
});
