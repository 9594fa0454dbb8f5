/**
 * The architectures the engine runs, one entry each: what llama.cpp (llama-model.cpp) does
 * differently for that architecture, as data. "What does gemma2 do?" is answered by its entry.
 * Read by engine/model/hparams.ts (hyper-parameters), core/sliding-window.ts (windowed layers) and
 * core/chat-templates/builtin.ts (the template family of a file without one). Anything a file says
 * for itself (biases, Q/K norms, fused QKV) is read from its tensors, not from here.
 */

/** Sliding-window attention: which layers are windowed and how wide, when the file does not say. */
export interface SlidingWindowTraits {
  /** Layers per period without attention.sliding_window_pattern; the last of each period attends to everything. */
  readonly defaultPeriod: number;
  /**
   * attention.sliding_window when the file lacks it: a size; 'required' (its absence is an error);
   * 'optional' (absent or 0: no windowed layers at all).
   */
  readonly size: number | 'required' | 'optional';
  /**
   * The windowed layers' RoPE without rope.freq_base_swa: their own base and no scaling, or
   * 'global': the full-attention layers' base and scaling.
   */
  readonly rope: { readonly base: number; readonly scaled: false } | 'global';
}

/** Mixture-of-experts FFN (llama.cpp's build_moe_ffn). */
export interface MoeTraits {
  /** Every file is MoE; false: only a file with expert_count (Mixtral-style llama). */
  readonly always: boolean;
  /**
   * The experts' width: 'ffn' (feed_forward_length; no expert key is read), or
   * expert_feed_forward_length, defaulting to feed_forward_length / expert_used_count
   * ('ffn-per-used') or required ('required').
   */
  readonly expertWidth: 'ffn' | 'ffn-per-used' | 'required';
  /** A shared expert every token runs (expert_shared_feed_forward_length, default feed_forward_length). */
  readonly sharedExpert: boolean;
  /** The chosen experts' probabilities are divided by their sum (llama.cpp fixes it per architecture). */
  readonly normWeights: boolean;
  /** See MoeParams.gating in engine/model/hparams.ts. */
  readonly gating: 'softmax' | 'softmax_weight';
  /** Biases on the router's logits and on each expert's gate, up and down outputs. */
  readonly biases: boolean;
  /** silu(gate)·up, or gpt-oss's SwiGLU-OAI. */
  readonly activation: 'silu' | 'swiglu_oai';
}

/**
 * An encoder (BERT-style embedding model, llama.cpp's build_bert): bidirectional attention
 * (biases where the file has them), LayerNorm after each block (post-norm), no KV cache, no
 * output head.
 */
export interface EncoderTraits {
  /**
   * How positions enter: 'learned' absolute positions (position_embd) added to the token
   * embeddings, or 'rope': Q and K rotated (the architecture's RoPE style), no position table.
   */
  readonly positions: 'learned' | 'rope';
  /**
   * The FFN: 'gelu' of up (no gate), or 'swiglu', silu(gate)·up, without biases (llama.cpp reads
   * none for it).
   */
  readonly ffn: 'gelu' | 'swiglu';
}

export interface ArchitectureTraits {
  /** The norms' epsilon key: RMSNorm's, or LayerNorm's (encoders). */
  readonly normEpsKey: 'attention.layer_norm_rms_epsilon' | 'attention.layer_norm_epsilon';
  /** Non-null: an encoder that only embeds (engine/model/bert.ts), with no causal mask. */
  readonly encoder: EncoderTraits | null;
  /** 'neox' rotates (i, i + nRot/2), 'normal' (2i, 2i+1). */
  readonly rope: 'normal' | 'neox';
  /** rope.scaling.type values the engine runs (phi3's "longrope" is its factor tensors). */
  readonly ropeScalingTypes: readonly string[];
  /** Attention scale 1/sqrt(d): d the head size or the rotated dimensions (gpt-oss). */
  readonly attnScaleDims: 'head' | 'rope';
  /** The layer count of the model (27B) whose d is embedding_length / head_count instead; null: none. */
  readonly attnScaleEmbdPerHeadAtLayers: number | null;
  /** Default of attn_logit_softcapping; null: no attention soft-cap (the key is not read). */
  readonly attnSoftcap: number | null;
  /** Default of final_logit_softcapping (0: only when the file says); null: not read, off. */
  readonly finalSoftcap: number | null;
  /** 'sqrt-n-embd': the embeddings are multiplied by sqrt(embedding_length) after the lookup. */
  readonly embeddingScale: 'sqrt-n-embd' | null;
  /** The output projection reuses token_embd: 'always' (even beside an output.weight), or 'when-missing'. */
  readonly tiedOutput: 'always' | 'when-missing';
  /** Each block's attention and FFN outputs are RMS-normed (post_attention_norm, post_ffw_norm) before the residual add. */
  readonly postNorms: boolean;
  /** The FFN's input norm tensor (gpt-oss names it post_attention_norm). */
  readonly ffnNorm: 'ffn_norm' | 'post_attention_norm';
  /** The dense FFN's activation: SwiGLU, or GeGLU (tanh approximation). */
  readonly ffnActivation: 'silu' | 'gelu';
  /** No ffn_gate: ffn_up holds gate and up rows, the gate's half first. */
  readonly ffnGateUpFused: boolean;
  /** attn_output's bias: 'always', 'when-present' in the file, or 'never' (ignored, as llama.cpp). */
  readonly attnOutputBias: 'always' | 'when-present' | 'never';
  /** A learned logit per head (attn_sinks) joins each attention softmax's denominator. */
  readonly attnSinks: boolean;
  readonly slidingWindow: SlidingWindowTraits | null;
  readonly moe: MoeTraits | null;
  /**
   * The built-in chat template for a file without one, when its vocabulary has no family's turn
   * markers ('llama2' only for a SentencePiece vocabulary; see chooseBuiltinTemplate).
   */
  readonly chatTemplate: 'chatml' | 'llama2' | 'gemma' | 'phi3';
}

