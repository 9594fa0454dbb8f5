/**
 * Hyper-parameters of a supported architecture, read from GGUF metadata with llama.cpp's keys and
 * defaults (llama-model.cpp, llama-hparams). Anything the engine cannot run is a clear error here,
 * before any GPU memory is touched.
 */
import {
  ARCHITECTURES,
  isArchitectureName,
  unsupportedArchitectureMessage,
  type ArchitectureName,
  type ArchitectureTraits,
  type EncoderTraits,
} from '../../core/architectures';
import { GgufError } from '../../core/gguf/errors';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { readCount, readFiniteNumber, readLayerCount, readPerLayerCount } from '../../core/gguf/metadata-counts';
import { slidingWindowLayout, type SlidingWindowLayout } from '../../core/sliding-window';
import { tensorName } from '../../core/tensor-names';

export class UnsupportedModelError extends Error {
  override readonly name = 'UnsupportedModelError';
}

export interface RopeParams {
  /** Dimensions rotated per head (rope.dimension_count). */
  nRot: number;
  /** NeoX style rotates (i, i + nRot/2) rather than (2i, 2i+1). */
  neox: boolean;
  freqBase: number;
  /** 1 / rope.scaling.factor unless the scaling type is none, else 1. */
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
 * A mixture-of-experts FFN (llama.cpp's build_moe_ffn): the router (ffn_gate_inp) scores every
 * expert, the nExpertUsed best run, and their outputs are summed weighted by the gating.
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
   * qwen2moe, gpt-oss). llama.cpp fixes this per architecture and reads no expert_weights_norm/scale
   * key for these four, so neither does the engine.
   */
  normWeights: boolean;
  /** Gate and up stacked in one ffn_gate_up_exps tensor (gate rows first) instead of two. */
  mergedGateUp: boolean;
  /**
   * 'softmax': the experts with the most probable softmax(logits) run, weighted by those
   * probabilities; 'softmax_weight' (gpt-oss): the experts with the largest logits run, weighted
   * by the softmax of their logits alone (llama.cpp's LLAMA_EXPERT_GATING_FUNC_TYPE_SOFTMAX_WEIGHT).
   */
  gating: 'softmax' | 'softmax_weight';
  /** gpt-oss: biases on the router's logits and on each expert's gate, up and down outputs. */
  biases: boolean;
  /**
   * The experts' activation: silu(gate)·up, or gpt-oss's SwiGLU-OAI,
   * min(gate, 7)·sigmoid(1.702·min(gate, 7))·(clamp(up, ±7) + 1).
   */
  act: 'silu' | 'swiglu_oai';
}

/**
 * Sliding-window attention (llama.cpp's LLAMA_SWA_TYPE_STANDARD): in the windowed layers a query
 * at position p sees only the keys at p − window + 1 ..= p.
 */
export interface SlidingWindow extends SlidingWindowLayout {
  /** RoPE of the windowed layers (gemma3: its own base, unscaled). */
  rope: RopeParams;
}

/**
 * Tensors whose values divide RoPE's angles pair by pair: rope_freqs (Llama 3.1+) for any context,
 * or phi3's LongRoPE factors, `long` when the context exceeds the original one (ropeFactorsTensor).
 */
export interface RopeFactors {
  short: string;
  long: string;
}

/** Most experts per layer the routing kernels hold (shaders/moe.wgsl's MAX_EXPERTS). */
export const MAX_EXPERTS = 512;

export interface HParams {
  arch: ArchitectureName;
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
  /** Attention logits scale: 1/sqrt(headDim), or gemma's f_attention_scale. */
  attnScale: number;
  /** Q, K and V projections carry biases (qwen2; attn_qkv.bias when fused). */
  qkvBias: boolean;
  /** One attn_qkv tensor, its rows Q then K then V, instead of attn_q, attn_k, attn_v (phi3). */
  qkvFused: boolean;
  /** Per-head RMSNorm of Q and K before RoPE (qwen3, gemma3). */
  qkNorm: boolean;
  /** No output.weight: the output projection reuses token_embd (always for gemma2, as llama.cpp). */
  tiedEmbeddings: boolean;
  ropeFactors: RopeFactors | null;
  /** gemma: the embeddings are multiplied by sqrt(nEmbd) after the lookup; 1 otherwise. */
  embdScale: number;
  /** gemma2/3: each block's output is RMS-normed (post_attention_norm, post_ffw_norm) before the residual add. */
  postNorms: boolean;
  /** The FFN's input norm: ffn_norm, or gpt-oss's post_attention_norm (which llama.cpp uses as such). */
  ffnNorm: 'ffn_norm' | 'post_attention_norm';
  /** attn_output carries a bias: gpt-oss always, llama when the file has one (as llama.cpp loads it). */
  attnOutputBias: boolean;
  /** gpt-oss: a learned logit per head (attn_sinks) that joins each attention softmax's denominator. */
  attnSinks: boolean;
  /** Gated FFN: silu(gate)·up (SwiGLU), or gelu(gate)·up (gemma's GeGLU, tanh approximation). */
  ffnAct: 'silu' | 'gelu';
  /** phi3: no ffn_gate; ffn_up has 2·nFf rows, the gate's half first. */
  ffnGateUpFused: boolean;
  /** Attention scores s become c·tanh(s/c) before the softmax (gemma2, c = 50 by default); 0: off. */
  attnSoftcap: number;
  /** The same on the output logits (gemma2: 30 by default; gemma3 only when the file says); 0: off. */
  finalSoftcap: number;
  /** null: every layer attends to the whole context. */
  swa: SlidingWindow | null;
  /** Mixture-of-experts FFN in every layer; null for a dense model. */
  moe: MoeParams | null;
  /** An encoder (bert): embeds only, bidirectional attention; null for a decoder. */
  encoder: EncoderTraits | null;
}

