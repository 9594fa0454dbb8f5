/**
 * Embeddings from a model's final hidden states (after output_norm, no head), as llama.cpp makes
 * them: one vector per token, pooled into one per input by the file's `<arch>.pooling_type`, then
 * L2-normalized (llama.cpp's server and Ollama normalize; node-llama-cpp does not, and cosine
 * distances do not care).
 */
import type { GgufFile } from './gguf/gguf-file';
import { readCount } from './gguf/metadata-counts';

/** llama.cpp's enum llama_pooling_type, by value (NONE = 0 … RANK = 4). */
const POOLING_TYPES = ['none', 'mean', 'cls', 'last', 'rank'] as const;

export type PoolingType = (typeof POOLING_TYPES)[number];

/** The pooling types an embedding is made with ('none' and 'rank' make no single vector per input). */
export type Pooling = 'mean' | 'cls' | 'last';

/**
 * A file without pooling_type (a generation model) embeds with mean pooling, as llama.cpp's server
 * does when started with `--embeddings --pooling mean`: OpenAI and Ollama clients expect any model
 * to answer.
 */
export const DEFAULT_POOLING: Pooling = 'mean';

/** `<arch>.pooling_type`, or null when the file does not say. */
export function readPoolingType(gguf: GgufFile, arch: string): PoolingType | null {
  const key = `${arch}.pooling_type`;
  if (gguf.get(key) === undefined) return null;
  const value = readCount(gguf, key);
  const type = value === undefined ? undefined : POOLING_TYPES[value];
  if (!type)
    throw new Error(
      `${gguf.file}: ${key} is ${JSON.stringify(gguf.get(key))}, not one of llama.cpp's pooling types 0..${POOLING_TYPES.length - 1} (${POOLING_TYPES.join(', ')})`,
    );
  return type;
}

/** How a model with this pooling_type embeds, or why it cannot. */
export function embeddingPooling(type: PoolingType | null): Pooling {
  if (type === null) return DEFAULT_POOLING;
  if (type === 'none') return 'last'; // as node-llama-cpp: the last token's hidden state
  if (type === 'rank')
    throw new Error('pooling_type rank (a reranker) makes scores, not embeddings; reranking is not supported');
  return type;
}

/**
 * One input's embedding from its tokens' hidden states (`hidden`: tokens × width, row-major),
 * pooled, then L2-normalized when `normalize`.
 */
export function poolEmbedding(hidden: Float32Array, width: number, pooling: Pooling, normalize = true): Float32Array {
  const tokens = hidden.length / width;
  if (!Number.isInteger(tokens) || tokens < 1)
    throw new Error(`hidden states of ${hidden.length} values are not whole rows of ${width}`);
  let out: Float32Array;
  if (pooling === 'cls') out = hidden.slice(0, width);
  else if (pooling === 'last') out = hidden.slice((tokens - 1) * width);
  else {
    const sum = new Float64Array(width);
    for (let t = 0; t < tokens; t++) for (let i = 0; i < width; i++) sum[i]! += hidden[t * width + i]!;
    out = Float32Array.from(sum, (s) => s / tokens);
  }
  return normalize ? normalizeL2(out) : out;
}

/** v / ‖v‖₂ (a zero vector stays zero, as llama.cpp's common_embd_normalize). */
export function normalizeL2(v: Float32Array): Float32Array {
  let sum = 0;
  for (const x of v) sum += x * x;
  const norm = Math.sqrt(sum);
  return norm > 0 ? v.map((x) => x / norm) : v;
}
