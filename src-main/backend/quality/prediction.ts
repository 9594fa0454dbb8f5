/**
 * Every file type's predicted quality for a library model (node/quant-plan.ts, as `gufo quantize
 * --plan [--imatrix]` predicts it) as a 'quality-prediction' job over every tensor of the file,
 * cached in the database per file SHA-256 (and importance matrix SHA-256) with the per-tensor
 * measurements, from which a custom recipe's quality is predicted (recipePrediction); shown with
 * the mean KL of the newest quality report of an export of this source to each type, where one
 * was measured.
 */
import type { ExportApi, ModelEntry, QualityPrediction, TypeQualityPrediction } from '../../../src-preload/api';
import { openGguf } from '../../node/gguf-io';
import { modelSha256 } from '../../node/library/model-sha256';
import { measuredPlan } from '../../node/quant-plan';
import { ExportStore } from '../../node/store/exports';
import {
  QualityPredictionStore,
  type PredictionKey,
  type StoredPrediction,
} from '../../node/store/quality-predictions';
import { QualityReportStore } from '../../node/store/quality-reports';
import { cpuTurnsOf } from '../cpu-turns';
import { requireReadableModel, type BackendContext } from '../context';
import { loadChosenImatrix, type ChosenImatrix } from '../imatrix';
import type { JobContext } from '../jobs';

export interface QualityPredictions {
  api: Pick<ExportApi, 'startQualityPrediction' | 'qualityPrediction'>;
  /** The cached per-tensor measurements for the model's file and importance matrix, or null when none are cached yet. */
  cached(model: ModelEntry, imatrix: ChosenImatrix | null): StoredPrediction | null;
}

export function createQualityPredictions(ctx: BackendContext): QualityPredictions {
  const cache = new QualityPredictionStore(ctx.db);
  const exports = new ExportStore(ctx.db);
  const reports = new QualityReportStore(ctx.db);

  /** The cached prediction with, per type, the newest KL report of a finished export of this model to it. */
  function view(
    model: ModelEntry,
    sha256: string,
    imatrix: ChosenImatrix | null,
    stored: StoredPrediction,
    cached: boolean,
  ): QualityPrediction {
    const exportsOf = new Map(
      exports
        .list()
        .filter((e) => e.status === 'done' && e.sourceModelId === model.id)
        .map((e) => [e.id, e]),
    );
    const measured = new Map<string, TypeQualityPrediction['measured']>();
    // Newest first: the first report of a type is the one shown.
    for (const report of reports.list()) {
      const made = report.exportId === null ? undefined : exportsOf.get(report.exportId);
      if (made && !measured.has(made.fileType))
        measured.set(made.fileType, { meanKl: report.meanKl, reportId: report.id, exportId: made.id });
    }
    const types = stored.types.map((t) => ({ ...t, measured: measured.get(t.fileType) ?? null }));
    return { modelId: model.id, sha256, imatrix: imatrix?.path ?? null, cached, computedAt: stored.createdAt, types };
  }

  const keyOf = (sha256: string, imatrix: ChosenImatrix | null): PredictionKey => ({
    sha256,
    imatrixSha256: imatrix?.sha256 ?? null,
  });
  const chosen = (options: { imatrix?: string } | undefined) =>
    options?.imatrix === undefined ? null : loadChosenImatrix(options.imatrix);

  async function predict(
    job: JobContext,
    model: ModelEntry,
    imatrix: ChosenImatrix | null,
  ): Promise<QualityPrediction> {
    const { sha256, computed } = await modelSha256(ctx.models, model, {
      signal: job.signal,
      onProgress: (bytes) =>
        job.progress(0, null, `Hashing the model file: ${Math.floor((bytes / model.bytes) * 100)}%`),
    });
    if (computed) ctx.events.emit({ type: 'library-changed' });
    const key = keyOf(sha256, imatrix);
    const known = cache.get(key);
    if (known) return view(model, sha256, imatrix, known, true);
    const { gguf, file } = openGguf(model.path);
    try {
      const { rows, measurements } = await measuredPlan(gguf, {
        imatrix: imatrix?.matrix,
        signal: job.signal,
        onProgress: (done, total, next) => job.progress(done, total, next),
      });
      const types = rows.map((r) => ({ fileType: r.type, predicted: r.predicted }));
      return view(model, sha256, imatrix, cache.put(key, types, measurements), false);
    } finally {
      file.close();
    }
  }

  /** The job last started for each question (model and importance matrix). */
  const asked = new Map<string, string>();

  const cached = (model: ModelEntry, imatrix: ChosenImatrix | null) =>
    model.sha256 ? cache.get(keyOf(model.sha256, imatrix)) : null;

  return {
    api: {
      async startQualityPrediction(modelId, options) {
        const model = requireReadableModel(ctx, modelId);
        const imatrix = await chosen(options);
        // One job per question: asked again while it runs, the answer is the running job.
        const question = `${model.id}:${model.path}:${imatrix?.sha256 ?? ''}`;
        const running = asked.get(question);
        if (running !== undefined && ctx.jobs.get(running)?.status === 'running') return running;
        const title = `Predicted quality of ${model.name} per type${imatrix ? ' with its importance matrix' : ''}`;
        const jobId = ctx.jobs.start({ kind: 'quality-prediction', title, unit: 'tensors', modelId }, (job) =>
          cpuTurnsOf(ctx).run(job, title, () => predict(job, model, imatrix)),
        );
        asked.set(question, jobId);
        return jobId;
      },

      async qualityPrediction(modelId, options) {
        const model = requireReadableModel(ctx, modelId);
        const imatrix = await chosen(options);
        const stored = cached(model, imatrix);
        return model.sha256 && stored ? view(model, model.sha256, imatrix, stored, true) : null;
      },
    },
    cached,
  };
}
