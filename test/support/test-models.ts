/**
 * Random-weight GGUF models of any shape, for tests: llama-shaped (dense, GQA, MoE, tied
 * embeddings; qwen2/qwen3 and their MoE kin qwen2moe/qwen3moe; gemma2/gemma3 with their post-norms;
 * phi3 with its fused gate/up and optionally fused attn_qkv and LongRoPE factors; gpt-oss with
 * attention sinks and biased experts) or falcon-shaped (fused attn_qkv), with stories260K's
 * tokenizer (vocab 512) so llama.cpp loads them. Weights are seeded gaussians (same seed, same
 * file); norms are ones; biases (always F32, as convert_hf_to_gguf writes them) zeros.
 *
 *   const path = join(tempDir(), 'm.gguf');
 *   await writeRandomModel(path, { nLayer: 8, nEmbd: 256, nFf: 768, nHead: 8, nHeadKv: 2 });
 */
import { ggmlTypeByName, type GgmlType } from '../../src-main/core/ggml-types';
import type { GgufTensorSpec } from '../../src-main/core/gguf/writer';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { STORIES_260K } from './paths';
import { mulberry32 } from './random';
import { f32ToF16Bits } from '../../src-main/core/quants/half-encode';

export interface ModelShape {
  /**
   * 'llama' (default) or 'falcon'; 'qwen2' adds Q/K/V biases, 'qwen3' per-head Q/K norms
   * (attn_q_norm/attn_k_norm), both llama-shaped otherwise; 'qwen2moe' and 'qwen3moe' are
   * qwen2 and qwen3 with MoE layers (nExpert is required), qwen2moe with a shared expert;
   * 'gpt-oss' (nExpert and slidingWindow are required) has Q/K/V, attn_output, router and expert
   * biases, attn_sinks (gaussians of deviation 1, to weigh against the scores), and its FFN norm
   * named post_attention_norm.
   */
  arch?: 'llama' | 'falcon' | 'qwen2' | 'qwen3' | 'qwen2moe' | 'qwen3moe' | 'gemma2' | 'gemma3' | 'phi3' | 'gpt-oss';
  nLayer: number;
  nEmbd: number;
  nFf: number;
  nHead: number;
  /** Defaults to nHead (no GQA). */
  nHeadKv?: number;
  /** Head size; defaults to nEmbd / nHead. Written as key_length/value_length when it differs. */
  headDim?: number;
  /** Experts per MoE layer (llama, qwen2moe, qwen3moe): stacked ffn_*_exps tensors plus the ffn_gate_inp router. */
  nExpert?: number;
  /** Experts used per token; defaults to 2. */
  nExpertUsed?: number;
  /** qwen2moe/qwen3moe/gpt-oss: rows of each expert's gate/up (expert_feed_forward_length); defaults to nFf. Llama's experts are nFf wide. */
  nFfExp?: number;
  /** qwen2moe: width of the shared expert (expert_shared_feed_forward_length); defaults to nFf. */
  nFfShexp?: number;
  /** One ffn_gate_up_exps tensor (gate rows, then up rows, per expert) instead of ffn_gate_exps and ffn_up_exps. */
  mergedGateUp?: boolean;
  /** No output.weight: the output reuses token_embd. */
  tiedEmbeddings?: boolean;
  /** Type of the 2-D and 3-D weights (vectors stay F32, as convert_hf_to_gguf writes them). */
  weightType?: 'F32' | 'F16';
  /** Standard deviation of the weights (default 0.02). */
  scale?: number;
  seed?: number;
  contextLength?: number;
  name?: string;
  /** Biases drawn like the weights instead of zeros (qwen2's Q/K/V biases, gpt-oss's). */
  randomBiases?: boolean;
  /** gpt-oss: standard deviation of the experts' random gate and up biases (default: the weights'). */
  expertBiasScale?: number;
  /** Norm weights 1 + 0.1·gaussian instead of ones. */
  randomNorms?: boolean;
  /**
   * Norm weights log-normal instead: exp(σ·gaussian − σ²) with σ = normSpread, of mean square 1
   * (activations keep unit scale). Some input channels then carry far more than others, as the
   * outlier channels of trained LLMs do: what an importance matrix has to tell.
   */
  normSpread?: number;
  /** rope.freq_base, written when given. */
  ropeFreqBase?: number;
  /** rope.dimension_count (default: the head size). */
  nRot?: number;
  /** rope.scaling.type and rope.scaling.factor, written when given. */
  ropeScaling?: { type: string; factor: number };
  /** gemma2/gemma3/gpt-oss: attention.sliding_window and attention.sliding_window_pattern, written when given. */
  slidingWindow?: number;
  slidingWindowPattern?: number;
  /** gemma2: attn_logit_softcapping and final_logit_softcapping, written when given. */
  attnSoftcap?: number;
  finalSoftcap?: number;
  /** phi3: one attn_qkv tensor instead of attn_q, attn_k and attn_v. */
  fusedQkv?: boolean;
  /**
   * phi3: LongRoPE, as convert_hf_to_gguf writes it: rope_factors_long/short tensors (random
   * factors >= 1), rope.scaling.attn_factor and rope.scaling.original_context_length.
   */
  longRope?: { originalContext: number; attnFactor: number };
  /** {arch}.pooling_type (llama.cpp's enum: 0 none, 1 mean, 2 cls, 3 last, 4 rank), written when given. */
  poolingType?: number;
  /** A tokenizer other than stories260K's: its tokenizer.* metadata and vocabulary size (e.g. hf-vocab.ts's hfTokenizerKvs). */
  tokenizer?: { kvs: GgufKv[]; size: number };
}

