/**
 * The inspector's tensor-error panel for one model: which model it is compared with (by default
 * the source of the export that wrote it), the 'tensor-error' job, and how its result is shown.
 */
import type { GufoApi, JobState, ModelEntry, TensorErrorComparison } from '../../src-preload/api';
import type { ErrorMetric } from '../components/inspector/tensor-error-chart';
import { messageOf } from './format';
import { runnableModels } from './library-view';
import { jobResult, type JobsStore } from './jobs.svelte';

/**
 * The models `self` can be compared with, tensor by tensor: the runnable ones of its shape (the
 * same architecture and parameter count), itself left out.
 */
export function comparableModels(models: readonly ModelEntry[], self: ModelEntry | undefined): ModelEntry[] {
  return runnableModels(models).filter(
    (m) =>
      self !== undefined &&
      m.id !== self.id &&
      m.architecture === self.architecture &&
      m.parameters !== null &&
      m.parameters === self.parameters,
  );
}

export class TensorErrorStore {
  /** Models it can be compared with: every runnable model of its shape but itself. */
  candidates: ModelEntry[] = $state([]);
  sourceId: number | null = $state(null);
  /** Whether the model is an export Gufo made (its source is then the default). */
  isExport = $state(false);
  loaded = $state(false);
  jobId: string | null = $state(null);
  /** Why the candidates could not be listed or the job not started. */
  error: string | null = $state(null);
  metric: ErrorMetric = $state('snr');
  /** The role the chart shows per layer; null: every tensor of the layer, pooled. */
  role: string | null = $state(null);

  constructor(
    private readonly gufo: GufoApi,
    private readonly jobs: JobsStore,
    readonly modelId: number,
  ) {}

  get job(): JobState | undefined {
    return this.jobs.get(this.jobId);
  }

  get result(): TensorErrorComparison | null {
    return jobResult(this.job, 'tensor-error');
  }

  async load(): Promise<void> {
    try {
      const [models, exports] = await Promise.all([this.gufo.listModels(), this.gufo.listExports()]);
      this.candidates = comparableModels(
        models,
        models.find((m) => m.id === this.modelId),
      );
      const made = exports.find(
        (e) => e.status === 'done' && e.outputModelId === this.modelId && e.sourceModelId !== null,
      );
      this.isExport = made !== undefined;
      this.sourceId ??= made?.sourceModelId ?? null;
      this.loaded = true;
    } catch (err) {
      this.error = messageOf(err);
    }
  }

  async start(): Promise<void> {
    this.error = null;
    if (this.sourceId === null) {
      this.error = 'Choose the model to compare with.';
      return;
    }
    try {
      this.jobId = await this.gufo.startTensorError(this.modelId, this.sourceId);
    } catch (err) {
      this.error = messageOf(err);
    }
  }

  cancel(): Promise<void> {
    return this.jobId === null ? Promise.resolve() : this.jobs.cancel(this.jobId);
  }
}