const DENSE = {
  normEpsKey: 'attention.layer_norm_rms_epsilon',
  encoder: null,
  rope: 'neox',
  ropeScalingTypes: ['none', 'linear', 'yarn'],
  attnScaleDims: 'head',
  attnScaleEmbdPerHeadAtLayers: null,
  attnSoftcap: null,
  finalSoftcap: null,
  embeddingScale: null,
  tiedOutput: 'when-missing',
  postNorms: false,
  ffnNorm: 'ffn_norm',
  ffnActivation: 'silu',
  ffnGateUpFused: false,
  attnOutputBias: 'never',
  attnSinks: false,
  slidingWindow: null,
  moe: null,
  chatTemplate: 'chatml',
} as const satisfies ArchitectureTraits;

const QWEN_MOE = {
  always: true,
  expertWidth: 'ffn-per-used',
  biases: false,
  gating: 'softmax',
  activation: 'silu',
} as const;

const GEMMA = {
  ...DENSE,
  embeddingScale: 'sqrt-n-embd',
  postNorms: true,
  ffnActivation: 'gelu',
  chatTemplate: 'gemma',
} as const satisfies ArchitectureTraits;

export const ARCHITECTURES = {
  // Mixtral is a llama with expert_count.
  llama: {
    ...DENSE,
    rope: 'normal',
    attnOutputBias: 'when-present',
    moe: {
      always: false,
      expertWidth: 'ffn',
      sharedExpert: false,
      normWeights: true,
      gating: 'softmax',
      biases: false,
      activation: 'silu',
    },
    chatTemplate: 'llama2',
  },
  qwen2: DENSE,
  qwen3: DENSE,
  qwen2moe: { ...DENSE, moe: { ...QWEN_MOE, sharedExpert: true, normWeights: false } },
  qwen3moe: { ...DENSE, moe: { ...QWEN_MOE, sharedExpert: false, normWeights: true } },
  gemma2: {
    ...GEMMA,
    attnScaleEmbdPerHeadAtLayers: 46,
    attnSoftcap: 50,
    finalSoftcap: 30,
    tiedOutput: 'always',
    slidingWindow: { defaultPeriod: 2, size: 4096, rope: 'global' },
  },
  gemma3: {
    ...GEMMA,
    attnScaleEmbdPerHeadAtLayers: 62,
    finalSoftcap: 0,
    slidingWindow: { defaultPeriod: 6, size: 'optional', rope: { base: 10000, scaled: false } },
  },
  // llama.cpp disables phi3's sliding window.
  phi3: {
    ...DENSE,
    ropeScalingTypes: ['none', 'linear', 'yarn', 'longrope'],
    ffnGateUpFused: true,
    chatTemplate: 'phi3',
  },
  'gpt-oss': {
    ...DENSE,
    attnScaleDims: 'rope',
    ffnNorm: 'post_attention_norm',
    attnOutputBias: 'always',
    attnSinks: true,
    slidingWindow: { defaultPeriod: 2, size: 'required', rope: 'global' },
    moe: {
      always: true,
      expertWidth: 'required',
      sharedExpert: false,
      normWeights: false,
      gating: 'softmax_weight',
      biases: true,
      activation: 'swiglu_oai',
    },
  },
  // all-MiniLM, bge, e5: token + position + token-type embeddings; only embeds.
  bert: {
    ...DENSE,
    normEpsKey: 'attention.layer_norm_epsilon',
    encoder: { positions: 'learned', ffn: 'gelu' },
  },
  // nomic-embed-text: bert with RoPE instead of a position table and a SwiGLU FFN.
  'nomic-bert': {
    ...DENSE,
    normEpsKey: 'attention.layer_norm_epsilon',
    encoder: { positions: 'rope', ffn: 'swiglu' },
  },
} as const satisfies Record<string, ArchitectureTraits>;

export type ArchitectureName = keyof typeof ARCHITECTURES;

export const ARCHITECTURE_NAMES = Object.keys(ARCHITECTURES) as ArchitectureName[];

export function isArchitectureName(arch: string): arch is ArchitectureName {
  // hasOwn: "constructor" and other inherited keys are not architectures.
  return Object.hasOwn(ARCHITECTURES, arch);
}

/** The entry of a supported architecture; undefined for any other (or none). */
export function architectureTraits(arch: string | null): ArchitectureTraits | undefined {
  return arch !== null && isArchitectureName(arch) ? ARCHITECTURES[arch] : undefined;
}

/** What is wrong with a file of an architecture the engine does not run. */
export function unsupportedArchitectureMessage(arch: string): string {
  return `architecture "${arch}" is not supported; supported: ${ARCHITECTURE_NAMES.join(', ')}`;
}
