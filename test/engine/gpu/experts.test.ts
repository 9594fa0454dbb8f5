/**
 * The expert matmul (matmul.wgsl with EXPERTS) and the routing table it reads (moe.wgsl's
 * moe_group), on stacked expert tensors [cols, rows, experts] quantized by llama.cpp:
 *
 * - expert e is sliced on its block boundaries: the core's dequantizeExpert gives exactly the
 *   values llama.cpp's decoder gives for that expert's bytes, and the GPU's products use exactly
 *   those weights (tolerance as matmul.test.ts: |y − ref| ≤ 1e-5 · Σ|w||x|);
 * - tokens are grouped by expert into tiles of at most EXPERT_TILE pairs, every pair once;
 * - a tensor split across bindings is split on expert boundaries and gives the same bits;
 * - a merged gate_up tensor's halves are rows of each expert;
 * - unchosen experts' blocks are never used: NaN there changes nothing.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dequantizeExpert } from '../../../src-main/core/dequantize';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { EXPERT_TILE, MatmulKernels, routingTable } from '../../../src-main/engine/gpu/matmul';
import { OpKernels, Step } from '../../../src-main/engine/gpu/ops';
import { uploadWeights, type GpuWeight } from '../../../src-main/engine/gpu/weights';
import { openGguf, writeGguf, type OpenGguf } from '../../../src-main/node/gguf-io';
import { llamaDequantize, llamaQuantize } from '../../support/ggml-oracle';
import { mulberry32, randomF32 } from '../../support/random';
import {
  maxRelativeError,
  randomInput,
  readBack,
  referenceMatmul,
  run,
  storageBuffer,
  tempDirForSuite,
} from './fixtures';

const TOLERANCE = 1e-5;
const EXPERTS = 6;
const ROWS = 37; // per expert; not a multiple of the rows per workgroup
const COLS = 512;
const TYPES = ['F32', 'F16', 'Q8_0', 'Q4_K', 'Q6_K', 'MXFP4'];

interface Stacked {
  name: string;
  type: string;
  rows: number;
  /** Each expert's weights as llama.cpp decodes that expert's bytes (rows × COLS). */
  experts: Float32Array[];
}

let ctx: GpuContext;
let file: OpenGguf;
let ops: OpKernels;
let kernels: MatmulKernels;
const stacked = new Map<string, Stacked>();
const uploaded: GpuWeight[] = [];
const measured: Record<string, string> = {};

/** Random weights for `experts` × `rows` rows; with `nanExperts`, those experts hold NaN (F32 only). */
function values(rows: number, seed: number, nanExperts: number[] = []): Float32Array {
  const rng = mulberry32(seed);
  const v = randomF32(EXPERTS * rows * COLS, () => rng.gaussian(), 0.05);
  for (const e of nanExperts) v.fill(Number.NaN, e * rows * COLS, (e + 1) * rows * COLS);
  return v;
}

beforeAll(async () => {
  ctx = await openGpu();
  ops = new OpKernels(ctx.device);
  kernels = new MatmulKernels(ctx);
  const specs = [
    ...TYPES.map((type, i) => ({ name: `exps.${type}`, type, rows: ROWS, data: values(ROWS, 500 + i) })),
    { name: 'gate_up.Q5_K', type: 'Q5_K', rows: 2 * ROWS, data: values(2 * ROWS, 600) },
    { name: 'poisoned.F32', type: 'F32', rows: ROWS, data: values(ROWS, 700, [0, 2, 5]) },
  ];
  const tensors = specs.map((s) => {
    const type = ggmlTypeByName(s.type)!;
    const bytes =
      s.type === 'F32' ? new Uint8Array(s.data.buffer) : llamaQuantize(type.id, s.data, EXPERTS * s.rows, COLS);
    const per = bytes.byteLength / EXPERTS;
    const experts = Array.from({ length: EXPERTS }, (_, e) => {
      const slice = bytes.slice(e * per, (e + 1) * per);
      return s.type === 'F32' ? new Float32Array(slice.buffer) : llamaDequantize(type.id, slice, s.rows * COLS);
    });
    stacked.set(s.name, { name: s.name, type: s.type, rows: s.rows, experts });
    return { name: s.name, type, ne: [COLS, s.rows, EXPERTS], bytes };
  });
  const path = join(tempDirForSuite(), 'experts.gguf');
  await writeGguf(path, { kvs: [], tensors: tensors.map(({ name, type, ne }) => ({ name, type, ne })) }, (i) => [
    tensors[i]!.bytes,
  ]);
  file = openGguf(path);
});

afterAll(() => {
  if (Object.keys(measured).length) console.table(measured);
  for (const w of uploaded) w.destroy();
  ops?.destroy();
  file?.file.close();
  ctx?.destroy();
});

