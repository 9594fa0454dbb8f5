/**
 * The Export screen's quality reports and benchmark runs (reloaded when a report or a benchmark
 * ends), the text new reports score, and the quality job on show: one started here, or the one
 * the back end starts after an export.
 */
import type { BenchRun, GufoBridge, QualityReport, QualityTextSource } from '../../src-preload/api';
import { messageOf } from './format';

export class QualityStore {
  reports: QualityReport[] = $state([]);
  benches: BenchRun[] = $state([]);
  /** What "Run quality report" scores. */
  text: QualityTextSource = $state('builtin');
  jobId: string | null = $state(null);
  error: string | null = $state(null);

  readonly #gufo: GufoBridge;
  readonly #stop: () => void;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    this.#stop = gufo.onEvent((event) => {
      if (event.type !== 'job') return;
      const { job } = event;
      if (job.kind === 'quality' && job.status === 'running') this.jobId = job.id;
      if (job.kind === 'quality' && job.status !== 'running') void this.#attempt(() => this.#loadReports());
      if (job.kind === 'bench' && job.status === 'done') void this.#attempt(() => this.#loadBenches());
    });
  }

  async load(): Promise<void> {
    await this.#attempt(() => Promise.all([this.#loadReports(), this.#loadBenches()]).then(() => {}));
  }

  async start(exportId: number): Promise<void> {
    this.error = null;
    await this.#attempt(async () => {
      this.jobId = await this.#gufo.startQualityReport({ exportId, text: this.text });
    });
  }

  dispose(): void {
    this.#stop();
  }

  async #loadReports(): Promise<void> {
    this.reports = await this.#gufo.listQualityReports();
  }

  async #loadBenches(): Promise<void> {
    this.benches = await this.#gufo.listBenchmarks();
  }

  async #attempt(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.error = messageOf(err);
    }
  }
}