/** Vocabulary size of the tokenizer the models carry (stories260K's). */
/**
 * The random llama the quality and long-context tests share: 256-wide rows (every K-quant's
 * super-blocks fit, so Q4_K_M writes K-quants rather than its fallbacks), heads of 64 over 2 KV
 * heads, weights and norms scaled so its next-token distributions are far from flat.
 */
export const WIDE_LLAMA: ModelShape = {
  arch: 'llama',
  nLayer: 2,
  nEmbd: 256,
  nFf: 512,
  nHead: 4,
  nHeadKv: 2,
  scale: 0.06,
  randomNorms: true,
};

export const TEST_VOCAB = 512;

let tokenizer: GgufKv[] | undefined;

/** The tokenizer.* metadata of stories260K (a 512-token SentencePiece vocabulary). */
export function tokenizerKvs(): GgufKv[] {
  if (!tokenizer) {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      tokenizer = gguf.kvs.filter((kv) => kv.key.startsWith('tokenizer.'));
    } finally {
      file.close();
    }
  }
  return tokenizer;
}

const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
const f32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
const str = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });

/** The metadata of a model of `shape`: architecture hyperparameters plus the tokenizer. */
export function modelKvs(shape: ModelShape): GgufKv[] {
  const arch = shape.arch ?? 'llama';
  const headDim = shape.headDim ?? shape.nEmbd / shape.nHead;
  const kvs: GgufKv[] = [
    str('general.architecture', arch),
    // Not "phi3": llama.cpp gives models named so Phi-3's special tokens, which this vocabulary lacks.
    str('general.name', shape.name ?? `random ${arch === 'phi3' ? 'phi' : arch}`),
    u32('general.file_type', shape.weightType === 'F16' ? 1 : 0),
    u32(`${arch}.context_length`, shape.contextLength ?? 256),
    u32(`${arch}.embedding_length`, shape.nEmbd),
    u32(`${arch}.feed_forward_length`, shape.nFf),
    u32(`${arch}.block_count`, shape.nLayer),
    u32(`${arch}.attention.head_count`, shape.nHead),
    u32(`${arch}.attention.head_count_kv`, shape.nHeadKv ?? shape.nHead),
    u32(`${arch}.rope.dimension_count`, shape.nRot ?? headDim),
  ];
  if (headDim !== shape.nEmbd / shape.nHead) {
    kvs.push(u32(`${arch}.attention.key_length`, headDim), u32(`${arch}.attention.value_length`, headDim));
  }
  if (arch === 'falcon') kvs.push(f32(`${arch}.attention.layer_norm_epsilon`, 1e-5));
  else kvs.push(f32(`${arch}.attention.layer_norm_rms_epsilon`, 1e-5));
  if (shape.ropeFreqBase !== undefined) kvs.push(f32(`${arch}.rope.freq_base`, shape.ropeFreqBase));
  if (shape.ropeScaling)
    kvs.push(
      str(`${arch}.rope.scaling.type`, shape.ropeScaling.type),
      f32(`${arch}.rope.scaling.factor`, shape.ropeScaling.factor),
    );
  if (shape.slidingWindow !== undefined) kvs.push(u32(`${arch}.attention.sliding_window`, shape.slidingWindow));
  if (shape.slidingWindowPattern !== undefined)
    kvs.push(u32(`${arch}.attention.sliding_window_pattern`, shape.slidingWindowPattern));
  if (shape.attnSoftcap !== undefined) kvs.push(f32(`${arch}.attn_logit_softcapping`, shape.attnSoftcap));
  if (shape.finalSoftcap !== undefined) kvs.push(f32(`${arch}.final_logit_softcapping`, shape.finalSoftcap));
  if (shape.longRope) {
    kvs.push(
      f32(`${arch}.rope.scaling.attn_factor`, shape.longRope.attnFactor),
      u32(`${arch}.rope.scaling.original_context_length`, shape.longRope.originalContext),
    );
  }
  if (shape.poolingType !== undefined) kvs.push(u32(`${arch}.pooling_type`, shape.poolingType));
  if (shape.nExpert) {
    kvs.push(u32(`${arch}.expert_count`, shape.nExpert), u32(`${arch}.expert_used_count`, shape.nExpertUsed ?? 2));
  }
  if (isQwenMoe(shape) || arch === 'gpt-oss')
    kvs.push(u32(`${arch}.expert_feed_forward_length`, shape.nFfExp ?? shape.nFf));
  if (arch === 'qwen2moe') kvs.push(u32(`${arch}.expert_shared_feed_forward_length`, shape.nFfShexp ?? shape.nFf));
  return [...kvs, ...(shape.tokenizer?.kvs ?? tokenizerKvs())];
}