/** A per-layer count that must be the same in every layer (arrays of equal entries are accepted). */
function uniformPerLayer(gguf: GgufFile, key: string, nLayer: number): number | undefined {
  const value = readPerLayerCount(gguf, key, nLayer);
  if (typeof value !== 'object') return value;
  if (value.some((v) => v !== value[0])) {
    throw new UnsupportedModelError(
      `${gguf.file}: ${key} differs between layers (${value.join(', ')}), which is not supported yet`,
    );
  }
  return value[0];
}

/** Reads `{arch}.<key>`, or the fallback when absent; fails when both are missing. */
type Num = (key: string, fallback?: number) => number;
type Fail = (problem: string) => never;

/** The two kinds of hyper-parameter, each checked as it is read (core/gguf/metadata-counts.ts). */
interface Readers {
  /** Whole numbers: counts and sizes, per layer or not. */
  count: Num;
  /** Floats: epsilons, RoPE bases and factors, soft-caps. */
  real: Num;
}

export function readHParams(gguf: GgufFile): HParams {
  const fail: Fail = (problem) => {
    throw new UnsupportedModelError(`${gguf.file}: ${problem}`);
  };
  const arch = gguf.getString('general.architecture') ?? fail('no general.architecture in the metadata');
  if (!isArchitectureName(arch)) fail(unsupportedArchitectureMessage(arch));
  const traits: ArchitectureTraits = ARCHITECTURES[arch];
  // Every other count is checked against it, so it is read first.
  const nLayer = readLayerCount(gguf, arch) ?? fail(`${arch}.block_count is missing`);
  const orFail = (key: string, v: number | undefined) => v ?? fail(`${arch}.${key} is missing`);
  const num: Num = (key, fallback) => orFail(key, uniformPerLayer(gguf, `${arch}.${key}`, nLayer) ?? fallback);
  const real: Num = (key, fallback) => orFail(key, readFiniteNumber(gguf, `${arch}.${key}`) ?? fallback);
  const read: Readers = { count: num, real };
  const has = (name: string) => gguf.tensor(name) !== undefined;
  const embdName = tensorName('token_embd');
  const embd = gguf.tensor(embdName) ?? fail(`no ${embdName} tensor`);
  const nEmbd = num('embedding_length');
  // llama.cpp's shape for it: the width every activation is sized by must be the file's.
  if (embd.ne[0] !== nEmbd) fail(`${arch}.embedding_length is ${nEmbd}, but ${embdName} has rows of ${embd.ne[0]}`);
  const nHead = num('attention.head_count');
  if (nHead === 0) fail(`${arch}.attention.head_count is 0`);
  const nHeadKv = num('attention.head_count_kv', nHead);
  const headDim = num('attention.key_length', nEmbd / nHead);
  const headDimV = num('attention.value_length', headDim);
  if (!Number.isInteger(headDim))
    fail(`${arch}.embedding_length ${nEmbd} is not a multiple of ${arch}.attention.head_count ${nHead}`);
  if (headDim !== headDimV)
    fail(`${arch}.attention.value_length: head sizes ${headDim} (keys) and ${headDimV} (values) are not supported`);
  if (nHeadKv <= 0 || nHead % nHeadKv !== 0)
    fail(`${arch}.attention.head_count_kv: ${nHead} heads cannot share ${nHeadKv} KV heads`);
  if (!traits.encoder && gguf.get(`${arch}.attention.causal`) === false)
    fail(`non-causal attention (an embedding model) is not supported for ${arch}, a decoder architecture`);
  for (const name of [tensorName('dense_2'), tensorName('dense_3')]) {
    if (has(name))
      fail(`${name} is a sentence-embedding projection (EmbeddingGemma); embedding models are not supported`);
  }

  const nVocab = embd.ne[1] ?? fail(`${embdName} is not a matrix`);
  const nCtxTrain = num('context_length', 4096);
  const rope = readRope(gguf, arch, traits, read, fail, headDim, nCtxTrain);
  const moe = readMoe(gguf, arch, traits, num, fail);
  const qkvFused = has(tensorName('attn_qkv', 0));
  const qkNorm = has(tensorName('attn_q_norm', 0));
  const softcap = (key: string, fallback: number | null) => (fallback === null ? 0 : real(key, fallback));
  if (qkvFused && qkNorm) fail('a fused attn_qkv with Q/K norms is not supported');

  return {
    arch,
    name: gguf.getString('general.name') ?? null,
    nLayer,
    nEmbd,
    // MoE models may omit it (llama.cpp's default is 0): their FFN widths are the experts'.
    nFf: num('feed_forward_length', moe ? 0 : undefined),
    nHead,
    nHeadKv,
    headDim,
    headDimV,
    nVocab,
    nCtxTrain,
    // llama.cpp requires an encoder's LayerNorm epsilon; RMSNorm's defaults to 1e-5.
    eps: real(traits.normEpsKey, traits.encoder ? undefined : 1e-5),
    rope,
    attnScale: attentionScale(traits, nLayer, nEmbd, nHead, traits.attnScaleDims === 'rope' ? rope.nRot : headDim),
    qkvBias: has(tensorName(qkvFused ? 'attn_qkv' : 'attn_q', 0, 'bias')),
    qkvFused,
    qkNorm,
    tiedEmbeddings: traits.tiedOutput === 'always' || !has(tensorName('output')),
    ropeFactors: readRopeFactors(gguf, fail),
    // As llama.cpp: ggml_scale by sqrtf(n_embd), in float.
    embdScale: traits.embeddingScale === 'sqrt-n-embd' ? Math.fround(Math.sqrt(nEmbd)) : 1,
    postNorms: traits.postNorms,
    ffnNorm: traits.ffnNorm,
    attnOutputBias:
      traits.attnOutputBias === 'always' ||
      (traits.attnOutputBias === 'when-present' && has(tensorName('attn_output', 0, 'bias'))),
    attnSinks: traits.attnSinks,
    ffnAct: traits.ffnActivation,
    ffnGateUpFused: traits.ffnGateUpFused,
    attnSoftcap: softcap('attn_logit_softcapping', traits.attnSoftcap),
    finalSoftcap: softcap('final_logit_softcapping', traits.finalSoftcap),
    swa: readSlidingWindow(gguf, arch, traits, nLayer, rope, real, fail),
    moe,
    encoder: traits.encoder,
  };
}

