import { GgufError } from './gguf/errors';
import type { GgufFile } from './gguf/gguf-file';
import { readCount, readLayerCount, readPerLayerCount } from './gguf/metadata-counts';
import { F16_KV, kvCacheBytes, kvCacheGgmlType, kvCacheTypeProblem, type KvTypeNames } from './kv-cache-types';
import { llamaFileTypeName } from './llama-file-types';
import { RECIPE_KEY, recipeText } from './recipe-overrides';
import { slidingWindowLayout, type SlidingWindowLayout } from './sliding-window';

export interface TypeShare {
  /** ggml type name ("Q4_K"). */
  readonly type: string;
  readonly tensors: number;
  readonly parameters: number;
  readonly bytes: number;
}

export interface KvCacheEstimate {
  readonly context: number;
  readonly bytes: number;
  /** What one more token of context adds (sliding-window layers' caches do not grow with it). */
  readonly bytesPerToken: number;
  readonly formula: string;
}

export interface ModelSummary {
  readonly architecture: string | null;
  readonly name: string | null;
  /** Elements over all tensors, as llama.cpp counts n_params. */
  readonly parameters: number;
  /** `general.file_type` as llama.cpp names it ("Q4_K_M"), or null when the file does not say. */
  readonly fileType: string | null;
  /** Tensors grouped by ggml type, largest share of bytes first. */
  readonly typeMix: readonly TypeShare[];
  readonly contextLength: number | null;
  readonly layers: number | null;
  /** Attention heads; an array where the file gives a count per layer. */
  readonly heads: number | readonly number[] | null;
  readonly kvHeads: number | readonly number[] | null;
  /** Key head size (attention.key_length, else embedding / heads). */
  readonly headSize: number | null;
  readonly valueHeadSize: number | null;
  readonly embeddingSize: number | null;
  readonly feedForwardSize: number | null;
  readonly vocabSize: number | null;
  readonly tokenizerModel: string | null;
  readonly tokenizerPre: string | null;
  readonly hasChatTemplate: boolean;
  /** The custom recipe Gufo wrote the file with ("Q4_K_M; attn_v=Q8_0"), from its metadata; null for any other file. */
  readonly recipe: string | null;
  /** Bytes of all tensor data: the memory the weights take once loaded. */
  readonly weightBytes: number;
  /** Null when the metadata lacks what the estimate needs (layers, heads, head sizes). */
  readonly kvCache: KvCacheEstimate | null;
}

function layerValues(value: number | readonly number[], layers: number): number[] {
  return typeof value === 'number' ? new Array<number>(layers).fill(value) : value.slice(0, layers);
}

function typeMix(gguf: GgufFile): TypeShare[] {
  const shares = new Map<string, { type: string; tensors: number; parameters: number; bytes: number }>();
  for (const t of gguf.tensors) {
    const share = shares.get(t.type.name) ?? { type: t.type.name, tensors: 0, parameters: 0, bytes: 0 };
    share.tensors += 1;
    share.parameters += t.elements;
    share.bytes += t.bytes;
    shares.set(t.type.name, share);
  }
  return [...shares.values()].sort((a, b) => b.bytes - a.bytes);
}

/**
 * llama.cpp's default micro-batch (n_ubatch) and the cell count its caches are padded to: a
 * sliding-window layer's cache holds the window plus one micro-batch, as llama-server and
 * llama-cli allocate it (swa_full off).
 */
const UBATCH = 512;
const CELL_PAD = 256;

/** Bytes of one element of a cache type, as a short decimal (q8_0: 34 / 32 = 1.0625). */
function elementBytes(type: string): string {
  const { typeSize, blockSize } = kvCacheGgmlType(type);
  return String(typeSize / blockSize);
}

/**
 * KV cache as llama.cpp allocates it (`kvTypes`: its --cache-type-k/-v; default f16 K and V, its
 * default): every layer holds `context` cells, except sliding-window layers, which hold
 * min(context, window + 512) padded to 256. A cell of a layer holds kv_heads × head size elements
 * of K and of V, in the bytes of their types (core/kv-cache-types.ts, from the ggml type table).
 * Throws when a quantized type's blocks do not fit the heads (kvCacheTypeProblem).
 */
