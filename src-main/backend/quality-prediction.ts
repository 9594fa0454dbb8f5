/**
 * Every file type's predicted quality for a library model (node/quant-plan.ts, as `gufo quantize
 * --plan` predicts it) as a 'quality-prediction' job over every tensor of the file, cached in the
 * database per file SHA-256; shown with the mean KL of the newest quality report of an export of
 * this source to each type, where one was measured.
 */
import type { ExportApi, ModelEntry, QualityPrediction, TypeQualityPrediction } from '../../src-preload/api';
import { openGguf } from '../node/gguf-io';
import { modelSha256 } from '../node/library/model-sha256';
import { quantizePlan } from '../node/quant-plan';
import { ExportStore } from '../node/store/exports';
import { QualityPredictionStore, type StoredPrediction } from '../node/store/quality-predictions';
import { QualityReportStore } from '../node/store/quality-reports';
import { requireReadableModel, type BackendContext } from './context';
import type { JobContext } from './jobs';

export function createQualityPredictions(ctx: BackendContext): Pick<ExportApi, 'startQualityPrediction' | 'qualityPrediction'> {
  const cache = new QualityPredictionStore(ctx.db);
  const exports = new ExportStore(ctx.db);
  const reports = new QualityReportStore(ctx.db);

  /** The cached prediction with, per type, the newest KL report of a finished export of this model to it. */
  function view(model: ModelEntry, sha256: string, stored: StoredPrediction, cached: boolean): QualityPrediction {
    const exportsOf = new Map(exports.list().filter((e) => e.status === 'done' && e.sourceModelId === model.id).map((e) => [e.id, e]));
    const measured = new Map<string, TypeQualityPrediction['measured']>();
    // Newest first: the first report of a type is the one shown.
    for (const report of reports.list()) {
      const made = report.exportId === null ? undefined : exportsOf.get(report.exportId);
      if (made && !measured.has(made.fileType)) measured.set(made.fileType, { meanKl: report.meanKl, reportId: report.id, exportId: made.id });
    }
    const types = stored.types.map((t) => ({ ...t, measured: measured.get(t.fileType) ?? null }));
    return { modelId: model.id, sha256, cached, computedAt: stored.createdAt, types };
  }

  async function predict(job: JobContext, model: ModelEntry): Promise<QualityPrediction> {
    const { sha256, computed } = await modelSha256(ctx.models, model, {
      signal: job.signal,
      onProgress: (bytes) => job.progress(0, null, `Hashing the model file: ${Math.floor((bytes / model.bytes) * 100)}%`),
    });
    if (computed) ctx.events.emit({ type: 'library-changed' });
    const known = cache.get(sha256);
    if (known) return view(model, sha256, known, true);
    const { gguf, file } = openGguf(model.path);
    try {
      const rows = await quantizePlan(gguf, { signal: job.signal, onProgress: (done, total, next) => job.progress(done, total, next) });
      return view(model, sha256, cache.put(sha256, rows.map((r) => ({ fileType: r.type, predicted: r.predicted }))), false);
    } finally {
      file.close();
    }
  }

  return {
    async startQualityPrediction(modelId) {
      const model = requireReadableModel(ctx, modelId);
      return ctx.jobs.start({ kind: 'quality-prediction', title: `Predicted quality of ${model.name} per type`, unit: 'tensors', modelId }, (job) =>
        predict(job, model),
      );
    },

    async qualityPrediction(modelId) {
      const model = requireReadableModel(ctx, modelId);
      const stored = model.sha256 ? cache.get(model.sha256) : null;
      return model.sha256 && stored ? view(model, model.sha256, stored, true) : null;
    },
  };
}
