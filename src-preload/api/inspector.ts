/** Looking inside one GGUF file: metadata, tensors, types, memory, and single tensors' values. */
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
  /** Bytes of all tensor data. */
  weightBytes: number;
  /** weightBytes × 8 / parameters. */
  bitsPerWeight: number;
  tensorCount: number;
  metadataCount: number;
  typeMix: TypeShareView[];
}

export interface MetadataEntry {
  key: string;
  /** GGUF value type ("uint32", "string", "array[string]"). */
  type: string;
  /** Scalars as JSON values; arrays as their first items (see `arrayLength`). */
  value: unknown;
  /** Items in an array value, null for scalars. */
  arrayLength: number | null;
}

export interface MetadataPage {
  entries: MetadataEntry[];
  /** Entries matching the search. */
  total: number;
}

export interface ArrayPage {
  key: string;
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
  /** The name without the "blk.N." prefix and ".weight"/".bias" suffix ("attn_q", "ffn_down"). */
  role: string;
  bitsPerWeight: number;
}

export interface TensorQuery {
  layer?: number | 'none';
  type?: string;
  /** Substring of the name. */
  search?: string;
  offset?: number;
  limit?: number;
}

export interface TensorPage {
  tensors: TensorRow[];
  total: number;
}

/** The layer × role map: for each layer, the type of each role's tensor. */
export interface LayerMap {
  /** Roles in a stable order (attention first, then feed-forward). */
  roles: string[];
  layers: { layer: number; types: (string | null)[] }[];
  /** Tensors outside the blocks (token_embd, output_norm, output). */
  other: { name: string; type: string }[];
}

export interface MemoryEstimate {
  context: number;
  weightBytes: number;
  kvBytes: number;
  kvBytesPerToken: number;
  totalBytes: number;
  /** How the KV figure is computed. */
  formula: string;
}

export interface Histogram {
  tensor: string;
  /** Decoded values sampled: all of them up to a cap, else evenly spread rows. */
  sampled: number;
  elements: number;
  min: number;
  max: number;
  mean: number;
  std: number;
  /** `bins` equal-width bins from min to max. */
  counts: number[];
}

/** One block of a tensor, decoded: its scales and codes, and the values they make. */
export interface BlockView {
  tensor: string;
  type: string;
  block: number;
  blockCount: number;
  /** Elements per block. */
  blockSize: number;
  bytes: number;
  /** The block's raw bytes in hex. */
  hex: string;
  /** Named fields of the block: d, dmin, per-sub-block scales and mins, … (decoded to numbers). */
  fields: { name: string; values: number[] }[];
  /** Quantized codes, one per element where the format has them. */
  codes: number[] | null;
  /** The decoded values, bit-exact as llama.cpp decodes them. */
  values: number[];
}

export interface RequantErrorRow {
  /** Candidate ggml type. */
  type: string;
  bitsPerWeight: number;
  rmse: number;
  maxError: number;
}

/** The result of a 'requant-error' job. */
export interface RequantError {
  tensor: string;
  sourceType: string;
  /** Elements compared (a sample of rows for big tensors). */
  elements: number;
  rows: RequantErrorRow[];
}

export interface InspectorApi {
  modelOverview(modelId: number): Promise<ModelOverview>;
  /** Metadata entries whose key (or string value) contains `search`, paged. */
  modelMetadata(modelId: number, query: { search?: string; offset?: number; limit?: number }): Promise<MetadataPage>;
  metadataArray(modelId: number, key: string, offset: number, limit: number): Promise<ArrayPage>;
  listTensors(modelId: number, query: TensorQuery): Promise<TensorPage>;
  layerMap(modelId: number): Promise<LayerMap>;
  memoryEstimate(modelId: number, context: number): Promise<MemoryEstimate>;
  tensorHistogram(modelId: number, tensor: string, bins: number): Promise<Histogram>;
  tensorBlock(modelId: number, tensor: string, block: number): Promise<BlockView>;
  /** Starts a 'requant-error' job (result: RequantError): the tensor re-quantized to each candidate type. */
  startRequantError(modelId: number, tensor: string): Promise<string>;
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
] as const satisfies readonly (keyof InspectorApi)[];
