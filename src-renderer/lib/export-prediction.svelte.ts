/**
 * The Export screen's predicted quality per file type for the chosen model (and importance matrix): the cached prediction,
 * else a 'quality-prediction' job started for it (the back end hashes the file and measures every
 * tensor's sample), taken when it ends.
 */
import type { GufoBridge, QualityPrediction, TypeQualityPrediction } from '../../src-preload/api';
import { messageOf } from './format';

/**
 * What the cards keep showing while the prediction for `modelId` is fetched or computed: the one
 * they show, until the new one replaces it, unless it is another model's.
 */
export function shownWhileLoading(shown: QualityPrediction | null, modelId: number | null): QualityPrediction | null {
  return shown !== null && shown.modelId === modelId ? shown : null;
}

export class PredictionStore {
  prediction: QualityPrediction | null = $state(null);
  jobId: string | null = $state(null);
  error: string | null = $state(null);
  #modelId: number | null = null;
  #imatrix: string | undefined;
  readonly #gufo: GufoBridge;
  readonly #stop: () => void;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    this.#stop = gufo.onEvent((event) => {
      // Any prediction job of this model (it may end before startQualityPrediction answers).
      if (
        event.type !== 'job' ||
        event.job.kind !== 'quality-prediction' ||
        event.job.modelId !== this.#modelId ||
        event.job.status === 'running'
      )
        return;
      if (event.job.result && event.job.result.imatrix !== (this.#imatrix ?? null)) return; // one for another matrix
      if (event.job.result) this.prediction = event.job.result;
      if (event.job.status === 'failed') this.error = event.job.error;
      this.jobId = null;
    });
  }

  /** The prediction per file type, for the cards. */
  get byType(): Map<string, TypeQualityPrediction> {
    // Rebuilt from the reactive prediction on every read and never mutated: a plain Map is enough.
    // eslint-disable-next-line svelte/prefer-svelte-reactivity
    return new Map((this.prediction?.types ?? []).map((t) => [t.fileType, t]));
  }

  async load(modelId: number | null, imatrix?: string): Promise<void> {
    this.#modelId = modelId;
    this.#imatrix = imatrix;
    this.prediction = shownWhileLoading(this.prediction, modelId);
    this.error = null;
    this.jobId = null;
    if (modelId === null) return;
    try {
      const cached = await this.#gufo.qualityPrediction(modelId, { imatrix });
      if (modelId !== this.#modelId || imatrix !== this.#imatrix) return; // another model or matrix was chosen meanwhile
      if (cached) this.prediction = cached;
      else {
        const jobId = await this.#gufo.startQualityPrediction(modelId, { imatrix });
        // Unless the job has already answered for this matrix (its event may come first).
        if (this.prediction?.imatrix !== (imatrix ?? null)) this.jobId = jobId;
      }
    } catch (err) {
      this.error = messageOf(err);
    }
  }

  dispose(): void {
    this.#stop();
  }
}
