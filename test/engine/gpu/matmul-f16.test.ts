/**
 * The weight kernels on Mesa lavapipe, which has shader-f16: there the halves of F16 weights and
 * the f16 scales of the quantized types are converted by the adapter (WGSL f16) instead of by
 * hand. Every finite half, subnormals and signed zeros included, must come out as the exact f32
 * ggml gives it (SwiftShader, the other GPU tests' adapter, has no f16 and decodes by hand).
 *
 * Each row of the test matrices holds one half (an F16 value, or a Q8_0 block's scale with
 * code 1) among zeros; x is all ones, so y is that half's value, summed with zeros only: exact.
 */
import { existsSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../../src-main/core/ggml-types';
import { decoderFor } from '../../../src-main/core/quants/decoders';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../../src-main/engine/gpu/software-driver';
import type { GpuContext } from '../../../src-main/engine/gpu/device';
import type { GpuWeight } from '../../../src-main/engine/gpu/weights';
import type { OpenGguf } from '../../../src-main/node/gguf-io';
import { readBack, run, storageBuffer, tempDirForSuite, writeTensors, type MadeTensor } from './fixtures';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { openGpu } = await import('../../../src-main/engine/gpu/device');
const { MatmulKernels } = await import('../../../src-main/engine/gpu/matmul');
const { uploadWeights } = await import('../../../src-main/engine/gpu/weights');

const COLS = 32;
/** Every finite half: exponent bits not all ones. */
const FINITE_HALVES = Array.from({ length: 0x10000 }, (_, h) => h).filter((h) => (h & 0x7c00) !== 0x7c00);

/** One row per finite half: F16 weights with the half at column row % 32, zeros elsewhere. */
function f16Tensor(): MadeTensor {
  const halves = new Uint16Array(FINITE_HALVES.length * COLS);
  FINITE_HALVES.forEach((h, row) => (halves[row * COLS + (row % COLS)] = h));
  return made('every.F16', 'F16', new Uint8Array(halves.buffer));
}

/** One Q8_0 block per finite half: the half as its scale d, code 1 at position row % 32, zeros elsewhere. */
function q8Tensor(): MadeTensor {
  const bytes = new Uint8Array(FINITE_HALVES.length * 34);
  FINITE_HALVES.forEach((h, row) => {
    bytes[34 * row] = h & 0xff;
    bytes[34 * row + 1] = h >> 8;
    bytes[34 * row + 2 + (row % COLS)] = 1;
  });
  return made('every.Q8_0', 'Q8_0', bytes);
}

function made(name: string, typeName: string, bytes: Uint8Array): MadeTensor {
  const ggmlType = ggmlTypeByName(typeName)!;
  const rows = FINITE_HALVES.length;
  const values = new Float32Array(rows * COLS);
  decoderFor(ggmlType)(bytes, values, (rows * COLS) / ggmlType.blockSize);
  return { name, type: typeName, rows, cols: COLS, seed: 0, ggmlType, bytes, values };
}

let ctx: GpuContext;
let file: OpenGguf;
let weights: Map<string, GpuWeight>;
const tensors = new Map<string, MadeTensor>();

beforeAll(async () => {
  if (!existsSync(LAVAPIPE_ICD)) return;
  ctx = await openGpu();
  for (const t of [f16Tensor(), q8Tensor()]) tensors.set(t.name, t);
  file = await writeTensors(tempDirForSuite(), [...tensors.values()]);
  weights = await uploadWeights(ctx, file.gguf, [...tensors.keys()]);
});

afterAll(() => {
  for (const w of weights?.values() ?? []) w.destroy();
  file?.file.close();
  ctx?.destroy();
});

describe('Mesa lavapipe, shader-f16', () => {
  it('is installed, and the kernels convert halves on the adapter', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    expect(ctx.info.name).toMatch(/llvmpipe/);
    const kernels = new MatmulKernels(ctx);
    expect(kernels.f16).toBe(true);
    expect(kernels.source({ kernel: 'matvec', vec4: true }, 'Q8_0')).toMatch(/bitcast<vec2<f16>>/);
  });

  it.each(['every.F16', 'every.Q8_0'])(
    '%s: every finite half comes out exact, in mat-vec and mat-mat',
    async (name) => {
      const t = tensors.get(name)!;
      const kernels = new MatmulKernels(ctx);
      for (const n of [1, 2]) {
        const xb = storageBuffer(ctx.device, new Float32Array(n * COLS).fill(1));
        const yb = storageBuffer(ctx.device, n * t.rows * 4);
        try {
          await run(ctx.device, [kernels.matmul(weights.get(name)!, xb, yb, n)]);
          const y = new Float32Array(await readBack(ctx.device, yb), 0, n * t.rows);
          const wrong: string[] = [];
          for (let i = 0; i < n * t.rows && wrong.length < 5; i++) {
            const row = i % t.rows;
            // The row's one nonzero value (+0 for either zero: zeros summed give +0).
            const want = t.values[row * COLS + (row % COLS)]! + 0;
            if (!Object.is(y[i]! + 0, want))
              wrong.push(`half 0x${FINITE_HALVES[row]!.toString(16)}: ${y[i]} ≠ ${want}`);
          }
          expect(wrong, `${name}, ${n} token(s)`).toEqual([]);
        } finally {
          xb.destroy();
          yb.destroy();
        }
      }
    },
    600_000,
  );
});
