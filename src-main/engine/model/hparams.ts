/**
 * Hyper-parameters of a supported architecture, read from GGUF metadata with llama.cpp's keys and
 * defaults (llama-model.cpp, llama-hparams). Anything the engine cannot run is a clear error here,
 * before any GPU memory is touched.
 */
import type { GgufFile } from '../../core/gguf/gguf-file';
import { GgufType } from '../../core/gguf/values';

export const SUPPORTED_ARCHITECTURES = ['llama', 'qwen2', 'qwen3', 'qwen2moe', 'qwen3moe'] as const;
export type Architecture = (typeof SUPPORTED_ARCHITECTURES)[number];

export class UnsupportedModelError extends Error {
  override readonly name = 'UnsupportedModelError';
}

export interface RopeParams {
  /** Dimensions rotated per head (rope.dimension_count). */
  nRot: number;
  /** NeoX style rotates (i, i + nRot/2) rather than (2i, 2i+1). */
  neox: boolean;
  freqBase: number;
  /** 1 / rope.scaling.factor for linear and YaRN scaling, else 1. */
  freqScale: number;
  /** YaRN: 1 when the file asks for it, else 0. */
  extFactor: number;
  attnFactor: number;
  betaFast: number;
  betaSlow: number;
  /** Context the model was trained with, before scaling (YaRN's corrections use it). */
  nCtxOrig: number;
}

/**
 * A mixture-of-experts FFN (llama.cpp's build_moe_ffn with softmax gating): the router
 * (ffn_gate_inp) scores every expert, the nExpertUsed most probable run, and their outputs are
 * summed weighted by their probabilities.
 */
export interface MoeParams {
  /** Experts per layer ({arch}.expert_count). */
  nExpert: number;
  /** Experts each token runs ({arch}.expert_used_count). */
  nExpertUsed: number;
  /** Rows of each expert's gate and up matrices. */
  nFfExp: number;
  /**
   * Width of the shared expert every token also runs, scaled by sigmoid(ffn_gate_inp_shexp · x)
   * (qwen2moe); 0 when there is none.
   */
  nFfShexp: number;
  /**
   * The chosen experts' probabilities are divided by their sum (llama/Mixtral, qwen3moe; not
   * qwen2moe). llama.cpp fixes this per architecture and reads no expert_weights_norm/scale key
   * for these three, so neither does the engine.
   */
  normWeights: boolean;
  /** Gate and up stacked in one ffn_gate_up_exps tensor (gate rows first) instead of two. */
  mergedGateUp: boolean;
}

/** Most experts per layer the routing kernels hold (shaders/moe.wgsl's MAX_EXPERTS). */
export const MAX_EXPERTS = 512;

export interface HParams {
  arch: Architecture;
  name: string | null;
  nLayer: number;
  nEmbd: number;
  nFf: number;
  nHead: number;
  nHeadKv: number;
  /** Key/query head size. */
  headDim: number;
  /** Value head size (equal to headDim for every supported architecture). */
  headDimV: number;
  nVocab: number;
  /** Context length the model was trained for. */
  nCtxTrain: number;
  eps: number;
  rope: RopeParams;
  /** Attention logits scale, 1/sqrt(headDim). */
  attnScale: number;
  /** Q, K and V projections carry biases (qwen2). */
  qkvBias: boolean;
  /** Per-head RMSNorm of Q and K before RoPE (qwen3). */
  qkNorm: boolean;
  /** No output.weight: the output projection reuses token_embd. */
  tiedEmbeddings: boolean;
  /** A rope_freqs.weight tensor scales RoPE frequencies (Llama 3.1+). */
  ropeFreqs: boolean;
  /** Mixture-of-experts FFN in every layer; null for a dense model. */
  moe: MoeParams | null;
}

/** A per-layer value that must be the same in every layer (arrays of equal entries are accepted). */
function uniformPerLayer(gguf: GgufFile, key: string): number | undefined {
  const scalar = gguf.getNumber(key);
  if (scalar !== undefined) return scalar;
  const array = gguf.getArray(key);
  if (!array || array.itemType === GgufType.STRING || array.itemType === GgufType.ARRAY) return undefined;
  const values = Array.from(array.items, Number);
  if (values.some((v) => v !== values[0])) {
    throw new UnsupportedModelError(`${gguf.file}: ${key} differs between layers (${values.join(', ')}), which is not supported yet`);
  }
  return values[0];
}

