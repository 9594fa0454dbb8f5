/** The inspector's summary of a model and its memory estimate, from the model summary in core. */
import {
  KV_CACHE_TYPES,
  type KvCacheTypeEstimate,
  type MemoryEstimate,
  type ModelEntry,
  type ModelOverview,
} from '../../../src-preload/api';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { kvCacheTypeProblem } from '../../core/kv-cache-types';
import { summarizeModel } from '../../core/model-summary';

export function modelOverview(gguf: GgufFile, model: ModelEntry): ModelOverview {
  const s = summarizeModel(gguf);
  const perLayer = (v: number | readonly number[] | null) => (v === null || typeof v === 'number' ? v : [...v]);
  return {
    modelId: model.id,
    name: model.name,
    path: model.path,
    bytes: gguf.fileBytes,
    version: gguf.version,
    architecture: s.architecture,
    parameters: s.parameters,
    fileType: s.fileType,
    contextLength: s.contextLength,
    layers: s.layers,
    embeddingSize: s.embeddingSize,
    feedForwardSize: s.feedForwardSize,
    heads: perLayer(s.heads),
    kvHeads: perLayer(s.kvHeads),
    headSize: s.headSize,
    vocabSize: s.vocabSize,
    tokenizerModel: s.tokenizerModel,
    tokenizerPre: s.tokenizerPre,
    hasChatTemplate: s.hasChatTemplate,
    recipe: s.recipe,
    weightBytes: s.weightBytes,
    bitsPerWeight: s.parameters ? (s.weightBytes * 8) / s.parameters : 0,
    tensorCount: gguf.tensors.length,
    metadataCount: gguf.kvs.length,
    typeMix: s.typeMix.map((t) => ({ ...t })),
  };
}

/** Contexts the estimate accepts: up to 16M tokens, far beyond any model's. */
export const MAX_CONTEXT = 2 ** 24;

export function memoryEstimate(gguf: GgufFile, context: number): MemoryEstimate {
  if (!Number.isSafeInteger(context) || context < 1 || context > MAX_CONTEXT) {
    throw new Error(`context must be a whole number of tokens from 1 to ${MAX_CONTEXT}, got ${context}`);
  }
  const { weightBytes, kvCache, headSize, valueHeadSize } = summarizeModel(gguf, context);
  const f16 = kvCache?.bytes ?? null;
  const byCacheType = KV_CACHE_TYPES.map((type): KvCacheTypeEstimate => {
    const problem =
      headSize === null || valueHeadSize === null
        ? null
        : (kvCacheTypeProblem(type, headSize) ?? kvCacheTypeProblem(type, valueHeadSize));
    const kvBytes =
      f16 === null || problem !== null ? null : summarizeModel(gguf, context, { k: type, v: type }).kvCache!.bytes;
    return { type, kvBytes, savedBytes: kvBytes === null ? null : f16! - kvBytes, problem };
  });
  return {
    context,
    weightBytes,
    kvBytes: f16,
    kvBytesPerToken: kvCache?.bytesPerToken ?? null,
    totalBytes: weightBytes + (kvCache?.bytes ?? 0),
    formula: kvCache?.formula ?? 'no KV cache estimate: the metadata lacks the layer count, head counts or head size',
    byCacheType,
  };
}
