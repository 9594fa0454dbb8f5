import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { readHParams, UnsupportedModelError } from '../../src-main/engine/model/hparams';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { modelKvs, modelTensors, type ModelShape } from '../support/test-models';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';

/**
 * A header-only model file (tensors declared, zero-filled): enough for readHParams. `extraKvs`
 * replace the shape's keys of the same name; `omit` names keys to leave out.
 */
async function headerModel(shape: ModelShape, extraKvs: GgufKv[] = [], arch?: string, omit: string[] = []): Promise<string> {
  const path = join(tempDir(), 'm.gguf');
  const f32 = ggmlTypeByName('F32')!;
  const replaced = new Set([...extraKvs.map((kv) => kv.key), ...omit]);
  let kvs = [...modelKvs(shape).filter((kv) => !replaced.has(kv.key)), ...extraKvs];
  if (arch) kvs = kvs.map((kv) => (kv.key === 'general.architecture' ? { ...kv, value: arch } : kv));
  const tensors = modelTensors(shape).map(({ name, ne }) => ({ name, ne, type: f32 }));
  await writeGguf(path, { kvs, tensors }, (i) => [new Uint8Array(tensors[i]!.ne.reduce((a, b) => a * b, 1) * 4)]);
  return path;
}

function hparamsOf(path: string) {
  const { gguf, file } = openGguf(path);
  try {
    return readHParams(gguf);
  } finally {
    file.close();
  }
}

const small: ModelShape = { nLayer: 1, nEmbd: 64, nFf: 128, nHead: 4, nHeadKv: 2 };

describe('readHParams', () => {
  it('reads stories260K as llama.cpp does', () => {
    expect(hparamsOf(STORIES_260K)).toMatchObject({
      arch: 'llama',
      nLayer: 5,
      nEmbd: 64,
      nFf: 172,
      nHead: 8,
      nHeadKv: 4,
      headDim: 8,
      nVocab: 512,
      nCtxTrain: 2048,
      eps: Math.fround(1e-5),
      rope: { nRot: 8, neox: false, freqBase: 10000, freqScale: 1, extFactor: 0 },
      qkvBias: false,
      qkNorm: false,
      tiedEmbeddings: false,
    });
  });

  it('names the supported architectures when the file has another', async () => {
    const path = await headerModel(small, [], 'gpt2');
    expect(() => hparamsOf(path)).toThrow(UnsupportedModelError);
    expect(() => hparamsOf(path)).toThrow(/architecture "gpt2" is not supported; supported: llama, qwen2, qwen3, qwen2moe, qwen3moe/);
  });

  it('dense models have no MoE parameters', () => {
    expect(hparamsOf(STORIES_260K).moe).toBeNull();
  });

  it('MoE: experts, widths, shared expert and weight normalisation per architecture, as llama.cpp', async () => {
    const mixtral = hparamsOf(await headerModel({ ...small, nExpert: 4, nExpertUsed: 2 }));
    expect(mixtral.moe).toEqual({ nExpert: 4, nExpertUsed: 2, nFfExp: 128, nFfShexp: 0, normWeights: true, mergedGateUp: false });
    const q3 = hparamsOf(await headerModel({ ...small, arch: 'qwen3moe', nExpert: 8, nExpertUsed: 2, nFfExp: 32 }));
    expect(q3.moe).toEqual({ nExpert: 8, nExpertUsed: 2, nFfExp: 32, nFfShexp: 0, normWeights: true, mergedGateUp: false });
    expect(q3).toMatchObject({ qkNorm: true, rope: { neox: true } });
    const q2 = hparamsOf(await headerModel({ ...small, arch: 'qwen2moe', nExpert: 8, nExpertUsed: 4, nFfExp: 32, nFfShexp: 96 }));
    expect(q2.moe).toEqual({ nExpert: 8, nExpertUsed: 4, nFfExp: 32, nFfShexp: 96, normWeights: false, mergedGateUp: false });
    expect(q2).toMatchObject({ qkvBias: true, rope: { neox: true } });
    const merged = hparamsOf(await headerModel({ ...small, arch: 'qwen3moe', nExpert: 8, nExpertUsed: 2, mergedGateUp: true }));
    expect(merged.moe?.mergedGateUp).toBe(true);
  });

  it('MoE: expert widths default as llama.cpp\'s; bad expert counts are named', async () => {
    const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
    // Without expert_feed_forward_length, qwen*moe experts are feed_forward_length / expert_used_count wide.
    const noWidth = await headerModel({ ...small, arch: 'qwen3moe', nExpert: 8, nExpertUsed: 4 }, [], undefined, ['qwen3moe.expert_feed_forward_length']);
    expect(hparamsOf(noWidth).moe?.nFfExp).toBe(128 / 4);

    const tooMany = await headerModel({ ...small, nExpert: 4, nExpertUsed: 2 }, [u32('llama.expert_used_count', 5)]);
    expect(() => hparamsOf(tooMany)).toThrow(/llama\.expert_used_count 5 is not between 1 and expert_count 4/);
    const huge = await headerModel({ ...small, arch: 'qwen3moe', nExpert: 2, nExpertUsed: 1 }, [u32('qwen3moe.expert_count', 1024)]);
    expect(() => hparamsOf(huge)).toThrow(/1024 experts per layer are not supported \(at most 512\)/);
    const routersOnly = await headerModel({ ...small, nExpert: 2, nExpertUsed: 1 }, [], undefined, ['llama.expert_count', 'llama.expert_used_count']);
    expect(() => hparamsOf(routersOnly)).toThrow(/llama\.expert_count is missing, but the layers have expert routers/);
  });

  it('qwen2 and qwen3: NeoX RoPE, biases, Q/K norms, head size from key_length', async () => {
    const q2 = hparamsOf(await headerModel({ ...small, arch: 'qwen2', ropeFreqBase: 1e6 }));
    expect(q2).toMatchObject({ arch: 'qwen2', qkvBias: true, qkNorm: false, rope: { neox: true, freqBase: 1e6 } });
    const q3 = hparamsOf(await headerModel({ ...small, arch: 'qwen3', headDim: 32 }));
    expect(q3).toMatchObject({ arch: 'qwen3', qkNorm: true, headDim: 32, rope: { nRot: 32, neox: true } });
    expect(q3.attnScale).toBe(Math.fround(1 / Math.fround(Math.sqrt(32))));
  });

  it('reads linear and YaRN RoPE scaling, and rejects other scaling types', async () => {
    const f32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
    const str = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });
    const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
    const yarn = hparamsOf(
      await headerModel(small, [str('llama.rope.scaling.type', 'yarn'), f32('llama.rope.scaling.factor', 4), u32('llama.rope.scaling.original_context_length', 64)]),
    );
    expect(yarn.rope).toMatchObject({ freqScale: 0.25, extFactor: 1, nCtxOrig: 64, betaFast: 32, betaSlow: 1 });
    const linear = hparamsOf(await headerModel(small, [str('llama.rope.scaling.type', 'linear'), f32('llama.rope.scaling.factor', 2)]));
    expect(linear.rope).toMatchObject({ freqScale: 0.5, extFactor: 0 });
    const path = await headerModel(small, [str('llama.rope.scaling.type', 'longrope')]);
    expect(() => hparamsOf(path)).toThrow(/RoPE scaling "longrope" is not supported/);
  });

  it('ties the output to the embedding when output.weight is missing', async () => {
    expect(hparamsOf(await headerModel({ ...small, tiedEmbeddings: true })).tiedEmbeddings).toBe(true);
  });
});
