/** The Benchmarks screen's state: the models to pick from, the form, the running job and the stored runs. */
import type { BenchRun, GufoBridge, ModelEntry } from '../../src-preload/api';
import { messageOf } from './format';

export class BenchState {
  models: ModelEntry[] = $state([]);
  runs: BenchRun[] = $state([]);
  /** False until models and runs first arrive. */
  loaded = $state(false);
  modelId: number | null = $state(null);
  promptTokens = $state(512);
  genTokens = $state(128);
  /** The benchmark started from this screen (its progress comes from the jobs store). */
  jobId: string | null = $state(null);
  error: string | null = $state(null);

  readonly #gufo: GufoBridge;
  readonly #stop: () => void;

  constructor(gufo: GufoBridge, modelId: number | null) {
    this.#gufo = gufo;
    this.modelId = modelId;
    this.#stop = gufo.onEvent((event) => {
      if (event.type === 'library-changed') void this.#attempt(() => this.#loadModels());
      // A benchmark ended (here or elsewhere): its run may be new.
      if (event.type === 'job' && event.job.kind === 'bench' && event.job.status !== 'running') void this.#attempt(() => this.#loadRuns());
    });
  }

  /** Models that can run: in the library and readable. */
  get runnable(): ModelEntry[] {
    return this.models.filter((m) => m.error === null);
  }

  async load(): Promise<void> {
    await this.#attempt(async () => {
      await Promise.all([this.#loadModels(), this.#loadRuns()]);
      this.loaded = true;
    });
  }

  async run(): Promise<void> {
    this.error = null;
    const modelId = this.modelId;
    if (modelId === null) {
      this.error = 'Choose a model to benchmark.';
      return;
    }
    await this.#attempt(async () => {
      this.jobId = await this.#gufo.startBenchmark({ modelId, promptTokens: this.promptTokens, genTokens: this.genTokens });
    });
  }

  async remove(id: number): Promise<void> {
    this.error = null;
    await this.#attempt(async () => {
      await this.#gufo.deleteBenchmark(id);
      await this.#loadRuns();
    });
  }

  dispose(): void {
    this.#stop();
  }

  async #loadModels(): Promise<void> {
    this.models = await this.#gufo.listModels();
    if (this.modelId === null || !this.runnable.some((m) => m.id === this.modelId)) this.modelId = this.runnable[0]?.id ?? null;
  }

  async #loadRuns(): Promise<void> {
    this.runs = await this.#gufo.listBenchmarks();
  }

  /** Runs `work`, showing its error instead of throwing (a user's action clears the last one first). */
  async #attempt(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.error = messageOf(err);
    }
  }
}
