/**
 * The Export screen's state: the source model, the plan (every file type with its predicted size),
 * the chosen type and output path, the running export, and the exports made so far.
 */
import type { ExportPlanView, ExportRecord, ExportTypeOption, GufoBridge, ModelEntry, QualityTextSource } from '../../src-preload/api';
import { messageOf } from './format';

/** The type most GGUF files on model hubs come in: a good first choice. */
const USUAL_TYPE = 'Q4_K_M';

export class ExportState {
  models: ModelEntry[] = $state([]);
  modelId: number | null = $state(null);
  plan: ExportPlanView | null = $state(null);
  allowRequantize = $state(false);
  fileType: string | null = $state(null);
  /** The path typed by the user; null: the chosen type's default. */
  customPath: string | null = $state(null);
  /** The text of the quality report that follows the export, or none. */
  qualityText: QualityTextSource | 'none' = $state('builtin');
  /** The export started from this screen. */
  jobId: string | null = $state(null);
  exports: ExportRecord[] = $state([]);
  loaded = $state(false);
  error: string | null = $state(null);

  readonly #gufo: GufoBridge;
  readonly #stop: () => void;

  constructor(gufo: GufoBridge, modelId: number | null) {
    this.#gufo = gufo;
    this.modelId = modelId;
    this.#stop = gufo.onEvent((event) => {
      if (event.type === 'library-changed') void this.#attempt(() => this.#loadModels());
      if (event.type === 'job' && event.job.kind === 'export' && event.job.status !== 'running') void this.#attempt(() => this.#afterExport());
    });
  }

  get model(): ModelEntry | undefined {
    return this.models.find((m) => m.id === this.modelId);
  }

  get selected(): ExportTypeOption | undefined {
    return this.plan?.options.find((o) => o.fileType === this.fileType);
  }

  get outputPath(): string {
    return this.customPath ?? this.selected?.defaultOutputPath ?? '';
  }

  async load(): Promise<void> {
    await this.#attempt(async () => {
      await Promise.all([this.#loadModels(), this.#loadExports()]);
      await this.#loadPlan();
      this.loaded = true;
    });
  }

  async chooseModel(modelId: number | null): Promise<void> {
    if (modelId === this.modelId) return;
    this.modelId = modelId;
    this.plan = null;
    this.fileType = null;
    this.customPath = null;
    this.error = null;
    await this.#attempt(() => this.#loadPlan());
  }

  async setAllowRequantize(allow: boolean): Promise<void> {
    this.allowRequantize = allow;
    this.error = null;
    await this.#attempt(() => this.#loadPlan());
  }

  async start(): Promise<void> {
    this.error = null;
    const { modelId, fileType } = this;
    if (modelId === null || fileType === null) {
      this.error = 'Choose a model and a target type.';
      return;
    }
    await this.#attempt(async () => {
      this.jobId = await this.#gufo.startExport({
        modelId,
        fileType,
        outputPath: this.customPath ?? undefined,
        allowRequantize: this.allowRequantize,
        qualityReport: this.qualityText === 'none' ? undefined : this.qualityText,
      });
      await this.#loadExports();
    });
  }

  dispose(): void {
    this.#stop();
  }

  async #loadModels(): Promise<void> {
    this.models = await this.#gufo.listModels();
  }

  async #loadExports(): Promise<void> {
    this.exports = await this.#gufo.listExports();
  }

  async #loadPlan(): Promise<void> {
    const modelId = this.modelId;
    if (modelId === null) return;
    const plan = await this.#gufo.exportPlan(modelId, { allowRequantize: this.allowRequantize });
    if (modelId !== this.modelId) return; // another model was chosen meanwhile
    this.plan = plan;
    // Keep the chosen type while it stays available; else llama.cpp's usual choice, else the first one.
    const available = plan.options.filter((o) => o.unavailable === null).map((o) => o.fileType);
    if (this.fileType === null || !available.includes(this.fileType)) {
      this.fileType = available.includes(USUAL_TYPE) ? USUAL_TYPE : (available[0] ?? null);
    }
  }

  /** An export ended: list it, and take the next free default names. */
  async #afterExport(): Promise<void> {
    await Promise.all([this.#loadExports(), this.#loadPlan()]);
  }

  async #attempt(work: () => Promise<void>): Promise<void> {
    try {
      await work();
    } catch (err) {
      this.error = messageOf(err);
    }
  }
}
