/**
 * Concatenated weights (Q|K|V, gate|up): several matrices of one type uploaded as one weight, whose
 * matmul equals the separate matmuls' outputs laid one after the other, bit for bit, also when the
 * weight is split across bindings in the middle of a tensor.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { MatmulKernels } from '../../../src-main/engine/gpu/matmul';
import { uploadWeights, type GpuWeight, type WeightSource } from '../../../src-main/engine/gpu/weights';
import {
  randomInput,
  readBack,
  run,
  storageBuffer,
  tempDirForSuite,
  writeTensors,
  makeTensor,
  type MadeTensor,
} from './fixtures';
import type { OpenGguf } from '../../../src-main/node/gguf-io';

let ctx: GpuContext;
let file: OpenGguf;
const uploaded: GpuWeight[] = [];
const COLS = 256;
/** Q, K, V-like row counts: the second and third tensors shorter than the first. */
const ROWS = [12, 4, 4];
/** An as-stored type, two repacked ones (2-byte scale, f16 rows of 2-byte blocks). */
const TYPES = ['Q4_K', 'Q8_0', 'Q6_K', 'F16'];

beforeAll(async () => {
  ctx = await openGpu();
  const tensors: MadeTensor[] = [];
  for (const [t, type] of TYPES.entries()) {
    for (const [i, rows] of ROWS.entries())
      tensors.push(makeTensor({ name: `${type}.${i}`, type, rows, cols: COLS, seed: 700 + 10 * t + i }));
  }
  tensors.push(makeTensor({ name: 'other.Q4_0', type: 'Q4_0', rows: 4, cols: COLS, seed: 799 }));
  tensors.push(makeTensor({ name: 'wide.Q8_0', type: 'Q8_0', rows: 4, cols: 2 * COLS, seed: 798 }));
  file = await writeTensors(tempDirForSuite(), tensors);
});

afterAll(() => {
  for (const w of uploaded) w.destroy();
  file?.file.close();
  ctx?.destroy();
});

async function upload(names: WeightSource[], maxBindingSize?: number): Promise<Map<string, GpuWeight>> {
  const weights = await uploadWeights(ctx, file.gguf, names, { maxBindingSize });
  uploaded.push(...weights.values());
  return weights;
}

async function matmulBits(kernels: MatmulKernels, w: GpuWeight, x: GPUBuffer, n: number): Promise<Uint32Array> {
  const y = storageBuffer(ctx.device, n * w.rows * 4);
  await run(ctx.device, [kernels.matmul(w, x, y, n)]);
  const bits = new Uint32Array(await readBack(ctx.device, y), 0, n * w.rows);
  y.destroy();
  return bits;
}

describe('concatenated weights', () => {
  it("compute the separate matmuls' rows one after the other, bit for bit, in one binding or split mid-tensor", async () => {
    const kernels = new MatmulKernels(ctx);
    for (const type of TYPES) {
      const names = ROWS.map((_, i) => `${type}.${i}`);
      const separate = await upload(names);
      const rowBytes = file.gguf.tensor(names[0]!)!.bytes / ROWS[0]!;
      for (const limit of [undefined, Math.floor(5.5 * rowBytes) + 8]) {
        const fused = (await upload([{ name: `${type}.qkv`, tensors: names }], limit)).get(`${type}.qkv`)!;
        expect(fused.rows).toBe(ROWS.reduce((a, b) => a + b));
        expect(fused.fileBytes).toBe(names.reduce((sum, name) => sum + file.gguf.tensor(name)!.bytes, 0));
        if (limit) expect(fused.parts.length).toBe(4);
        for (const n of [1, 3]) {
          const x = storageBuffer(ctx.device, randomInput(n, COLS, 5));
          const parts = await Promise.all(names.map((name) => matmulBits(kernels, separate.get(name)!, x, n)));
          const want = new Uint32Array(n * fused.rows);
          for (let t = 0; t < n; t++) {
            let at = t * fused.rows;
            for (const [i, rows] of ROWS.entries()) {
              want.set(parts[i]!.subarray(t * rows, (t + 1) * rows), at);
              at += rows;
            }
          }
          expect(await matmulBits(kernels, fused, x, n), `${type}, ${n} tokens, limit ${limit}`).toEqual(want);
          x.destroy();
        }
      }
    }
  });

  it('refuse tensors of different types or row lengths, naming them', async () => {
    await expect(upload([{ name: 'mixed', tensors: ['Q8_0.0', 'other.Q4_0'] }])).rejects.toThrow(
      /mixed: other\.Q4_0 is Q4_0 with rows of 256, unlike Q8_0\.0 \(Q8_0, 256\)/,
    );
    await expect(upload([{ name: 'ragged', tensors: ['Q8_0.0', 'wide.Q8_0'] }])).rejects.toThrow(
      /ragged: wide\.Q8_0 is Q8_0 with rows of 512/,
    );
    await expect(upload([{ name: 'missing', tensors: ['Q8_0.0', 'nope'] }])).rejects.toThrow(/no tensor named "nope"/);
  });
});
