/** Looking inside one GGUF file: metadata, tensors, types, memory, and single tensors' values. */
import type { KvCacheType } from './kv-cache';
import type { TypeShareView } from './library';

export interface ModelOverview {
  modelId: number;
  name: string;
  path: string;
  bytes: number;
  version: number;
  architecture: string | null;
  parameters: number;
  fileType: string | null;
  contextLength: number | null;
  layers: number | null;
  embeddingSize: number | null;
  feedForwardSize: number | null;
  heads: number | number[] | null;
  kvHeads: number | number[] | null;
  headSize: number | null;
  vocabSize: number | null;
  tokenizerModel: string | null;
  tokenizerPre: string | null;
  hasChatTemplate: boolean;
  /** The custom recipe Gufo exported the file with ("Q4_K_M; attn_v=Q8_0"), null for any other file. */
  recipe: string | null;
  /** Bytes of all tensor data. */
  weightBytes: number;
  /** weightBytes × 8 / parameters. */
  bitsPerWeight: number;
  tensorCount: number;
  metadataCount: number;
  typeMix: TypeShareView[];
}

/** A number that may not be finite: NaN and ±Infinity travel as strings, since JSON has no such numbers. */
export type JsonNumber = number | 'NaN' | 'Infinity' | '-Infinity';

export interface MetadataEntry {
  key: string;
  /** GGUF value type ("uint32", "string", "array[string]"). */
  type: string;
  /** Scalars as JSON values; arrays as their first items (see `arrayLength`). */
  value: unknown;
  /** Items in an array value, null for scalars. */
  arrayLength: number | null;
}

export interface MetadataQuery {
  /** Case-insensitive substring of the key or of a string value. */
  search?: string;
  offset?: number;
  /** At most 500 (default 50). */
  limit?: number;
}

export interface MetadataPage {
  entries: MetadataEntry[];
  /** Entries matching the search. */
  total: number;
}

export interface ArrayPage {
  key: string;
  /** GGUF type of the items ("string", "int32"). */
  itemType: string;
  offset: number;
  items: unknown[];
  total: number;
}

export interface TensorRow {
  name: string;
  /** ggml type name. */
  type: string;
  /** ggml order: ne[0] (the row length) first. */
  shape: number[];
  elements: number;
  bytes: number;
  /** Absolute file offset of the data. */
  offset: number;
  /** Layer index ("blk.N."), null for tensors outside the blocks. */
  layer: number | null;
  /** The name without the "blk.N." prefix and the ".weight" suffix ("attn_q", "ffn_down", "attn_q.bias"). */
  role: string;
  bitsPerWeight: number;
}

export interface TensorQuery {
  layer?: number | 'none';
  type?: string;
  /** Case-insensitive substring of the name. */
  search?: string;
  offset?: number;
  /** At most 500 (default 100). */
  limit?: number;
}

export interface TensorPage {
  tensors: TensorRow[];
  total: number;
}

/** The layer × role map: for each layer, the tensor of each role and its type. */
export interface LayerMap {
  /** Roles in a stable order (attention first, then feed-forward; a bias right after its weight). */
  roles: string[];
  /** Layers that have tensors, in order; `cells[i]` is role i's tensor, null where the layer has none. */
  layers: { layer: number; cells: (LayerMapCell | null)[] }[];
  /** Tensors outside the blocks (token_embd, output_norm, output). */
  other: { name: string; type: string; recipe: RecipeNote | null }[];
  /** The file type whose recipe the notes compare with (general.file_type); null when it has none. */
  recipeFileType: string | null;
}

export interface LayerMapCell {
  tensor: string;
  type: string;
  recipe: RecipeNote | null;
}

/**
 * Why a tensor's type is not the one the file type's recipe names (llama-quantize's mixture):
 * `fallback`, the recipe's type does not fit the tensor's row length, so the file holds the
 * fallback; else the file was written with another choice (an override, another tool).
 */
export interface RecipeNote {
  /** The recipe's type for the tensor. */
  recipeType: string;
  fallback: boolean;
  /** The tensor's row length (ne[0]), and the recipe type's block size, with `fallback`. */
  rowLength: number;
  blockSize: number;
}

/** The KV cache at the estimate's context with K and V both of one cache type. */
export interface KvCacheTypeEstimate {
  type: KvCacheType;
  /** Null when the metadata lacks what the estimate needs, or the type does not fit the heads (`problem`). */
  kvBytes: number | null;
  /** What it saves against f16 (negative: it takes more, as f32 does); null with kvBytes. */
  savedBytes: number | null;
  /** Why the type cannot hold this model's heads (a block may not straddle two), or null. */
  problem: string | null;
}

export interface MemoryEstimate {
  context: number;
  weightBytes: number;
  /** Null when the metadata lacks what the estimate needs (layers, heads, head sizes). */
  kvBytes: number | null;
  kvBytesPerToken: number | null;
  /** Weights plus KV cache. */
  totalBytes: number;
  /** How the KV figure is computed, or why it is missing. */
  formula: string;
  /** The figures above are f16's, llama.cpp's default; this lists every cache type, f16 first. */
  byCacheType: KvCacheTypeEstimate[];
}

