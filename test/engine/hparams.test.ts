import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { readHParams, ropeFactorsTensor, UnsupportedModelError } from '../../src-main/engine/model/hparams';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { modelKvs, modelTensors, type ModelShape } from '../support/test-models';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';

/**
 * A header-only model file (tensors declared, zero-filled): enough for readHParams. `extraKvs`
 * replace the shape's keys of the same name; `omit` names keys (and tensors) to leave out;
 * `extraTensors` are added.
 */
async function headerModel(
  shape: ModelShape,
  extraKvs: GgufKv[] = [],
  arch?: string,
  omit: string[] = [],
  extraTensors: { name: string; ne: number[] }[] = [],
): Promise<string> {
  const path = join(tempDir(), 'm.gguf');
  const f32 = ggmlTypeByName('F32')!;
  const replaced = new Set([...extraKvs.map((kv) => kv.key), ...omit]);
  let kvs = [...modelKvs(shape).filter((kv) => !replaced.has(kv.key)), ...extraKvs];
  if (arch) kvs = kvs.map((kv) => (kv.key === 'general.architecture' ? { ...kv, value: arch } : kv));
  const tensors = [...modelTensors(shape).filter((t) => !omit.includes(t.name)), ...extraTensors].map(
    ({ name, ne }) => ({ name, ne, type: f32 }),
  );
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
const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
const f32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
const str = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });
const inFloat = (x: number) => Math.fround(1 / Math.fround(Math.sqrt(x)));
/** The MoE gating of every architecture but gpt-oss. */
const softmaxGating = { gating: 'softmax', biases: false, act: 'silu' } as const;

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
    expect(() => hparamsOf(path)).toThrow(
      /architecture "gpt2" is not supported; supported: llama, qwen2, qwen3, qwen2moe, qwen3moe, gemma2, gemma3, phi3/,
    );
  });

  it('dense models have no MoE parameters', () => {
    expect(hparamsOf(STORIES_260K).moe).toBeNull();
  });

  it('MoE: experts, widths, shared expert and weight normalisation per architecture, as llama.cpp', async () => {
    const mixtral = hparamsOf(await headerModel({ ...small, nExpert: 4, nExpertUsed: 2 }));
    expect(mixtral.moe).toEqual({
      nExpert: 4,
      nExpertUsed: 2,
      nFfExp: 128,
      nFfShexp: 0,
      normWeights: true,
      mergedGateUp: false,
      ...softmaxGating,
    });
    const q3 = hparamsOf(await headerModel({ ...small, arch: 'qwen3moe', nExpert: 8, nExpertUsed: 2, nFfExp: 32 }));
    expect(q3.moe).toEqual({
      nExpert: 8,
      nExpertUsed: 2,
      nFfExp: 32,
      nFfShexp: 0,
      normWeights: true,
      mergedGateUp: false,
      ...softmaxGating,
    });
    expect(q3).toMatchObject({ qkNorm: true, rope: { neox: true } });
    const q2 = hparamsOf(
      await headerModel({ ...small, arch: 'qwen2moe', nExpert: 8, nExpertUsed: 4, nFfExp: 32, nFfShexp: 96 }),
    );
    expect(q2.moe).toEqual({
      nExpert: 8,
      nExpertUsed: 4,
      nFfExp: 32,
      nFfShexp: 96,
      normWeights: false,
      mergedGateUp: false,
      ...softmaxGating,
    });
    expect(q2).toMatchObject({ qkvBias: true, rope: { neox: true } });
    const merged = hparamsOf(
      await headerModel({ ...small, arch: 'qwen3moe', nExpert: 8, nExpertUsed: 2, mergedGateUp: true }),
    );
    expect(merged.moe?.mergedGateUp).toBe(true);
  });

  it("MoE: expert widths default as llama.cpp's; bad expert counts are named", async () => {
    // Without expert_feed_forward_length, qwen*moe experts are feed_forward_length / expert_used_count wide.
    const noWidth = await headerModel({ ...small, arch: 'qwen3moe', nExpert: 8, nExpertUsed: 4 }, [], undefined, [
      'qwen3moe.expert_feed_forward_length',
    ]);
    expect(hparamsOf(noWidth).moe?.nFfExp).toBe(128 / 4);

    const tooMany = await headerModel({ ...small, nExpert: 4, nExpertUsed: 2 }, [u32('llama.expert_used_count', 5)]);
    expect(() => hparamsOf(tooMany)).toThrow(/llama\.expert_used_count 5 is not between 1 and expert_count 4/);
    const huge = await headerModel({ ...small, arch: 'qwen3moe', nExpert: 2, nExpertUsed: 1 }, [
      u32('qwen3moe.expert_count', 1024),
    ]);
    expect(() => hparamsOf(huge)).toThrow(/1024 experts per layer are not supported \(at most 512\)/);
    const routersOnly = await headerModel({ ...small, nExpert: 2, nExpertUsed: 1 }, [], undefined, [
      'llama.expert_count',
      'llama.expert_used_count',
    ]);
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
    const yarn = hparamsOf(
      await headerModel(small, [
        str('llama.rope.scaling.type', 'yarn'),
        f32('llama.rope.scaling.factor', 4),
        u32('llama.rope.scaling.original_context_length', 64),
      ]),
    );
    expect(yarn.rope).toMatchObject({ freqScale: 0.25, extFactor: 1, nCtxOrig: 64, betaFast: 32, betaSlow: 1 });
    const linear = hparamsOf(
      await headerModel(small, [str('llama.rope.scaling.type', 'linear'), f32('llama.rope.scaling.factor', 2)]),
    );
    expect(linear.rope).toMatchObject({ freqScale: 0.5, extFactor: 0 });
    const path = await headerModel(small, [str('llama.rope.scaling.type', 'longrope')]);
    expect(() => hparamsOf(path)).toThrow(/RoPE scaling "longrope" is not supported/);
    // As llama.cpp, a factor without a type scales linearly (the type defaults to linear), and none ignores it.
    expect(hparamsOf(await headerModel(small, [f32('llama.rope.scaling.factor', 4)])).rope.freqScale).toBe(0.25);
    expect(
      hparamsOf(await headerModel(small, [f32('llama.rope.scaling.factor', 4), str('llama.rope.scaling.type', 'none')]))
        .rope.freqScale,
    ).toBe(1);
  });

  it('ties the output to the embedding when output.weight is missing', async () => {
    expect(hparamsOf(await headerModel({ ...small, tiedEmbeddings: true })).tiedEmbeddings).toBe(true);
  });

  it("gemma2: llama.cpp's defaults (window 4096 every other layer, soft-caps 50 and 30, GeGLU, post-norms, scaled embeddings)", async () => {
    const hp = hparamsOf(await headerModel({ ...small, arch: 'gemma2', nLayer: 5, headDim: 32 }));
    expect(hp).toMatchObject({
      arch: 'gemma2',
      attnSoftcap: 50,
      finalSoftcap: 30,
      embdScale: 8,
      postNorms: true,
      ffnAct: 'gelu',
      ffnGateUpFused: false,
      qkvFused: false,
      qkNorm: false,
      tiedEmbeddings: true,
      rope: { neox: true },
    });
    expect(hp.attnScale).toBe(inFloat(32));
    // set_swa_pattern(2): the last layer of each period of 2 attends to everything.
    expect(hp.swa).toMatchObject({ window: 4096, layers: [true, false, true, false, true] });
    expect(hp.swa!.rope).toEqual(hp.rope);
  });

  it("gemma2: the file's window, pattern, soft-caps and SWA RoPE base; the 27B query scale keyed on 46 layers", async () => {
    const keys = [
      u32('gemma2.attention.sliding_window', 8),
      u32('gemma2.attention.sliding_window_pattern', 3),
      f32('gemma2.attn_logit_softcapping', 1.5),
      f32('gemma2.final_logit_softcapping', 4),
      f32('gemma2.rope.freq_base_swa', 5000),
    ];
    const hp = hparamsOf(await headerModel({ ...small, arch: 'gemma2', nLayer: 4 }, keys));
    expect(hp).toMatchObject({
      attnSoftcap: 1.5,
      finalSoftcap: 4,
      swa: { window: 8, layers: [true, true, false, true], rope: { freqBase: 5000 } },
    });
    expect(hp.rope.freqBase).toBe(10000);
    // 27B: 1/sqrt(n_embd / n_head) (here 64 / 4 = 16) instead of 1/sqrt(head size 32).
    const big = hparamsOf(await headerModel({ ...small, arch: 'gemma2', nLayer: 46, headDim: 32 }));
    expect(big.attnScale).toBe(inFloat(16));
    // A pattern given per layer (an array) is ignored, as llama.cpp's get_key_or_arr does for a scalar.
    const items = Uint32Array.of(0, 0, 0);
    const arrayPattern: GgufKv = {
      key: 'gemma2.attention.sliding_window_pattern',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.UINT32, items },
    };
    expect(hparamsOf(await headerModel({ ...small, arch: 'gemma2', nLayer: 3 }, [arrayPattern])).swa?.layers).toEqual([
      true,
      false,
      true,
    ]);
  });

  it('gemma3: no sliding window unless the file has one; then 5 of 6 layers, their RoPE on base 10000 unscaled', async () => {
    const plain = hparamsOf(await headerModel({ ...small, arch: 'gemma3', headDim: 32, ropeFreqBase: 1e6 }));
    expect(plain).toMatchObject({
      arch: 'gemma3',
      swa: null,
      finalSoftcap: 0,
      attnSoftcap: 0,
      qkNorm: true,
      postNorms: true,
      ffnAct: 'gelu',
      tiedEmbeddings: false,
    });
    const shape: ModelShape = {
      ...small,
      arch: 'gemma3',
      nLayer: 7,
      ropeFreqBase: 1e6,
      ropeScaling: { type: 'linear', factor: 8 },
      slidingWindow: 512,
    };
    const hp = hparamsOf(await headerModel(shape));
    expect(hp.rope).toMatchObject({ freqBase: 1e6, freqScale: 0.125 });
    expect(hp.swa).toMatchObject({
      window: 512,
      layers: [true, true, true, true, true, false, true],
      rope: { freqBase: 10000, freqScale: 1 },
    });
    const keyed = hparamsOf(
      await headerModel({ ...shape, finalSoftcap: 30 }, [f32('gemma3.rope.freq_base_swa', 20000)]),
    );
    expect(keyed).toMatchObject({ finalSoftcap: 30, swa: { rope: { freqBase: 20000 } } });
    // Pattern 0: every layer windowed.
    expect(hparamsOf(await headerModel({ ...shape, nLayer: 2, slidingWindowPattern: 0 })).swa?.layers).toEqual([
      true,
      true,
    ]);
    expect(hparamsOf(await headerModel({ ...small, arch: 'gemma3', nLayer: 62, headDim: 32 })).attnScale).toBe(
      inFloat(16),
    );
  });

  it('phi3: fused gate/up, fused or separate Q/K/V, sliding window disabled, LongRoPE factors by context', async () => {
    const fused = hparamsOf(
      await headerModel({
        ...small,
        arch: 'phi3',
        fusedQkv: true,
        slidingWindow: 2047,
        contextLength: 131072,
        longRope: { originalContext: 4096, attnFactor: 1.19 },
      }),
    );
    expect(fused).toMatchObject({
      arch: 'phi3',
      qkvFused: true,
      qkvBias: false,
      ffnGateUpFused: true,
      ffnAct: 'silu',
      swa: null,
      embdScale: 1,
      postNorms: false,
    });
    expect(fused.rope).toMatchObject({ neox: true, attnFactor: Math.fround(1.19), nCtxOrig: 4096, freqScale: 1 });
    expect(fused.ropeFactors).toEqual({ short: 'rope_factors_short.weight', long: 'rope_factors_long.weight' });
    // llama.cpp picks by its context rounded up to 256: 4096 → short, 4097 → 4352 → long.
    expect(ropeFactorsTensor(fused, 4096)).toBe('rope_factors_short.weight');
    expect(ropeFactorsTensor(fused, 4097)).toBe('rope_factors_long.weight');
    const separate = hparamsOf(await headerModel({ ...small, arch: 'phi3', nRot: 8 }));
    expect(separate).toMatchObject({ qkvFused: false, ropeFactors: null, rope: { nRot: 8 } });
    expect(ropeFactorsTensor(separate, 100000)).toBeNull();
    // "longrope" as a scaling type is phi3's.
    expect(
      hparamsOf(await headerModel({ ...small, arch: 'phi3' }, [str('phi3.rope.scaling.type', 'longrope')])).rope
        .freqScale,
    ).toBe(1);
  });

  it('gpt-oss: softmax_weight gating, biased experts, SwiGLU-OAI, sinks, FFN norm post_attention_norm, every other layer windowed', async () => {
    const shape: ModelShape = {
      ...small,
      arch: 'gpt-oss',
      nLayer: 4,
      headDim: 32,
      nExpert: 8,
      nExpertUsed: 2,
      nFfExp: 48,
      slidingWindow: 128,
      ropeFreqBase: 150000,
    };
    const hp = hparamsOf(await headerModel(shape));
    expect(hp).toMatchObject({
      arch: 'gpt-oss',
      headDim: 32,
      qkvBias: true,
      attnOutputBias: true,
      attnSinks: true,
      ffnNorm: 'post_attention_norm',
      postNorms: false,
      rope: { neox: true, freqBase: 150000 },
      // llama.cpp: 1/sqrt(n_rot), with n_rot the head size unless rope.dimension_count says otherwise.
      attnScale: inFloat(32),
      swa: { window: 128, layers: [true, false, true, false], rope: { freqBase: 150000 } },
    });
    expect(hp.moe).toEqual({
      nExpert: 8,
      nExpertUsed: 2,
      nFfExp: 48,
      nFfShexp: 0,
      normWeights: false,
      mergedGateUp: false,
      gating: 'softmax_weight',
      biases: true,
      act: 'swiglu_oai',
    });
    // The windowed layers' RoPE base from rope.freq_base_swa, scaled as the others (YaRN here).
    const yarn = hparamsOf(
      await headerModel({ ...shape, ropeScaling: { type: 'yarn', factor: 32 } }, [
        f32('gpt-oss.rope.freq_base_swa', 5000),
        u32('gpt-oss.attention.sliding_window_pattern', 4),
      ]),
    );
    expect(yarn.swa).toMatchObject({
      layers: [true, true, true, false],
      rope: { freqBase: 5000, freqScale: 1 / 32, extFactor: 1 },
    });
    // llama.cpp requires the window and the expert width.
    const noWindow = await headerModel(shape, [], undefined, ['gpt-oss.attention.sliding_window']);
    expect(() => hparamsOf(noWindow)).toThrow(/gpt-oss\.attention\.sliding_window is missing/);
    const noWidth = await headerModel(shape, [], undefined, ['gpt-oss.expert_feed_forward_length']);
    expect(() => hparamsOf(noWidth)).toThrow(/gpt-oss\.expert_feed_forward_length is missing/);
    // attn_output.bias: llama.cpp adds it for llama when present, never for qwen2.
    const bias = [{ name: 'blk.0.attn_output.bias', ne: [64] }];
    expect(hparamsOf(await headerModel(small, [], undefined, [], bias)).attnOutputBias).toBe(true);
    expect(hparamsOf(await headerModel({ ...small, arch: 'qwen2' }, [], undefined, [], bias)).attnOutputBias).toBe(
      false,
    );
    expect(hparamsOf(STORIES_260K)).toMatchObject({ attnOutputBias: false, attnSinks: false, ffnNorm: 'ffn_norm' });
  });

  it('names what stays unsupported: embedding models, half a LongRoPE pair, a zero window', async () => {
    const dense = await headerModel(
      { ...small, arch: 'gemma3' },
      [],
      undefined,
      [],
      [{ name: 'dense_2.weight', ne: [64, 256] }],
    );
    expect(() => hparamsOf(dense)).toThrow(
      /m\.gguf: dense_2\.weight is a sentence-embedding projection \(EmbeddingGemma\)/,
    );
    const nonCausal = await headerModel({ ...small, arch: 'gemma3' }, [
      { key: 'gemma3.attention.causal', type: GgufType.BOOL, value: false },
    ]);
    expect(() => hparamsOf(nonCausal)).toThrow(/non-causal attention \(an embedding model\) is not supported/);
    const half = await headerModel(
      { ...small, arch: 'phi3', longRope: { originalContext: 64, attnFactor: 1 } },
      [],
      undefined,
      ['rope_factors_short.weight'],
    );
    expect(() => hparamsOf(half)).toThrow(
      /LongRoPE needs both rope_factors_long and rope_factors_short; the file has only long/,
    );
    const zero = await headerModel({ ...small, arch: 'gemma2', slidingWindow: 0 });
    expect(() => hparamsOf(zero)).toThrow(UnsupportedModelError);
    expect(() => hparamsOf(zero)).toThrow(/gemma2\.attention\.sliding_window is 0/);
  });
});
