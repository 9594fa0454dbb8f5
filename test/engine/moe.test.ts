/**
 * Mixture-of-experts models in the Engine beyond their agreement with llama.cpp
 * (exactness.test.ts): a merged ffn_gate_up_exps tensor runs as its split gate and up tensors do,
 * decode reads only the chosen experts (`gufo bench --json`'s bytesPerToken), and files whose
 * expert tensors do not match their metadata are refused with the tensor named.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { UnsupportedModelError } from '../../src-main/engine/model/hparams';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { gufo, type BenchJson } from '../support/cli';
import { mulberry32 } from '../support/random';
import { tempDir } from '../support/temp';
import { TEST_VOCAB, writeRandomModel, type ModelShape } from '../support/test-models';
import { tempDirForSuite } from './gpu/fixtures';
import { writeQuantizedCopies } from './quantized-models';

const engine = await Engine.open();
afterAll(() => engine.destroy());

const QWEN3MOE: ModelShape = {
  arch: 'qwen3moe',
  nLayer: 2,
  nEmbd: 256,
  nFf: 768,
  nFfExp: 256,
  nHead: 4,
  nHeadKv: 2,
  nExpert: 8,
  nExpertUsed: 2,
  scale: 0.06,
  randomNorms: true,
  seed: 51,
};

/** `path` with each layer's ffn_gate_exps and ffn_up_exps stacked into one ffn_gate_up_exps (per expert: gate rows, then up rows). */
async function writeMergedCopy(path: string, out: string): Promise<void> {
  const { gguf, file } = openGguf(path);
  try {
    const merged = (name: string) => name.replace('ffn_gate_exps', 'ffn_gate_up_exps');
    const tensors = gguf.tensors
      .filter((t) => !t.name.includes('ffn_up_exps'))
      .map((t) =>
        t.name.includes('ffn_gate_exps')
          ? { name: merged(t.name), type: t.type, ne: [t.ne[0]!, 2 * t.ne[1]!, t.ne[2]!] }
          : t,
      );
    await writeGguf(out, { kvs: gguf.kvs, tensors: tensors.map(({ name, type, ne }) => ({ name, type, ne })) }, (i) => {
      const t = tensors[i]!;
      if (!t.name.includes('ffn_gate_up_exps')) return [gguf.tensorData(gguf.tensor(t.name)!)];
      const gate = gguf.tensorData(gguf.tensor(t.name.replace('ffn_gate_up_exps', 'ffn_gate_exps'))!);
      const up = gguf.tensorData(gguf.tensor(t.name.replace('ffn_gate_up_exps', 'ffn_up_exps'))!);
      const experts = t.ne[2]!;
      const per = gate.byteLength / experts;
      return Array.from({ length: experts }, (_, e) => [
        gate.subarray(e * per, (e + 1) * per),
        up.subarray(e * per, (e + 1) * per),
      ]).flat();
    });
  } finally {
    file.close();
  }
}

async function allLogits(path: string, ids: readonly number[]): Promise<Float32Array> {
  await engine.load(path, { ctx: 64, maxBatch: 16 });
  const out = new Float32Array(ids.length * TEST_VOCAB);
  await engine.logits(ids, (logits, i) => out.set(logits, i * TEST_VOCAB));
  return out;
}