export interface Histogram {
  tensor: string;
  /** Decoded values sampled: all of them up to a cap, else evenly spread rows. */
  sampled: number;
  /** Rows read (of `rows`), each ne[0] values. */
  rowsSampled: number;
  rows: number;
  elements: number;
  /** Sampled values that are NaN or infinite: not in the bins nor in the statistics. */
  nonFinite: number;
  /** Of the finite sampled values (0 when there are none). */
  min: number;
  max: number;
  mean: number;
  std: number;
  /** `bins` equal-width bins from min to max (the last one includes max); they sum to sampled − nonFinite. */
  counts: number[];
}

export interface BlockFieldView {
  /** "d", "dmin", "scales", "mins", "qh (fifth bit)", … */
  name: string;
  /** Consecutive elements each value applies to: the block size for d, 16 or 32 for sub-block scales, 1 per element. */
  span: number;
  values: JsonNumber[];
}

/**
 * One block of a tensor, decoded: its scales and codes, and the values they make. Plain float
 * tensors (F32, F16, BF16) have no blocks: they are shown 32 elements at a time.
 */
export interface BlockView {
  tensor: string;
  type: string;
  block: number;
  blockCount: number;
  /** Elements in this block (a plain tensor's last group may be shorter). */
  blockSize: number;
  /** Index of the block's first element in the tensor, and the row (ne[0] elements) it lies in. */
  firstElement: number;
  row: number;
  bytes: number;
  /** The block's raw bytes in hex, two digits per byte, space-separated. */
  hex: string;
  /** Named fields of the block: d, dmin, per-sub-block scales and mins, extra bit planes (decoded to numbers). */
  fields: BlockFieldView[];
  /** Quantized codes, one per element where the format has them (a plain float's bit pattern). */
  codes: number[] | null;
  /** How values follow from fields and codes. */
  formula: string;
  /** False where only some fields are broken out (the lattice IQ types, TQ1_0); values are exact either way. */
  complete: boolean;
  /** The decoded values, bit-exact as llama.cpp decodes them, each as the shortest decimal that reads back as the same f32. */
  values: JsonNumber[];
}

export interface RequantErrorRow {
  /** Candidate ggml type. */
  type: string;
  bitsPerWeight: number;
  /** Null when the type does not fit the tensor (see `note`). */
  rmse: number | null;
  maxError: number | null;
  /** Why the type was not tried ("rows of 288 values are not whole Q4_K blocks of 256"). */
  note: string | null;
}

/** The result of a 'requant-error' job. */
export interface RequantError {
  tensor: string;
  sourceType: string;
  /** Elements compared (a sample of rows for big tensors; NaN and infinite source values left out). */
  elements: number;
  /** Rows compared, of all the tensor's rows. */
  rowsSampled: number;
  rowCount: number;
  /** Highest bits per weight first. */
  rows: RequantErrorRow[];
}

/** Error figures over some elements: an export's values against its source's, both decoded to f32. */
export interface ErrorFigures {
  elements: number;
  /** sqrt(mean (export − source)²). */
  rmse: number;
  /** ‖export − source‖ / ‖source‖; null when the source is all zeros. */
  relativeError: number | null;
  /** 10·log10(Σ source² / Σ (export − source)²) in dB; null when nothing changed (or no signal). */
  snrDb: number | null;
}

export interface TensorErrorRow extends ErrorFigures {
  name: string;
  /** As TensorRow's. */
  layer: number | null;
  role: string;
  sourceType: string;
  exportType: string;
}

/** The result of a 'tensor-error' job: every tensor of a model against the same tensor of its source. */
export interface TensorErrorComparison {
  modelId: number;
  modelName: string;
  sourceModelId: number;
  sourceName: string;
  /** In the file's order. */
  tensors: TensorErrorRow[];
  /** Pooled per layer, ascending; tensors outside the blocks (layer null) last. */
  byLayer: (ErrorFigures & { layer: number | null })[];
  /** Pooled per role, in order of first appearance. */
  byRole: (ErrorFigures & { role: string })[];
  total: ErrorFigures;
}

export interface InspectorApi {
  modelOverview(modelId: number): Promise<ModelOverview>;
  /** Metadata entries whose key (or string value) contains `search`, paged. */
  modelMetadata(modelId: number, query: MetadataQuery): Promise<MetadataPage>;
  metadataArray(modelId: number, key: string, offset: number, limit: number): Promise<ArrayPage>;
  listTensors(modelId: number, query: TensorQuery): Promise<TensorPage>;
  layerMap(modelId: number): Promise<LayerMap>;
  memoryEstimate(modelId: number, context: number): Promise<MemoryEstimate>;
  /** `bins`: 1 to 1000. */
  tensorHistogram(modelId: number, tensor: string, bins: number): Promise<Histogram>;
  tensorBlock(modelId: number, tensor: string, block: number): Promise<BlockView>;
  /** Starts a 'requant-error' job (result: RequantError): the tensor re-quantized to each candidate type. */
  startRequantError(modelId: number, tensor: string): Promise<string>;
  /**
   * Starts a 'tensor-error' job (result: TensorErrorComparison, progress in tensors): every tensor
   * of `modelId` decoded and compared with the same tensor of `sourceModelId`, by default the
   * source of the latest export that wrote it. Both must hold the same tensors and shapes.
   */
  startTensorError(modelId: number, sourceModelId?: number): Promise<string>;
}

export const INSPECTOR_METHODS = [
  'modelOverview',
  'modelMetadata',
  'metadataArray',
  'listTensors',
  'layerMap',
  'memoryEstimate',
  'tensorHistogram',
  'tensorBlock',
  'startRequantError',
  'startTensorError',
] as const satisfies readonly (keyof InspectorApi)[];
