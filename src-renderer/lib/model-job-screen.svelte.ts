/**
 * What the Benchmarks and Export screens' states share: the library's models, kept current; the
 * chosen model; the job started from the screen, and a refresh when a job of its kind ends (here
 * or elsewhere); the error of the last failed action, shown rather than thrown.
 */
import type { GufoBridge, JobKind, ModelEntry } from '../../src-preload/api';
import { messageOf } from './format';
import type { ModelChoice } from './screen-choices.svelte';

export abstract class ModelJobScreen {
  models: ModelEntry[] = $state([]);
  /** False until the screen's data first arrives. */
  loaded = $state(false);
  /** The job started from this screen (its progress comes from the jobs store). */
  jobId: string | null = $state(null);
  error: string | null = $state(null);

  protected readonly gufo: GufoBridge;
  /** Outlives the screen, so the chosen model is still chosen when the user comes back. */
  readonly #choice: ModelChoice;
  readonly #stop: () => void;

  /** `modelId`: the model the route names, else the one chosen on the last visit stays. */
  constructor(gufo: GufoBridge, choice: ModelChoice, modelId: number | null, jobKind: JobKind) {
    this.gufo = gufo;
    this.#choice = choice;
    if (modelId !== null) choice.modelId = modelId;
    this.#stop = gufo.onEvent((event) => {
      if (event.type === 'library-changed') void this.attempt(() => this.loadModels());
      if (event.type === 'job' && event.job.kind === jobKind && event.job.status !== 'running')
        void this.attempt(() => this.afterJob());
    });
  }

  get modelId(): number | null {
    return this.#choice.modelId;
  }

  set modelId(modelId: number | null) {
    this.#choice.modelId = modelId;
  }

  dispose(): void {
    this.#stop();
  }

  protected async loadModels(): Promise<void> {
    this.models = await this.gufo.listModels();
  }

  /** A job of the screen's kind ended: reload what it may have changed. */
  protected abstract afterJob(): Promise<void>;

  /** Runs `work`, showing its error instead of throwing (a user's action clears the last one first). */
  protected async attempt(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.error = messageOf(err);
    }
  }
}