async function upload(name: string, maxBindingSize?: number): Promise<GpuWeight> {
  const w = (await uploadWeights(ctx, file.gguf, [name], { maxBindingSize })).get(name)!;
  uploaded.push(w);
  return w;
}

/**
 * Routes n tokens to the given experts (ids[t][slot]), groups them with moe_group and runs the
 * expert matmul of `weight` on random x: returns y ([pair][rows]), x and the routing table.
 */
async function routed(
  weight: GpuWeight,
  ids: number[][],
  rows?: { first: number; count: number },
  using: MatmulKernels = kernels,
): Promise<{ y: Float32Array; x: Float32Array; table: Uint32Array }> {
  const { device } = ctx;
  const n = ids.length;
  const used = ids[0]!.length;
  const count = rows?.count ?? weight.rows / weight.experts;
  const layout = routingTable(n, used, weight.experts);
  const x = randomInput(n, COLS, n * 31 + used);
  const step = new Step(device);
  step.set(0, n);
  const buffers = {
    ids: storageBuffer(device, new Uint32Array(ids.flat())),
    table: storageBuffer(device, new Uint32Array(layout.words).fill(0xdeadbeef)),
    x: storageBuffer(device, x),
    y: storageBuffer(device, new Float32Array(n * used * count).fill(-12345)),
  };
  try {
    const group = ops.moeGroup({
      ids: buffers.ids,
      table: buffers.table,
      step,
      experts: weight.experts,
      used,
      tile: EXPERT_TILE,
      pairsAt: layout.pairsAt,
    });
    const matmul = using.matmulExperts(weight, buffers.x, buffers.y, buffers.table, n, { used, xGroup: used, rows });
    await run(device, [group, matmul]);
    return {
      y: new Float32Array(await readBack(device, buffers.y)).subarray(0, n * used * count),
      x,
      table: new Uint32Array(await readBack(device, buffers.table)),
    };
  } finally {
    for (const b of Object.values(buffers)) b.destroy();
    step.destroy();
  }
}

/** Worst relative error of y against each pair's expert (rows `first`.. of it) times its token's x. */
function pairError(
  s: Stacked,
  ids: number[][],
  x: Float32Array,
  y: Float32Array,
  rows = { first: 0, count: s.rows },
): number {
  let worst = 0;
  const used = ids[0]!.length;
  ids.forEach((slots, t) => {
    slots.forEach((e, slot) => {
      const w = s.experts[e]!.subarray(rows.first * COLS, (rows.first + rows.count) * COLS);
      const ref = referenceMatmul(w, rows.count, COLS, x.subarray(t * COLS, (t + 1) * COLS), 1);
      const p = t * used + slot;
      worst = Math.max(worst, maxRelativeError(y.subarray(p * rows.count, (p + 1) * rows.count), ref.y, ref.scale));
    });
  });
  return worst;
}

/** n tokens × `used` distinct experts each, from a seeded shuffle. */
function randomIds(n: number, used: number, seed: number): number[][] {
  const rng = mulberry32(seed);
  return Array.from({ length: n }, () => {
    const all = Array.from({ length: EXPERTS }, (_, e) => e);
    for (let i = all.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [all[i], all[j]] = [all[j]!, all[i]!];
    }
    return all.slice(0, used);
  });
}

describe.each(TYPES)('%s experts', (type) => {
  const name = `exps.${type}`;

  it('expert e is its own blocks: the core slices and llama.cpp decodes the same values', () => {
    const tensor = file.gguf.tensor(name)!;
    for (let e = 0; e < EXPERTS; e++) {
      const ours = dequantizeExpert(file.gguf, tensor, e);
      const theirs = stacked.get(name)!.experts[e]!;
      expect(
        ours.every((v, i) => Object.is(v, theirs[i])),
        `expert ${e}`,
      ).toBe(true);
    }
  });

  it('decode (one token) and prefill (tokens grouped by expert) multiply by the chosen experts (decode / prefill error)', async () => {
    const w = await upload(name);
    expect(w.experts).toBe(EXPERTS);
    const s = stacked.get(name)!;
    const decode = [[4, 1, 3]];
    const prefill = randomIds(19, 3, 8); // 57 pairs: some experts take more than one tile
    // This CPU adapter's shapes; a GPU's, reducing by subgroups where the device has them and
    // through shared memory.
    const paths = [
      { cpuShapes: true, subgroups: true, label: 'CPU shapes' },
      ...(ctx.hasSubgroups ? [{ cpuShapes: false, subgroups: true, label: 'GPU shapes, subgroups' }] : []),
      { cpuShapes: false, subgroups: false, label: 'GPU shapes, shared' },
    ];
    for (const { cpuShapes, subgroups, label } of paths) {
      const k = new MatmulKernels(ctx, { subgroups, cpuShapes });
      const one = await routed(w, decode, undefined, k);
      const many = await routed(w, prefill, undefined, k);
      const errors = [pairError(s, decode, one.x, one.y), pairError(s, prefill, many.x, many.y)];
      measured[`${type}, ${label}`] = errors.map((e) => e.toExponential(1)).join(' / ');
      for (const e of errors) expect(e).toBeLessThanOrEqual(TOLERANCE);
    }
  });
});