/**
 * RoPE as llama.cpp reads it: NeoX or normal pairs per architecture; the scaling type defaults to
 * linear, and any type but none divides the frequencies by rope.scaling.factor (older files:
 * rope.scale_linear); YaRN also bends them. phi3 may say "longrope", which scales the same way;
 * its LongRoPE is the factor tensors (readRopeFactors).
 */
function readRope(
  gguf: GgufFile,
  arch: string,
  traits: ArchitectureTraits,
  { count, real }: Readers,
  fail: Fail,
  headDim: number,
  nCtxTrain: number,
): RopeParams {
  const scalingType = gguf.getString(`${arch}.rope.scaling.type`) ?? 'linear';
  if (!traits.ropeScalingTypes.includes(scalingType)) fail(`RoPE scaling "${scalingType}" is not supported`);
  const factor = real('rope.scaling.factor', real('rope.scale_linear', 0));
  const rope: RopeParams = {
    nRot: count('rope.dimension_count', headDim),
    neox: traits.rope === 'neox',
    freqBase: real('rope.freq_base', 10000),
    freqScale: scalingType !== 'none' && factor > 0 ? 1 / factor : 1,
    extFactor: scalingType === 'yarn' ? 1 : 0,
    attnFactor: real('rope.scaling.attn_factor', 1),
    betaFast: real('rope.scaling.yarn_beta_fast', 32),
    betaSlow: real('rope.scaling.yarn_beta_slow', 1),
    nCtxOrig: readCount(gguf, `${arch}.rope.scaling.original_context_length`) ?? nCtxTrain,
  };
  if (rope.nRot > headDim || rope.nRot % 2 !== 0)
    fail(`${arch}.rope.dimension_count: RoPE over ${rope.nRot} of ${headDim} dimensions is not supported`);
  return rope;
}

function readRopeFactors(gguf: GgufFile, fail: Fail): RopeFactors | null {
  const freqs = tensorName('rope_freqs');
  if (gguf.tensor(freqs)) return { short: freqs, long: freqs };
  const factors: RopeFactors = { short: tensorName('rope_factors_short'), long: tensorName('rope_factors_long') };
  const long = gguf.tensor(factors.long);
  const short = gguf.tensor(factors.short);
  if (!long && !short) return null;
  if (!long || !short)
    fail(`LongRoPE needs both rope_factors_long and rope_factors_short; the file has only ${long ? 'long' : 'short'}`);
  return factors;
}

