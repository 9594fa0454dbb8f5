/**
 * The inspector's per-tensor error of a model against its source (core/quality/tensor-error.ts,
 * as `gufo tensor-error`) as a 'tensor-error' job: both files are decoded chunk by chunk (memory
 * bounded by the chunk), and the job yields to the event loop between chunks, so the back end
 * keeps answering meanwhile and a cancel stops it there.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { ModelEntry, TensorErrorComparison } from '../../../src-preload/api';
import { tensorErrorSteps, type TensorErrorReport } from '../../core/quality/tensor-error';
import type { GgufCache, GgufLease } from '../../node/inspect/gguf-cache';
import { ExportStore } from '../../node/store/exports';
import { requireReadableModel, type BackendContext } from '../context';

export function startTensorError(
  ctx: BackendContext,
  files: GgufCache,
  modelId: number,
  sourceModelId?: number,
): string {
  const model = requireReadableModel(ctx, modelId);
  const source = requireReadableModel(ctx, sourceModelId ?? exportSourceOf(ctx, model));
  if (source.id === model.id) throw new Error(`compare ${model.name} with another model, not with itself`);
  // Held until the job ends: the cache may drop the files meanwhile, but must not close them.
  const sourceFile = files.acquire(source.path);
  let modelFile: GgufLease;
  try {
    modelFile = files.acquire(model.path);
  } catch (err) {
    sourceFile.release();
    throw err;
  }
  return ctx.jobs.start(
    { kind: 'tensor-error', title: `Tensor error of ${model.name} against ${source.name}`, unit: 'tensors', modelId },
    async (job) => {
      try {
        const steps = tensorErrorSteps(sourceFile.gguf, modelFile.gguf);
        let report: TensorErrorReport;
        for (let step = steps.next(); ; step = steps.next()) {
          if (step.done) {
            report = step.value;
            break;
          }
          job.progress(step.value.index, step.value.count, step.value.tensor);
          await nextTurn();
          job.signal.throwIfAborted();
        }
        job.progress(report.tensors.length, report.tensors.length, null);
        const comparison: TensorErrorComparison = {
          modelId,
          modelName: model.name,
          sourceModelId: source.id,
          sourceName: source.name,
          ...report,
        };
        return comparison;
      } finally {
        sourceFile.release();
        modelFile.release();
      }
    },
  );
}

/** The source of the latest finished export that wrote this model's file. */
function exportSourceOf(ctx: BackendContext, model: ModelEntry): number {
  const made = new ExportStore(ctx.db)
    .list()
    .find((e) => e.status === 'done' && e.outputModelId === model.id && e.sourceModelId !== null);
  if (!made)
    throw new Error(
      `Gufo has no record of what ${model.name} was made from (the app's exports and gufo quantize's with GUFO_HOME are recorded), or its source left the library: choose the model to compare it with`,
    );
  return made.sourceModelId!;
}