describe('routing and layout', () => {
  it('moe_group lists every pair once, by expert, in tiles of at most EXPERT_TILE', async () => {
    const w = await upload('exps.Q8_0');
    const ids = randomIds(23, 4, 9);
    ids[5] = [5, 4, 3, 2]; // expert order within a token does not matter
    const { table } = await routed(w, ids);
    const { pairsAt } = routingTable(23, 4, EXPERTS);
    const byExpert = Array.from({ length: EXPERTS }, (_, e) => ids.flat().flatMap((id, p) => (id === e ? [p] : [])));
    const expectedTiles = byExpert.reduce((sum, pairs) => sum + Math.ceil(pairs.length / EXPERT_TILE), 0);
    expect(table[0]).toBe(expectedTiles);
    const seen = Array.from({ length: EXPERTS }, () => [] as number[]);
    let previous = -1;
    for (let i = 0; i < table[0]!; i++) {
      const [expert, first, count] = [table[4 + 3 * i]!, table[5 + 3 * i]!, table[6 + 3 * i]!];
      expect(expert).toBeGreaterThanOrEqual(previous); // tiles in expert order
      previous = expert;
      expect(count).toBeGreaterThan(0);
      expect(count).toBeLessThanOrEqual(EXPERT_TILE);
      expect(first).toBeGreaterThanOrEqual(pairsAt);
      seen[expert]!.push(...table.subarray(first, first + count));
    }
    expect(seen).toEqual(byExpert);
  });

  it('a tensor over the binding limit is split on expert boundaries, with the same results', async () => {
    const name = 'exps.Q6_K';
    const whole = await upload(name);
    const expertBytes = whole.fileBytes / EXPERTS;
    const split = await upload(name, Math.floor(2.5 * expertBytes) + 8); // two experts per part
    expect(split.parts.map((p) => [p.rowStart, p.rows])).toEqual([
      [0, 2 * ROWS],
      [2 * ROWS, 2 * ROWS],
      [4 * ROWS, 2 * ROWS],
    ]);
    const ids = randomIds(13, 2, 10);
    const a = await routed(whole, ids);
    const b = await routed(split, ids);
    expect(new Uint32Array(b.y.buffer, b.y.byteOffset, b.y.length)).toEqual(
      new Uint32Array(a.y.buffer, a.y.byteOffset, a.y.length),
    );
    await expect(upload(name, Math.floor(0.9 * expertBytes))).rejects.toThrow(
      /exps\.Q6_K: one expert \(\d+ bytes\) exceeds the GPU binding limit/,
    );
  });

  it('a merged gate_up tensor: each half is its rows of every expert', async () => {
    const w = await upload('gate_up.Q5_K');
    const s = stacked.get('gate_up.Q5_K')!;
    const ids = randomIds(9, 2, 11);
    for (const rows of [
      { first: 0, count: ROWS },
      { first: ROWS, count: ROWS },
    ]) {
      const { x, y } = await routed(w, ids, rows);
      expect(pairError(s, ids, x, y, rows)).toBeLessThanOrEqual(TOLERANCE);
    }
    expect(() =>
      kernels.matmulExperts(w, w.parts[0]!.buffer, w.parts[0]!.buffer, w.parts[0]!.buffer, 1, {
        used: 1,
        xGroup: 1,
        rows: { first: ROWS, count: ROWS + 1 },
      }),
    ).toThrow(/rows 37\.\.75 are outside an expert's 74/);
  });

  it('never reads the experts nobody chose: NaN there changes nothing', async () => {
    const ids = [
      [1, 3],
      [4, 1],
      [3, 4],
    ];
    const s = stacked.get('poisoned.F32')!;
    for (const limit of [undefined, Math.floor(1.5 * ROWS * COLS * 4) + 8]) {
      const w = await upload('poisoned.F32', limit);
      const { x, y } = await routed(w, ids);
      expect(y.every(Number.isFinite)).toBe(true);
      expect(pairError(s, ids, x, y)).toBeLessThanOrEqual(TOLERANCE);
    }
  });
});
