/**
 * Q|K|V and gate|up in one matmul each where their tensors share a type, else one per run of one
 * type into the same q|k|v (gate|up) rows: the dispatches a decoded token costs, and the same
 * logits whichever way a file's types split them. A decoded token's pre-norms ride on the mat-vecs
 * that read them and its GLU on ffn_down's (no dispatch of their own): its logits are those of
 * the prefill, which keeps them apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { Engine } from '../../src-main/engine/engine';
import { MatmulKernels } from '../../src-main/engine/gpu/matmul';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { llamaDequantize, llamaQuantize } from '../support/ggml-oracle';
import { STORIES_260K } from '../support/paths';
import { writeRandomModel, type ModelShape } from '../support/test-models';

const engine = await Engine.open();
/** The pre-norms a decode step keeps as dispatches per layer: none where the kernels fold them (a GPU). */
const normDispatches = new MatmulKernels(engine.gpu).foldsNorm ? 0 : 2;
const dir = mkdtempSync(join(tmpdir(), 'gufo-fused-'));
afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Three copies of an F32 model whose attn_v and ffn_up weights are rounded to halves: one all F32
 * (Q, K, V of one type, gate and up too: fused), one with those stored as F16 (the same values;
 * Q|K then V, gate then up), and one with only layer 0's as F16 (layer 0 split, the others fused,
 * as in a Q4_K_M file).
 */
async function mixedCopies(f32Path: string): Promise<{ fused: string; apart: string; some: string }> {
  const f16 = ggmlTypeByName('F16')!;
  const { gguf, file } = openGguf(f32Path);
  try {
    const halves = new Map<string, Uint8Array>();
    for (const t of gguf.tensors.filter(
      (t) => t.name.endsWith('.attn_v.weight') || t.name.endsWith('.ffn_up.weight'),
    )) {
      const values = new Float32Array(gguf.tensorData(t).slice().buffer);
      halves.set(t.name, llamaQuantize(f16.id, values, values.length / t.ne[0]!, t.ne[0]!));
    }
    const out = { fused: join(dir, 'fused.gguf'), apart: join(dir, 'apart.gguf'), some: join(dir, 'some.gguf') };
    // Writes the copy whose attn_v and ffn_up tensors named by `asHalves` are stored as F16, the rest as F32 with the same values.
    const write = (path: string, asHalves: (name: string) => boolean) =>
      writeGguf(
        path,
        {
          kvs: gguf.kvs,
          tensors: gguf.tensors.map((t) => ({
            name: t.name,
            ne: t.ne,
            type: halves.has(t.name) && asHalves(t.name) ? f16 : t.type,
          })),
        },
        (i) => {
          const t = gguf.tensors[i]!;
          const h = halves.get(t.name);
          if (!h) return [gguf.tensorData(t)];
          return [asHalves(t.name) ? h : new Uint8Array(llamaDequantize(f16.id, h, t.elements).buffer)];
        },
      );
    await write(out.fused, () => false);
    await write(out.apart, () => true);
    await write(out.some, (name) => name.startsWith('blk.0.'));
    return out;
  } finally {
    file.close();
  }
}

async function logitsOf(path: string, ids: number[]): Promise<Float32Array[]> {
  await engine.load(path, { ctx: 64 });
  const out: Float32Array[] = [];
  await engine.logits(ids, (logits) => out.push(Float32Array.from(logits)));
  return out;
}

