/**
 * Weight upload: repacked layouts (exact, ≤ 1.07 × the file's bytes), tensors split across
 * bindings on row boundaries, the unsupported-type error, progress, and bounded staging.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GGML_TYPES, ggmlTypeByName } from '../../../src-main/core/ggml-types';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import {
  MAX_STAGING_BYTES,
  REPACK,
  UnsupportedGpuTypeError,
  planParts,
  repackBlocks,
  supportsGpuType,
  uploadWeights,
  type GpuWeight,
} from '../../../src-main/engine/gpu/weights';
import { writeGguf, openGguf, type OpenGguf } from '../../../src-main/node/gguf-io';
import { join } from 'node:path';
import {
  GPU_TYPE_NAMES,
  makeTensor,
  randomInput,
  readBack,
  rowGroupQuad,
  run,
  storageBuffer,
  tempDirForSuite,
  writeTensors,
  type MadeTensor,
} from './fixtures';

let ctx: GpuContext;
let dir: string;
let file: OpenGguf;
const made = new Map<string, MadeTensor>();
const opened: OpenGguf[] = [];
const uploaded: GpuWeight[] = [];

/** Model-like shapes: 64 rows of 1024 (four k-quant super-blocks per row). */
const ROWS = 64;
const COLS = 1024;

beforeAll(async () => {
  ctx = await openGpu();
  dir = tempDirForSuite();
  const tensors = GPU_TYPE_NAMES.map((type, i) =>
    makeTensor({ name: `w.${type}`, type, rows: ROWS, cols: COLS, seed: 3000 + i }),
  );
  tensors.push(makeTensor({ name: 'odd.F16', type: 'F16', rows: 9, cols: 33, seed: 3100 }));
  for (const t of tensors) made.set(t.name, t);
  file = await writeTensors(dir, tensors);
  opened.push(file);
});

afterAll(() => {
  for (const w of uploaded) w.destroy();
  for (const f of opened) f.file.close();
  ctx?.destroy();
});

async function upload(
  names: string[],
  options: Parameters<typeof uploadWeights>[3] = {},
): Promise<Map<string, GpuWeight>> {
  const weights = await uploadWeights(ctx, file.gguf, names, options);
  uploaded.push(...weights.values());
  return weights;
}

/** A part's buffer with the rows of its main plane put back in row order where they are in row groups (rowGroupQuad). */
function rowOrder(w: GpuWeight, buffer: Uint8Array): Uint8Array {
  if (!w.rowGroups) return buffer;
  const part = w.parts[0]!;
  const quads = (w.type.typeSize - (REPACK[w.type.name]?.scaleBytes ?? 0)) / 16;
  const shape = { partRows: part.rows, blocksPerRow: w.cols / w.type.blockSize, quads };
  const out = buffer.slice();
  for (let row = 0; row < part.rows; row++) {
    for (let b = 0; b < shape.blocksPerRow; b++) {
      for (let q = 0; q < quads; q++) {
        const at = rowGroupQuad(row, b, q, shape, w.rowGroups) * 16;
        out.set(buffer.subarray(at, at + 16), rowGroupQuad(row, b, q, shape) * 16);
      }
    }
  }
  return out;
}

/** The file's blocks rebuilt from a part's buffer: main plane and scale plane put back together. */
function unpack(typeName: string, buffer: Uint8Array, blocks: number, scaleWord: number): Uint8Array {
  const type = ggmlTypeByName(typeName)!;
  const layout = REPACK[typeName];
  if (!layout) return buffer.subarray(0, blocks * type.typeSize);
  const out = new Uint8Array(blocks * type.typeSize);
  const mainPer = type.typeSize - layout.scaleBytes;
  for (let b = 0; b < blocks; b++) {
    const o = b * type.typeSize;
    const m = buffer.subarray(b * mainPer, (b + 1) * mainPer);
    out.set(m.subarray(0, layout.scaleAt), o);
    out.set(
      buffer.subarray(scaleWord * 4 + b * layout.scaleBytes, scaleWord * 4 + (b + 1) * layout.scaleBytes),
      o + layout.scaleAt,
    );
    out.set(m.subarray(layout.scaleAt), o + layout.scaleAt + layout.scaleBytes);
  }
  return out;
}

describe('GPU types', () => {
  it("exactly the issue's list; each is word-aligned as stored or has a repack layout", () => {
    const supported = GGML_TYPES.filter(supportsGpuType).map((t) => t.name);
    expect(new Set(supported)).toEqual(new Set(GPU_TYPE_NAMES));
    for (const name of supported) {
      const type = ggmlTypeByName(name)!;
      const layout = REPACK[name];
      if (type.typeSize % 4 === 0 || type.blockSize === 1) expect(layout, name).toBeUndefined();
      else {
        expect(layout, `${name} (${type.typeSize} bytes per block) needs a repack layout`).toBeDefined();
        expect((type.typeSize - layout!.scaleBytes) % 4, name).toBe(0);
        expect(layout!.scaleAt + layout!.scaleBytes).toBeLessThanOrEqual(type.typeSize);
      }
    }
  });
});