export function estimateKvCache(
  layers: number,
  kvHeads: number | readonly number[],
  headSize: number,
  valueHeadSize: number,
  context: number,
  window: SlidingWindowLayout | null = null,
  kvTypes: KvTypeNames = F16_KV,
): KvCacheEstimate {
  const problem = kvCacheTypeProblem(kvTypes.k, headSize) ?? kvCacheTypeProblem(kvTypes.v, valueHeadSize);
  if (problem) throw new Error(problem);
  const cellBytes = (heads: number) =>
    kvCacheBytes(kvTypes.k, heads * headSize) + kvCacheBytes(kvTypes.v, heads * valueHeadSize);
  let full = 0;
  let windowed = 0;
  layerValues(kvHeads, layers).forEach((heads, l) => {
    if (window?.layers[l]) windowed += cellBytes(heads);
    else full += cellBytes(heads);
  });
  const [k, v] = [kvTypes.k, kvTypes.v];
  const formula =
    k === v
      ? `context × Σ_layers kv_heads × (head_size_k + head_size_v) × ${elementBytes(k)} bytes (${k.toUpperCase()} K and V)`
      : `context × Σ_layers kv_heads × (head_size_k × ${elementBytes(k)} + head_size_v × ${elementBytes(v)}) bytes ` +
        `(${k.toUpperCase()} K, ${v.toUpperCase()} V)`;
  if (!window || windowed === 0) return { context, bytes: full * context, bytesPerToken: full, formula };
  const windowCells = Math.ceil(Math.min(context, window.window + UBATCH) / CELL_PAD) * CELL_PAD;
  return {
    context,
    bytes: full * context + windowed * windowCells,
    bytesPerToken: full,
    formula:
      `${formula}, over the full-attention layers; the ${window.layers.filter(Boolean).length} sliding-window layers ` +
      `hold min(context, window ${window.window} + ${UBATCH}) rounded up to ${CELL_PAD} cells (${windowCells})`,
  };
}

/**
 * The windowed layers, or none when the file's window is unusable (the engine says why at load);
 * a malformed window value is the file's error, as any other key's.
 */
function windowOf(gguf: GgufFile, arch: string | null, layers: number | null): SlidingWindowLayout | null {
  if (arch === null || layers === null) return null;
  try {
    return slidingWindowLayout(gguf, arch, layers);
  } catch (err) {
    if (err instanceof GgufError) throw err;
    return null;
  }
}

/**
 * What a user wants to know about a model, from its metadata and tensor infos alone. Every count
 * it reads is checked first (core/gguf/metadata-counts.ts): a hostile value throws a GgufError
 * naming the key. `kvTypes` are the KV cache's (default f16), which estimateKvCache may refuse.
 */
export function summarizeModel(gguf: GgufFile, context?: number, kvTypes: KvTypeNames = F16_KV): ModelSummary {
  const arch = gguf.getString('general.architecture') ?? null;
  const key = (k: string) => `${arch}.${k}`;
  const num = (k: string) => (arch ? (readCount(gguf, key(k)) ?? null) : null);
  const layers = arch ? (readLayerCount(gguf, arch) ?? null) : null;
  const perLayer = (k: string) => (arch ? (readPerLayerCount(gguf, key(k), layers) ?? null) : null);
  const heads = perLayer('attention.head_count');
  const kvHeads = perLayer('attention.head_count_kv') ?? heads;
  const embeddingSize = num('embedding_length');
  const firstHeads = typeof heads === 'number' ? heads : (heads?.find((h) => h > 0) ?? null);
  const headSize = num('attention.key_length') ?? (embeddingSize && firstHeads ? embeddingSize / firstHeads : null);
  const valueHeadSize = num('attention.value_length') ?? headSize;
  const contextLength = num('context_length');
  const feedForward = perLayer('feed_forward_length');
  const fileType = readCount(gguf, 'general.file_type');
  const tokens = gguf.getArray('tokenizer.ggml.tokens');
  const kvContext = context ?? contextLength;
  return {
    architecture: arch,
    name: gguf.getString('general.name') ?? null,
    parameters: gguf.tensors.reduce((n, t) => n + t.elements, 0),
    fileType: fileType === undefined ? null : llamaFileTypeName(fileType),
    typeMix: typeMix(gguf),
    contextLength,
    layers,
    heads,
    kvHeads,
    headSize,
    valueHeadSize,
    embeddingSize,
    // A per-layer width has no one value to show.
    feedForwardSize: typeof feedForward === 'number' ? feedForward : null,
    vocabSize: tokens?.items.length ?? num('vocab_size'),
    tokenizerModel: gguf.getString('tokenizer.ggml.model') ?? null,
    tokenizerPre: gguf.getString('tokenizer.ggml.pre') ?? null,
    hasChatTemplate: gguf.getString('tokenizer.chat_template') !== undefined,
    recipe: recipeOf(gguf),
    weightBytes: gguf.tensors.reduce((n, t) => n + t.bytes, 0),
    kvCache:
      layers !== null && kvHeads !== null && headSize !== null && valueHeadSize !== null && kvContext !== null
        ? estimateKvCache(layers, kvHeads, headSize, valueHeadSize, kvContext, windowOf(gguf, arch, layers), kvTypes)
        : null,
  };
}

function recipeOf(gguf: GgufFile): string | null {
  const json = gguf.getString(RECIPE_KEY);
  return json === undefined ? null : recipeText(json);
}
