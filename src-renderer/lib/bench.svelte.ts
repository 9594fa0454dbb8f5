/** The Benchmarks screen's state: the models to pick from, the form, the running job and the stored runs. */
import type { BenchRun, GufoBridge, ModelEntry } from '../../src-preload/api';
import { generativeModels } from './library-view';
import { ModelJobScreen } from './model-job-screen.svelte';
import { benchChoices } from './screen-choices.svelte';

export class BenchState extends ModelJobScreen {
  runs: BenchRun[] = $state([]);

  constructor(gufo: GufoBridge, modelId: number | null) {
    super(gufo, benchChoices, modelId, 'bench');
  }

  get promptTokens(): number {
    return benchChoices.promptTokens;
  }

  set promptTokens(count: number) {
    benchChoices.promptTokens = count;
  }

  get genTokens(): number {
    return benchChoices.genTokens;
  }

  set genTokens(count: number) {
    benchChoices.genTokens = count;
  }

  /** Models Gufo can run (not a vocabulary-only file, a missing part or an unsupported architecture). */
  get runnable(): ModelEntry[] {
    return generativeModels(this.models);
  }

  async load(): Promise<void> {
    await this.attempt(async () => {
      await Promise.all([this.loadModels(), this.#loadRuns()]);
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
    await this.attempt(async () => {
      this.jobId = await this.gufo.startBenchmark({
        modelId,
        promptTokens: this.promptTokens,
        genTokens: this.genTokens,
      });
    });
  }

  async remove(id: number): Promise<void> {
    this.error = null;
    await this.attempt(async () => {
      await this.gufo.deleteBenchmark(id);
      await this.#loadRuns();
    });
  }

  protected override async loadModels(): Promise<void> {
    await super.loadModels();
    if (this.modelId === null || !this.runnable.some((m) => m.id === this.modelId))
      this.modelId = this.runnable[0]?.id ?? null;
  }

  async #loadRuns(): Promise<void> {
    this.runs = await this.gufo.listBenchmarks();
  }

  /** A benchmark ended (here or elsewhere): its run may be new. */
  protected afterJob(): Promise<void> {
    return this.#loadRuns();
  }
}