describe('repacked layouts', () => {
  it('every type uploads exactly (read back and reassembled) within 1.07 × its file bytes', async () => {
    const names = [...made.keys()];
    const weights = await upload(names);
    const ratios: Record<string, number> = {};
    let file = 0;
    let resident = 0;
    for (const name of names) {
      const t = made.get(name)!;
      const w = weights.get(name)!;
      expect(w.rows).toBe(t.rows);
      expect(w.cols).toBe(t.cols);
      expect(w.fileBytes).toBe(t.bytes.byteLength);
      expect(w.parts).toHaveLength(1);
      const part = w.parts[0]!;
      expect(part.bytes % 4).toBe(0);
      const back = rowOrder(w, new Uint8Array(await readBack(ctx.device, part.buffer)));
      const blocks = (t.rows * t.cols) / t.ggmlType.blockSize;
      expect(unpack(t.type, back, blocks, part.scaleWord), name).toEqual(t.bytes);
      ratios[name] = w.residentBytes / w.fileBytes;
      expect(w.residentBytes, name).toBeLessThanOrEqual(1.07 * w.fileBytes);
      file += w.fileBytes;
      resident += w.residentBytes;
    }
    console.log(
      `resident/file bytes: ${JSON.stringify(ratios)}; all: ${resident} / ${file} = ${(resident / file).toFixed(6)}`,
    );
    expect(resident).toBeLessThanOrEqual(1.07 * file);
  });
});

describe('repackBlocks', () => {
  it('moves words when the views are 2-byte aligned and bytes when not, with the same result', () => {
    for (const name of Object.keys(REPACK)) {
      const t = made.get(`w.${name}`)!;
      const type = t.ggmlType;
      const blocks = 12;
      const layout = REPACK[name]!;
      const planes = (src: Uint8Array, shift: number) => {
        const main = new Uint8Array(shift + blocks * (type.typeSize - layout.scaleBytes)).subarray(shift);
        const scale = new Uint8Array(shift + blocks * layout.scaleBytes).subarray(shift);
        repackBlocks(type, src, blocks, main, scale);
        return [main, scale];
      };
      const bytes = t.bytes.subarray(0, blocks * type.typeSize);
      const odd = new Uint8Array(bytes.length + 1);
      odd.set(bytes, 1);
      const [main, scale] = planes(bytes, 0);
      expect(planes(odd.subarray(1), 1), name).toEqual([main, scale]);
      expect(unpack(name, new Uint8Array([...main!, ...scale!]), blocks, main!.length / 4), name).toEqual(bytes);
    }
  });
});

describe('tensors larger than the binding limit', () => {
  it('are split on row boundaries and give the same results as one binding', async () => {
    const kernels = new MatmulKernels(ctx);
    const { device } = ctx;
    for (const name of ['w.Q6_K', 'w.Q8_0', 'w.IQ4_XS', 'w.MXFP4', 'odd.F16']) {
      const t = made.get(name)!;
      const rowBytes = t.bytes.byteLength / t.rows;
      const limit = Math.floor(3.5 * rowBytes) + 8; // 3 rows per part, a short last part
      const whole = (await upload([name])).get(name)!;
      const split = (await upload([name], { maxBindingSize: limit })).get(name)!;
      expect(split.parts.length).toBe(Math.ceil(t.rows / 3));
      let next = 0;
      for (const p of split.parts) {
        expect(p.rowStart).toBe(next);
        expect(p.bytes).toBeLessThanOrEqual(limit);
        next += p.rows;
      }
      expect(next).toBe(t.rows);
      expect(split.residentBytes).toBeLessThanOrEqual(1.07 * split.fileBytes);

      for (const n of [1, 5]) {
        const x = storageBuffer(device, randomInput(n, t.cols, 9));
        const y1 = storageBuffer(device, n * t.rows * 4);
        const y2 = storageBuffer(device, n * t.rows * 4);
        await run(device, [kernels.matmul(whole, x, y1, n), kernels.matmul(split, x, y2, n)]);
        const a = new Uint32Array(await readBack(device, y1));
        const b = new Uint32Array(await readBack(device, y2));
        expect(b, `${name}, ${n} tokens`).toEqual(a);
        x.destroy();
        y1.destroy();
        y2.destroy();
      }
      const ids = [0, 2, 3, t.rows - 1, 4, t.rows, 1];
      const idsBuffer = storageBuffer(device, new Uint32Array(ids));
      const out = storageBuffer(device, new Float32Array(ids.length * t.cols).fill(Number.NaN));
      await run(device, [kernels.embedding(split, idsBuffer, out, ids.length)]);
      const got = new Uint32Array(await readBack(device, out), 0, ids.length * t.cols);
      const values = new Uint32Array(t.values.buffer);
      for (const [i, id] of ids.entries()) {
        const want = id < t.rows ? values.subarray(id * t.cols, (id + 1) * t.cols) : new Uint32Array(t.cols);
        expect(got.subarray(i * t.cols, (i + 1) * t.cols), `${name}: embedding row ${id}`).toEqual(want);
      }
      idsBuffer.destroy();
      out.destroy();
    }
  });

  it('a single row over the limit is a clear error', async () => {
    await expect(upload(['w.Q4_K'], { maxBindingSize: 100 })).rejects.toThrow(
      /w\.Q4_K: one row \(576 bytes\) exceeds the GPU binding limit of 100 bytes/,
    );
  });

  it('plans parts that fit the limit', () => {
    const q6 = ggmlTypeByName('Q6_K')!;
    const parts = planParts('t', q6, 10, 256, 3 * 210 + 8);
    expect(parts.map((p) => [p.rowStart, p.rows])).toEqual([
      [0, 3],
      [3, 3],
      [6, 3],
      [9, 1],
    ]);
    expect(parts[0]!.bytes).toBe(3 * 208 + 8);
    expect(parts[0]!.scaleWord).toBe((3 * 208) / 4);
    expect(parts[3]!.bytes).toBe(208 + 4);
    // A stacked expert tensor's parts hold whole experts (here of 2 rows): 5 rows fit, 4 are taken.
    const experts = planParts('t', q6, 10, 256, 5 * 210 + 8, 2);
    expect(experts.map((p) => [p.rowStart, p.rows])).toEqual([
      [0, 4],
      [4, 4],
      [8, 2],
    ]);
  });
});

