/**
 * The quantization inspector: what a GGUF file holds, down to one block's scales and codes.
 * Files are opened lazily (headers only, tensor data mapped) and kept in a small cache; the
 * re-quantization error and the per-tensor error against a source (quality/tensor-error.ts) run
 * as jobs.
 */
import type { InspectorApi, ModelEntry } from '../../src-preload/api';
import type { GgufFile } from '../core/gguf/gguf-file';
import { tensorBlock } from '../node/inspect/block-view';
import { GgufCache } from '../node/inspect/gguf-cache';
import { tensorHistogram } from '../node/inspect/histogram';
import { arrayPage, metadataPage } from '../node/inspect/metadata';
import { memoryEstimate, modelOverview } from '../node/inspect/overview';
import { requantError } from '../node/inspect/requant-error';
import { layerMap, listTensors, requireTensor } from '../node/inspect/tensor-table';
import { requireReadableModel, type BackendContext } from './context';
import { promised } from './promised';
import { startTensorError } from './quality/tensor-error';

export function createInspectorApi(ctx: BackendContext): InspectorApi {
  const files = new GgufCache();
  ctx.onClose(() => files.close());

  /** Runs `work` on the model's file. */
  const inspect = <T>(modelId: number, work: (gguf: GgufFile, model: ModelEntry) => T): T => {
    const model = requireReadableModel(ctx, modelId);
    return files.use(model.path, (gguf) => work(gguf, model));
  };

  return promised<InspectorApi>({
    modelOverview: (modelId) => inspect(modelId, modelOverview),
    modelMetadata: (modelId, query) => inspect(modelId, (gguf) => metadataPage(gguf, query)),
    metadataArray: (modelId, key, offset, limit) => inspect(modelId, (gguf) => arrayPage(gguf, key, offset, limit)),
    listTensors: (modelId, query) => inspect(modelId, (gguf) => listTensors(gguf, query)),
    layerMap: (modelId) => inspect(modelId, layerMap),
    memoryEstimate: (modelId, context) => inspect(modelId, (gguf) => memoryEstimate(gguf, context)),
    tensorHistogram: (modelId, tensor, bins) =>
      inspect(modelId, (gguf) => tensorHistogram(gguf, requireTensor(gguf, tensor), bins)),
    tensorBlock: (modelId, tensor, block) =>
      inspect(modelId, (gguf) => tensorBlock(gguf, requireTensor(gguf, tensor), block)),

    startRequantError(modelId, tensorName) {
      const model = requireReadableModel(ctx, modelId);
      // Held until the job ends: the cache may drop the file meanwhile, but must not close it.
      const lease = files.acquire(model.path);
      try {
        const tensor = requireTensor(lease.gguf, tensorName);
        return ctx.jobs.start(
          {
            kind: 'requant-error',
            title: `Re-quantization error of ${tensor.name} (${model.name})`,
            unit: 'steps',
            modelId,
          },
          (job) =>
            requantError(lease.gguf, tensor, {
              signal: job.signal,
              onProgress: (done, total, next) => job.progress(done, total, next),
            }).finally(() => lease.release()),
        );
      } catch (err) {
        lease.release();
        throw err;
      }
    },

    startTensorError: (modelId, sourceModelId) => startTensorError(ctx, files, modelId, sourceModelId),
  });
}