/**
 * The factor tensor llama.cpp's get_rope_factors picks for a context of `ctx` positions: long past
 * the original context. llama.cpp compares its context rounded up to 256 (n_ctx_seq), so the
 * engine does too, to rotate exactly as llama.cpp at the same context size.
 */
export function ropeFactorsTensor(hp: HParams, ctx: number): string | null {
  if (!hp.ropeFactors) return null;
  return Math.ceil(ctx / 256) * 256 > hp.rope.nCtxOrig ? hp.ropeFactors.long : hp.ropeFactors.short;
}

/**
 * The query scale (gemma's f_attention_scale): 1/sqrt(d), d the head size or the rotated
 * dimensions, except for gemma's 27B models (which llama.cpp recognizes by their layer count),
 * scaled by 1/sqrt(nEmbd / nHead) as Gemma's reference code does. Computed in float, as llama.cpp.
 */
function attentionScale(
  traits: ArchitectureTraits,
  nLayer: number,
  nEmbd: number,
  nHead: number,
  dims: number,
): number {
  const d = nLayer === traits.attnScaleEmbdPerHeadAtLayers ? Math.floor(nEmbd / nHead) : dims;
  return Math.fround(1 / Math.fround(Math.sqrt(d)));
}

/** The windowed layers (core/sliding-window.ts) and their RoPE: their own base, and either unscaled (gemma3) or scaled as the others. */
function readSlidingWindow(
  gguf: GgufFile,
  arch: string,
  traits: ArchitectureTraits,
  nLayer: number,
  rope: RopeParams,
  real: Num,
  fail: Fail,
): SlidingWindow | null {
  let layout: SlidingWindowLayout | null;
  try {
    layout = slidingWindowLayout(gguf, arch, nLayer);
  } catch (err) {
    // A GgufError already names the file.
    if (err instanceof GgufError) throw err;
    return fail((err as Error).message);
  }
  if (!layout) return null;
  const own = traits.slidingWindow?.rope;
  const swaRope =
    own && own !== 'global'
      ? { ...rope, freqBase: real('rope.freq_base_swa', own.base), freqScale: 1 }
      : { ...rope, freqBase: real('rope.freq_base_swa', rope.freqBase) };
  return { ...layout, rope: swaRope };
}

/**
 * The MoE parameters as llama.cpp reads them, per the architecture's entry (core/architectures.ts):
 * MoE always, or when the file has expert_count (Mixtral-style llama); the expert widths and the
 * shared expert's, defaulting to feed_forward_length.
 */
function readMoe(gguf: GgufFile, arch: string, traits: ArchitectureTraits, num: Num, fail: Fail): MoeParams | null {
  const nExpert = num('expert_count', 0);
  const moe = traits.moe;
  if (!moe || (!moe.always && nExpert === 0)) {
    if (gguf.tensor(tensorName('ffn_gate_inp', 0)))
      fail(`${arch}.expert_count is missing, but the layers have expert routers (ffn_gate_inp)`);
    return null;
  }
  if (nExpert <= 0) fail(`${arch}.expert_count is missing or 0`);
  if (nExpert > MAX_EXPERTS)
    fail(`${arch}.expert_count: ${nExpert} experts per layer are not supported (at most ${MAX_EXPERTS})`);
  const nExpertUsed = num('expert_used_count', 0);
  if (nExpertUsed <= 0 || nExpertUsed > nExpert)
    fail(`${arch}.expert_used_count ${nExpertUsed} is not between 1 and expert_count ${nExpert}`);
  const nFf = num('feed_forward_length', 0);
  const nFfExp =
    moe.expertWidth === 'ffn'
      ? nFf
      : num('expert_feed_forward_length', moe.expertWidth === 'required' ? undefined : Math.floor(nFf / nExpertUsed));
  if (nFfExp <= 0) fail(`${arch}: no expert width (expert_feed_forward_length or feed_forward_length)`);
  const nFfShexp = moe.sharedExpert ? num('expert_shared_feed_forward_length', nFf) : 0;
  if (moe.sharedExpert && nFfShexp <= 0)
    fail(`${arch}: no shared expert width (expert_shared_feed_forward_length or feed_forward_length)`);
  return {
    nExpert,
    nExpertUsed,
    nFfExp,
    nFfShexp,
    normWeights: moe.normWeights,
    mergedGateUp: gguf.tensor(tensorName('ffn_gate_up_exps', 0)) !== undefined,
    gating: moe.gating,
    biases: moe.biases,
    act: moe.activation,
  };
}