function isQwenMoe(shape: ModelShape): boolean {
  return shape.arch === 'qwen2moe' || shape.arch === 'qwen3moe';
}

/** The tensors of a model of `shape`, names and dimensions (innermost first) as llama.cpp expects. */
export function modelTensors(shape: ModelShape): { name: string; ne: number[] }[] {
  const { nEmbd, nFf, nHead } = shape;
  const headDim = shape.headDim ?? nEmbd / nHead;
  const q = nHead * headDim;
  const kv = (shape.nHeadKv ?? nHead) * headDim;
  const nVocab = shape.tokenizer?.size ?? TEST_VOCAB;
  const out: { name: string; ne: number[] }[] = [{ name: 'token_embd.weight', ne: [nEmbd, nVocab] }];
  const falcon = shape.arch === 'falcon';
  const gemma = shape.arch === 'gemma2' || shape.arch === 'gemma3';
  const phi3 = shape.arch === 'phi3';
  out.push({ name: 'output_norm.weight', ne: [nEmbd] });
  if (falcon) out.push({ name: 'output_norm.bias', ne: [nEmbd] });
  // gemma2 always reads its output from token_embd: llama.cpp refuses a file with an output.weight.
  if (!shape.tiedEmbeddings && shape.arch !== 'gemma2') out.push({ name: 'output.weight', ne: [nEmbd, nVocab] });
  if (shape.longRope) {
    const pairs = (shape.nRot ?? headDim) / 2;
    out.push({ name: 'rope_factors_long.weight', ne: [pairs] }, { name: 'rope_factors_short.weight', ne: [pairs] });
  }
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = (name: string, ...ne: number[]) => out.push({ name: `blk.${i}.${name}`, ne });
    blk('attn_norm.weight', nEmbd);
    if (phi3) {
      if (shape.fusedQkv) blk('attn_qkv.weight', nEmbd, q + 2 * kv);
      else {
        blk('attn_q.weight', nEmbd, q);
        blk('attn_k.weight', nEmbd, kv);
        blk('attn_v.weight', nEmbd, kv);
      }
      blk('attn_output.weight', q, nEmbd);
      blk('ffn_norm.weight', nEmbd);
      blk('ffn_up.weight', nEmbd, 2 * nFf);
      blk('ffn_down.weight', nFf, nEmbd);
      continue;
    }
    if (shape.arch === 'gpt-oss') {
      const nExpert = shape.nExpert!;
      const ff = shape.nFfExp ?? nFf;
      for (const [name, rows] of [
        ['attn_q', q],
        ['attn_k', kv],
        ['attn_v', kv],
      ] as const) {
        blk(`${name}.weight`, nEmbd, rows);
        blk(`${name}.bias`, rows);
      }
      blk('attn_output.weight', q, nEmbd);
      blk('attn_output.bias', nEmbd);
      blk('attn_sinks.weight', nHead);
      blk('post_attention_norm.weight', nEmbd);
      blk('ffn_gate_inp.weight', nEmbd, nExpert);
      blk('ffn_gate_inp.bias', nExpert);
      blk('ffn_gate_exps.weight', nEmbd, ff, nExpert);
      blk('ffn_gate_exps.bias', ff, nExpert);
      blk('ffn_up_exps.weight', nEmbd, ff, nExpert);
      blk('ffn_up_exps.bias', ff, nExpert);
      blk('ffn_down_exps.weight', ff, nEmbd, nExpert);
      blk('ffn_down_exps.bias', nEmbd, nExpert);
      continue;
    }
    if (falcon) {
      blk('attn_norm.bias', nEmbd);
      blk('attn_qkv.weight', nEmbd, q + 2 * kv);
      blk('attn_output.weight', q, nEmbd);
      blk('ffn_up.weight', nEmbd, nFf);
      blk('ffn_down.weight', nFf, nEmbd);
      continue;
    }
    blk('attn_q.weight', nEmbd, q);
    blk('attn_k.weight', nEmbd, kv);
    blk('attn_v.weight', nEmbd, kv);
    if (shape.arch === 'qwen2' || shape.arch === 'qwen2moe') {
      blk('attn_q.bias', q);
      blk('attn_k.bias', kv);
      blk('attn_v.bias', kv);
    }
    if (shape.arch === 'qwen3' || shape.arch === 'qwen3moe' || shape.arch === 'gemma3') {
      blk('attn_q_norm.weight', headDim);
      blk('attn_k_norm.weight', headDim);
    }
    blk('attn_output.weight', q, nEmbd);
    if (gemma) blk('post_attention_norm.weight', nEmbd);
    blk('ffn_norm.weight', nEmbd);
    if (gemma) blk('post_ffw_norm.weight', nEmbd);
    if (shape.nExpert) {
      const ff = isQwenMoe(shape) ? (shape.nFfExp ?? nFf) : nFf;
      blk('ffn_gate_inp.weight', nEmbd, shape.nExpert);
      if (shape.mergedGateUp) blk('ffn_gate_up_exps.weight', nEmbd, 2 * ff, shape.nExpert);
      else {
        blk('ffn_gate_exps.weight', nEmbd, ff, shape.nExpert);
        blk('ffn_up_exps.weight', nEmbd, ff, shape.nExpert);
      }
      blk('ffn_down_exps.weight', ff, nEmbd, shape.nExpert);
      if (shape.arch === 'qwen2moe') {
        const sh = shape.nFfShexp ?? nFf;
        blk('ffn_gate_inp_shexp.weight', nEmbd);
        blk('ffn_gate_shexp.weight', nEmbd, sh);
        blk('ffn_up_shexp.weight', nEmbd, sh);
        blk('ffn_down_shexp.weight', sh, nEmbd);
      }
    } else {
      blk('ffn_gate.weight', nEmbd, nFf);
      blk('ffn_up.weight', nEmbd, nFf);
      blk('ffn_down.weight', nFf, nEmbd);
    }
  }
  return out;
}