describe('MoE models', () => {
  let dir: string;
  let f32: string;
  beforeAll(async () => {
    dir = tempDirForSuite();
    f32 = join(dir, 'qwen3moe.gguf');
    await writeRandomModel(f32, QWEN3MOE);
  });

  it('a merged ffn_gate_up_exps gives the same logits, bit for bit, as separate gate and up experts', async () => {
    const { quantized } = await writeQuantizedCopies(f32, 'Q4_K', dir);
    const merged = join(dir, 'merged.gguf');
    await writeMergedCopy(quantized, merged);
    const rng = mulberry32(52);
    const ids = [1, ...Array.from({ length: 39 }, () => 3 + rng.int(TEST_VOCAB - 3))];
    const split = await allLogits(quantized, ids);
    const fused = await allLogits(merged, ids);
    expect(engine.model).toMatchObject({ architecture: 'qwen3moe', experts: 8, expertsUsed: 2 });
    expect(new Uint32Array(fused.buffer)).toEqual(new Uint32Array(split.buffer));
    // Decode (one token per step) follows the same experts: greedy agrees with the prefill logits' argmax.
    const greedy = await engine.generate(ids.slice(0, 8), { maxTokens: 4, stop: [] });
    const prefillTop = (await allLogits(merged, [...ids.slice(0, 8), ...greedy.ids.slice(0, 3)])).subarray(
      7 * TEST_VOCAB,
    );
    for (let i = 0; i < 4; i++) {
      const row = prefillTop.subarray(i * TEST_VOCAB, (i + 1) * TEST_VOCAB);
      expect(greedy.ids[i]).toBe(row.indexOf(Math.max(...row)));
    }
  }, 120_000);

  it('refuses expert tensors that do not match the metadata, naming the tensor', async () => {
    const path = join(dir, 'wrong.gguf');
    const { gguf, file } = openGguf(f32);
    try {
      const kvs = gguf.kvs.map((kv) => (kv.key === 'qwen3moe.expert_feed_forward_length' ? { ...kv, value: 128 } : kv));
      await writeGguf(path, { kvs, tensors: gguf.tensors.map(({ name, type, ne }) => ({ name, type, ne })) }, (i) => [
        gguf.tensorData(gguf.tensors[i]!),
      ]);
    } finally {
      file.close();
    }
    await expect(engine.load(path)).rejects.toThrow(UnsupportedModelError);
    await expect(engine.load(path)).rejects.toThrow(
      /wrong\.gguf: tensor blk\.0\.ffn_gate_exps\.weight has shape \[256, 256, 8\], expected \[256, 128, 8\]/,
    );
  });
});

describe('gufo bench --json on a model with many experts', () => {
  it('bytesPerToken counts the chosen experts only: used/experts of the expert tensors plus the rest', async () => {
    const dir = tempDir();
    const f32 = join(dir, 'mixtral.gguf');
    await writeRandomModel(f32, {
      arch: 'llama',
      nLayer: 2,
      nEmbd: 256,
      nFf: 256,
      nHead: 4,
      nHeadKv: 2,
      nExpert: 32,
      nExpertUsed: 2,
      seed: 53,
    });
    const { quantized } = await writeQuantizedCopies(f32, 'Q8_0', dir);
    const r = gufo(['bench', quantized, '-p', '8', '-n', '4', '--json'], {}, 120_000);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as BenchJson;

    // From the file: expert tensors read at 2/32, the embedding table one row, the rest whole.
    const { gguf, file } = openGguf(quantized);
    let experts = 0;
    let rest = 0;
    try {
      for (const t of gguf.tensors) {
        if (t.name.endsWith('_exps.weight')) experts += t.bytes;
        else if (t.name === 'token_embd.weight') rest += t.bytes / t.ne[1]!;
        else rest += t.bytes;
      }
    } finally {
      file.close();
    }
    const kvPerPosition = 2 * 2 * (2 * 64) * 2; // K and V, 2 layers, 2 KV heads of 64, F16
    const positions = 8 + (doc.genTokens - 1) / 2;
    const expected = rest + (experts * 2) / 32 + positions * kvPerPosition;
    // Repacking pads each tensor by a few bytes at most (Q8_0's scale plane).
    expect(Math.abs(doc.bytesPerToken - expected)).toBeLessThan(64 * gguf.tensors.length);
    expect(doc.bytesPerToken).toBeLessThan(0.2 * doc.memory.fileTensorBytes);
    expect(experts).toBeGreaterThan(0.8 * doc.memory.fileTensorBytes);
  }, 180_000);
});