describe('errors', () => {
  it('a type without GPU kernels is refused at load, before any upload', async () => {
    const path = join(dir, 'unsupported.gguf');
    const iq2 = ggmlTypeByName('IQ2_XXS')!;
    const q8 = ggmlTypeByName('Q8_0')!;
    await writeGguf(
      path,
      {
        kvs: [],
        tensors: [
          { name: 'ok', type: q8, ne: [32, 2] },
          { name: 'blk.0.ffn_down.weight', type: iq2, ne: [256, 2] },
        ],
      },
      (i) => [new Uint8Array(i === 0 ? 2 * 34 : 2 * 66)],
    );
    const f = openGguf(path);
    opened.push(f);
    let progress = 0;
    const attempt = uploadWeights(ctx, f.gguf, ['ok', 'blk.0.ffn_down.weight'], { onProgress: () => progress++ });
    await expect(attempt).rejects.toThrow(UnsupportedGpuTypeError);
    await expect(attempt).rejects.toThrow('blk.0.ffn_down.weight: IQ2_XXS is not supported on GPU yet');
    expect(progress).toBe(0);
  });

  it('a missing tensor is named', async () => {
    await expect(upload(['w.Q4_0', 'nope'])).rejects.toThrow(/no tensor named "nope"/);
  });
});

describe('streaming', () => {
  it('reports progress and keeps at most `stagingBytes` in flight', async () => {
    const { queue } = ctx.device;
    const staging = 8192;
    let inFlight = 0;
    let maxInFlight = 0;
    let largest = 0;
    const writeBuffer = queue.writeBuffer.bind(queue);
    const onSubmittedWorkDone = queue.onSubmittedWorkDone.bind(queue);
    const q = queue as unknown as Record<string, unknown>;
    q.writeBuffer = (buffer: GPUBuffer, offset: number, data: Uint8Array<ArrayBuffer>, ...rest: number[]) => {
      inFlight += data.byteLength;
      largest = Math.max(largest, data.byteLength);
      maxInFlight = Math.max(maxInFlight, inFlight);
      writeBuffer(buffer, offset, data, ...rest);
    };
    q.onSubmittedWorkDone = async () => {
      await onSubmittedWorkDone();
      inFlight = 0;
    };
    const calls: [number, number][] = [];
    const names = ['w.Q8_0', 'w.F16', 'w.Q6_K', 'w.Q4_K'];
    try {
      await upload(names, { stagingBytes: staging, onProgress: (done, total) => calls.push([done, total]) });
    } finally {
      delete q.writeBuffer;
      delete q.onSubmittedWorkDone;
    }
    const total = names.reduce((s, n) => s + made.get(n)!.bytes.byteLength, 0);
    expect(maxInFlight).toBeLessThanOrEqual(staging);
    expect(largest).toBeGreaterThan(staging / 2); // chunks use the staging room
    expect(calls.length).toBeGreaterThan(total / staging);
    for (const [i, [done, t]] of calls.entries()) {
      expect(t).toBe(total);
      if (i > 0) expect(done).toBeGreaterThan(calls[i - 1]![0]);
    }
    expect(calls.at(-1)).toEqual([total, total]);
  });

  it('stages at most 64 MiB by default', () => {
    expect(MAX_STAGING_BYTES).toBe(64 * 2 ** 20);
  });
});