/** Writes a random-weight model of `shape` to `path`. */
export async function writeRandomModel(path: string, shape: ModelShape): Promise<void> {
  const weightType = ggmlTypeByName(shape.weightType ?? 'F32')!;
  const f32Type = ggmlTypeByName('F32')!;
  const tensors: GgufTensorSpec[] = modelTensors(shape).map(({ name, ne }) => ({
    name,
    ne,
    type: ne.length >= 2 && !name.endsWith('.bias') ? weightType : f32Type,
  }));
  if (shape.randomNorms && shape.normSpread !== undefined)
    throw new Error('writeRandomModel: randomNorms and normSpread both draw the norms; give one');
  const rng = mulberry32(shape.seed ?? 1);
  const scale = shape.scale ?? 0.02;
  const spread = shape.normSpread;
  await writeGguf(path, { kvs: modelKvs(shape), tensors }, (i) => {
    const t = tensors[i]!;
    const n = t.ne.reduce((a, b) => a * b, 1);
    const weight = () => rng.gaussian() * scale;
    const expertBias = /\.ffn_(gate|up)_exps\.bias$/.test(t.name);
    const biasScale = expertBias ? (shape.expertBiasScale ?? scale) : scale;
    const bias = shape.randomBiases ? () => rng.gaussian() * biasScale : () => 0;
    const norm =
      spread !== undefined
        ? () => Math.exp(spread * rng.gaussian() - spread * spread)
        : shape.randomNorms
          ? () => 1 + 0.1 * rng.gaussian()
          : () => 1;
    // LongRoPE divides each pair's frequency by a factor >= 1 (up to tens in Phi-3's long factors).
    const ropeFactor = () => 1 + 2 * Math.abs(rng.gaussian());
    // The shared expert's gate is a vector of weights, not a norm.
    const isWeight = (t.ne.length >= 2 && !t.name.endsWith('.bias')) || t.name.endsWith('ffn_gate_inp_shexp.weight');
    const sink = () => rng.gaussian();
    const fill = isWeight
      ? weight
      : t.name.endsWith('.bias')
        ? bias
        : t.name.startsWith('rope_factors_')
          ? ropeFactor
          : t.name.endsWith('attn_sinks.weight')
            ? sink
            : norm;
    return values(n, t.type, fill);
  });
}

/** `n` values from `fill`, encoded as F32 or F16, in chunks. */
function* values(n: number, type: GgmlType, fill: () => number): Iterable<Uint8Array> {
  const CHUNK = 1 << 20;
  for (let done = 0; done < n; done += CHUNK) {
    const m = Math.min(CHUNK, n - done);
    const f = new Float32Array(m);
    for (let j = 0; j < m; j++) f[j] = fill();
    if (type.name === 'F32') {
      yield new Uint8Array(f.buffer);
    } else {
      const h = new Uint16Array(m);
      for (let j = 0; j < m; j++) h[j] = f32ToF16Bits(f[j]!);
      yield new Uint8Array(h.buffer);
    }
  }
}
