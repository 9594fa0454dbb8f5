/**
 * GLU once per token on the GPU kernel shapes (GUFO_KERNEL_SHAPE=gpu, set here for this file):
 * with gate|up uploaded in row pairs, a decoded token's gate|up mat-vec writes act(gate)·up and
 * ffn_down reads it as it is; with them in order (LoadOptions.gluPairs false) ffn_down computes it
 * in each of its workgroups, as before. Every decoded token's logits are the same bit for bit:
 * SiLU (llama, Q4_K), GELU (gemma2, Q6_K), and phi3's fused ffn_up (one tensor of both halves,
 * Q8_0). One token per step (maxBatch 1), so every position is a decode step.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { pipelineCache } from '../../src-main/engine/gpu/pipeline-cache';
import { writeRandomModel } from '../support/test-models';
import { EXACTNESS_SHAPES } from './exactness-shapes';
import { writeQuantizedCopies } from './quantized-models';

process.env.GUFO_KERNEL_SHAPE = 'gpu';
const engine = await Engine.open();
const dir = mkdtempSync(join(tmpdir(), 'gufo-glu-once-'));
afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const MODELS = [
  { arch: 'llama', type: 'Q4_K' },
  { arch: 'gemma2', type: 'Q6_K' },
  { arch: 'phi3', type: 'Q8_0' },
] as const;
const IDS = [1, 17, 200, 33, 101, 45, 99, 7, 150, 60];

/** The logits after each of IDS, one decode step each. */
async function decodeLogits(path: string, gluPairs: boolean): Promise<Float32Array[]> {
  await engine.load(path, { ctx: 32, maxBatch: 1, gluPairs });
  const out: Float32Array[] = [];
  await engine.logits(IDS, (logits) => out.push(Float32Array.from(logits)));
  return out;
}

describe('GLU once per token (GPU kernel shapes)', () => {
  it('runs the GPU shapes', () => {
    expect(engine.gpu.info.cpuShapes).toBe(false);
  });

  it.each(MODELS)(
    '$arch ($type): decoded logits with gate|up in pairs equal those with the GLU in ffn_down, bit for bit',
    async ({ arch, type }) => {
      const f32 = join(dir, `${arch}.gguf`);
      await writeRandomModel(f32, EXACTNESS_SHAPES[arch]!);
      mkdirSync(join(dir, arch));
      const { quantized } = await writeQuantizedCopies(f32, type, join(dir, arch));
      const before = await decodeLogits(quantized, false);
      const compiled = pipelineCache(engine.gpu.device).compiled;
      const once = await decodeLogits(quantized, true);
      // The pairs' load compiled its own gate|up mat-vec (the GLU epilogue's).
      expect(pipelineCache(engine.gpu.device).compiled).toBeGreaterThan(compiled);
      expect(once).toHaveLength(IDS.length);
      for (const [t, row] of once.entries()) {
        const want = new Uint32Array(before[t]!.buffer);
        const got = new Uint32Array(row.buffer);
        const i = got.findIndex((v, k) => v !== want[k]);
        expect(i, `${arch} position ${t}: logit ${i} ${row[i]} vs ${before[t]![i]}`).toBe(-1);
      }
    },
    300_000,
  );
});