describe('fused projections', () => {
  it('stories260K decodes a token in 34 dispatches (44 on a CPU adapter): per layer Q|K|V (attention norm folded in on a GPU), attention (its split storing K and V, its merge), output, gate|up (FFN norm folded in on a GPU), down (GLU folded in)', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const r = await engine.bench(8, 8);
    // Embedding, 5 layers of 6 (and the 2 norms where they are not folded), final norm, output, sampler.
    expect(r.dispatchesPerToken).toBe(1 + 5 * (6 + normDispatches) + 3);
  });

  it('stories260K: the greedy tokens decoded one at a time (fused) have the logits a prefill of them (apart) gives', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const prompt = [1, 403, 407, 261, 378];
    const r = await engine.generate(prompt, { maxTokens: 12, topLogprobs: 1, stop: [] });
    const decoded = r.ids;
    const decodedTop = r.logprobs!.map((top) => top[0]![1]);
    expect(decoded.length).toBeGreaterThan(4);
    const rows: Float32Array[] = [];
    await engine.logits([...prompt, ...decoded], (logits) => rows.push(Float32Array.from(logits)));
    for (let i = 1; i < decoded.length; i++) {
      // Token i was decoded from the logits of position prompt.length + i − 1.
      const row = rows[prompt.length + i - 1]!;
      let best = 0;
      for (let v = 1; v < row.length; v++) if (row[v]! > row[best]!) best = v;
      expect(best, `token ${i}`).toBe(decoded[i]);
      let sum = 0;
      for (const v of row) sum += Math.exp(v - row[best]!);
      expect(Math.abs(-Math.log(sum) - decodedTop[i]!), `token ${i}: log-probability`).toBeLessThan(1e-4);
    }
  }, 120_000);

  const shapes: Record<string, ModelShape> = {
    // Q/K/V biases: one bias add over q|k|v rows, split or not.
    qwen2: {
      arch: 'qwen2',
      nLayer: 2,
      nEmbd: 128,
      nFf: 256,
      nHead: 4,
      nHeadKv: 2,
      scale: 0.06,
      randomNorms: true,
      randomBiases: true,
      seed: 31,
    },
    // Per-head Q/K norms: one norm over the Q and K heads of q|k|v rows, split or not.
    qwen3: {
      arch: 'qwen3',
      nLayer: 2,
      nEmbd: 128,
      nFf: 256,
      nHead: 4,
      nHeadKv: 2,
      headDim: 64,
      scale: 0.06,
      randomNorms: true,
      seed: 32,
    },
  };
  // Split: Q|K and V, gate and up, two matmuls each (biases and norms stay one dispatch).
  const dispatches = {
    qwen2: { fused: 7 + normDispatches, apart: 9 + normDispatches },
    qwen3: { fused: 7 + normDispatches, apart: 9 + normDispatches },
  };
  for (const [arch, shape] of Object.entries(shapes)) {
    it(`${arch}: Q|K|V in one matmul gives the logits of Q|K and V apart, in fewer dispatches`, async () => {
      const f32 = join(dir, `${arch}.gguf`);
      await writeRandomModel(f32, shape);
      const copies = await mixedCopies(f32);
      const ids = [1, 17, 200, 33, 301, 45, 99, 7, 150, 260];
      const fused = await logitsOf(copies.fused, ids);
      const fusedBench = await engine.bench(4, 4);
      const apart = await logitsOf(copies.apart, ids);
      const apartBench = await engine.bench(4, 4);
      const some = await logitsOf(copies.some, ids);
      const perLayer = dispatches[arch as keyof typeof dispatches];
      expect(fusedBench.dispatchesPerToken).toBe(1 + 2 * perLayer.fused + 3);
      expect(apartBench.dispatchesPerToken).toBe(1 + 2 * perLayer.apart + 3);
      for (const [name, logits] of Object.entries({ fused, 'layer 0 apart, layer 1 fused': some })) {
        expect(logits).toHaveLength(ids.length);
        for (const [t, row] of logits.entries()) {
          const other = apart[t]!;
          let worst = 0;
          let scale = 0;
          for (let i = 0; i < row.length; i++) {
            worst = Math.max(worst, Math.abs(row[i]! - other[i]!));
            scale = Math.max(scale, Math.abs(other[i]!));
          }
          expect(worst / scale, `${arch} ${name}, token ${t}`).toBeLessThan(1e-5);
        }
      }
    }, 120_000);
  }
});