export function readHParams(gguf: GgufFile): HParams {
  const fail = (problem: string): never => {
    throw new UnsupportedModelError(`${gguf.file}: ${problem}`);
  };
  const arch = gguf.getString('general.architecture') ?? fail('no general.architecture in the metadata');
  if (!(SUPPORTED_ARCHITECTURES as readonly string[]).includes(arch)) {
    fail(`architecture "${arch}" is not supported; supported: ${SUPPORTED_ARCHITECTURES.join(', ')}`);
  }
  const num = (key: string, fallback?: number): number => {
    const v = uniformPerLayer(gguf, `${arch}.${key}`) ?? fallback;
    return v ?? fail(`${arch}.${key} is missing`);
  };
  const nEmbd = num('embedding_length');
  const nHead = num('attention.head_count');
  const nHeadKv = num('attention.head_count_kv', nHead);
  const headDim = num('attention.key_length', nEmbd / nHead);
  const headDimV = num('attention.value_length', headDim);
  if (!Number.isInteger(headDim) || headDim !== headDimV) fail(`head sizes ${headDim} (keys) and ${headDimV} (values) are not supported`);
  if (nHeadKv <= 0 || nHead % nHeadKv !== 0) fail(`${nHead} heads cannot share ${nHeadKv} KV heads`);

  const embd = gguf.tensor('token_embd.weight') ?? fail('no token_embd.weight tensor');
  const nVocab = embd.ne[1] ?? fail('token_embd.weight is not a matrix');

  const scalingType = gguf.getString(`${arch}.rope.scaling.type`) ?? 'none';
  const scalingFactor = gguf.getNumber(`${arch}.rope.scaling.factor`) ?? 0;
  const freqScale = (scalingType === 'linear' || scalingType === 'yarn') && scalingFactor > 0 ? 1 / scalingFactor : 1;
  if (!['none', 'linear', 'yarn'].includes(scalingType)) fail(`RoPE scaling "${scalingType}" is not supported`);
  const nCtxTrain = num('context_length', 4096);
  const rope: RopeParams = {
    nRot: num('rope.dimension_count', headDim),
    neox: arch !== 'llama',
    freqBase: num('rope.freq_base', 10000),
    freqScale,
    extFactor: scalingType === 'yarn' ? 1 : 0,
    attnFactor: gguf.getNumber(`${arch}.rope.scaling.attn_factor`) ?? 1,
    betaFast: gguf.getNumber(`${arch}.rope.scaling.yarn_beta_fast`) ?? 32,
    betaSlow: gguf.getNumber(`${arch}.rope.scaling.yarn_beta_slow`) ?? 1,
    nCtxOrig: gguf.getNumber(`${arch}.rope.scaling.original_context_length`) ?? nCtxTrain,
  };
  if (rope.nRot > headDim || rope.nRot % 2 !== 0) fail(`RoPE over ${rope.nRot} of ${headDim} dimensions is not supported`);
  const moe = readMoe(gguf, arch as Architecture, num, fail);

  return {
    arch: arch as Architecture,
    name: gguf.getString('general.name') ?? null,
    nLayer: num('block_count'),
    nEmbd,
    // MoE models may omit it (llama.cpp's default is 0): their FFN widths are the experts'.
    nFf: num('feed_forward_length', moe ? 0 : undefined),
    nHead,
    nHeadKv,
    headDim,
    headDimV,
    nVocab,
    nCtxTrain,
    eps: num('attention.layer_norm_rms_epsilon', 1e-5),
    rope,
    // As llama.cpp computes it in float: 1.0f / sqrtf(n_embd_head).
    attnScale: Math.fround(1 / Math.fround(Math.sqrt(headDim))),
    qkvBias: gguf.tensor('blk.0.attn_q.bias') !== undefined,
    qkNorm: gguf.tensor('blk.0.attn_q_norm.weight') !== undefined,
    tiedEmbeddings: gguf.tensor('output.weight') === undefined,
    ropeFreqs: gguf.tensor('rope_freqs.weight') !== undefined,
    moe,
  };
}

/**
 * The MoE parameters as llama.cpp reads them: llama is MoE when it has expert_count (Mixtral),
 * qwen2moe/qwen3moe always are; expert widths default to feed_forward_length / expert_used_count
 * (qwen*moe) or feed_forward_length (llama, and qwen2moe's shared expert).
 */
function readMoe(
  gguf: GgufFile,
  arch: Architecture,
  num: (key: string, fallback?: number) => number,
  fail: (problem: string) => never,
): MoeParams | null {
  const nExpert = num('expert_count', 0);
  const isMoeArch = arch === 'qwen2moe' || arch === 'qwen3moe';
  if (!isMoeArch && (arch !== 'llama' || nExpert === 0)) {
    if (gguf.tensor('blk.0.ffn_gate_inp.weight')) fail(`${arch}.expert_count is missing, but the layers have expert routers (ffn_gate_inp)`);
    return null;
  }
  if (nExpert <= 0) fail(`${arch}.expert_count is missing or 0`);
  if (nExpert > MAX_EXPERTS) fail(`${nExpert} experts per layer are not supported (at most ${MAX_EXPERTS})`);
  const nExpertUsed = num('expert_used_count', 0);
  if (nExpertUsed <= 0 || nExpertUsed > nExpert) fail(`${arch}.expert_used_count ${nExpertUsed} is not between 1 and expert_count ${nExpert}`);
  const nFf = num('feed_forward_length', 0);
  const nFfExp = isMoeArch ? num('expert_feed_forward_length', Math.floor(nFf / nExpertUsed)) : nFf;
  if (nFfExp <= 0) fail(`${arch}: no expert width (expert_feed_forward_length or feed_forward_length)`);
  const nFfShexp = arch === 'qwen2moe' ? num('expert_shared_feed_forward_length', nFf) : 0;
  if (arch === 'qwen2moe' && nFfShexp <= 0) fail(`${arch}: no shared expert width (expert_shared_feed_forward_length or feed_forward_length)`);
  return {
    nExpert,
    nExpertUsed,
    nFfExp,
    nFfShexp,
    normWeights: arch !== 'qwen2moe',
    mergedGateUp: gguf.tensor('blk.0.ffn_gate_up_exps.weight') !== undefined,
  };
}
