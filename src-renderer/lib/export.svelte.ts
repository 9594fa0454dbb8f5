/**
 * The Export screen's state: the source model, the plan (every file type with its predicted size),
 * the chosen type and output path, the importance matrix, the running export, and the exports
 * made so far.
 */
import type {
  ExportPlanView,
  ExportRecipe,
  ExportRecord,
  ExportTypeOption,
  GufoBridge,
  ModelEntry,
  QualityTextSource,
} from '../../src-preload/api';
import { ImatrixChoice } from './export-imatrix.svelte';
import {
  parseLayerRange,
  recipeFromChoices,
  recipeRefusal,
  roleTypeGroups,
  type RecipeRole,
  type TypeGroup,
} from './export-recipe';
import { ModelJobScreen } from './model-job-screen.svelte';
import { exportChoices } from './screen-choices.svelte';

/** The type most GGUF files on model hubs come in: a good first choice. */
const USUAL_TYPE = 'Q4_K_M';

export class ExportState extends ModelJobScreen {
  plan: ExportPlanView | null = $state(null);
  allowRequantize = $state(false);
  fileType: string | null = $state(null);
  /** The path typed by the user; null: the chosen type's default. */
  customPath: string | null = $state(null);
  /** The text of the quality report that follows the export, or none. */
  qualityText: QualityTextSource | 'none' = $state('builtin');
  exports: ExportRecord[] = $state([]);
  /** The recipe editor: a type per role ('' or absent: the mixture's), and the layers it applies to ('' and '': all). */
  roleTypes: Partial<Record<RecipeRole, string>> = $state({});
  layerFirst = $state('');
  layerLast = $state('');
  /** The importance matrix the plan, the predictions and the export use. */
  readonly imatrix: ImatrixChoice;
  readonly #stopPredictions: () => void;
  /** Counts plan requests: a slow one (a plan with an importance matrix) must not replace a later one's answer. */
  #planRequests = 0;

  constructor(gufo: GufoBridge, modelId: number | null) {
    super(gufo, exportChoices, modelId, 'export');
    this.imatrix = new ImatrixChoice(gufo, () => void this.attempt(() => this.#loadPlan()));
    // A finished prediction of this model brings the recipe's predicted quality.
    this.#stopPredictions = gufo.onEvent((event) => {
      if (
        event.type === 'job' &&
        event.job.kind === 'quality-prediction' &&
        event.job.status === 'done' &&
        event.job.modelId === this.modelId
      ) {
        void this.attempt(() => this.#loadPlan());
      }
    });
  }

  override dispose(): void {
    super.dispose();
    this.imatrix.dispose();
    this.#stopPredictions();
  }

  get model(): ModelEntry | undefined {
    return this.models.find((m) => m.id === this.modelId);
  }

  get selected(): ExportTypeOption | undefined {
    return this.plan?.options.find((o) => o.fileType === this.fileType);
  }

  /** The layer range typed, or why it is not one. */
  get layerRange() {
    return parseLayerRange(this.layerFirst, this.layerLast, null);
  }

  get recipe(): ExportRecipe | undefined {
    const range = this.layerRange;
    return typeof range === 'string' ? undefined : recipeFromChoices(this.roleTypes, range);
  }

  /** The menu of a role in the recipe editor (the types needing an importance matrix apart). */
  roleTypeGroups(role: RecipeRole): TypeGroup[] {
    return this.plan
      ? roleTypeGroups(role, this.plan.recipeTypes, this.imatrix.path !== undefined, this.roleTypes[role])
      : [];
  }

  /** Why the chosen type cannot be exported with this recipe and matrix, or null. */
  get refusal(): string | null {
    const option = this.selected;
    return option && this.plan
      ? recipeRefusal(option, this.roleTypes, this.imatrix.path !== undefined, this.plan.recipeTypes)
      : null;
  }

  /** A changed recipe changes every predicted size. */
  async recipeChanged(): Promise<void> {
    this.error = typeof this.layerRange === 'string' ? this.layerRange : null;
    if (this.error) return;
    await this.attempt(() => this.#loadPlan());
  }

  get outputPath(): string {
    return this.customPath ?? this.selected?.defaultOutputPath ?? '';
  }

  async load(): Promise<void> {
    await this.attempt(async () => {
      await Promise.all([this.loadModels(), this.#loadExports()]);
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
    this.imatrix.reset();
    await this.attempt(() => this.#loadPlan());
  }

  async setAllowRequantize(allow: boolean): Promise<void> {
    this.allowRequantize = allow;
    this.error = null;
    await this.attempt(() => this.#loadPlan());
  }

  async start(): Promise<void> {
    this.error = null;
    const { modelId, fileType } = this;
    if (modelId === null || fileType === null) {
      this.error = 'Choose a model and a target type.';
      return;
    }
    await this.attempt(async () => {
      this.jobId = await this.gufo.startExport({
        modelId,
        fileType,
        outputPath: this.customPath ?? undefined,
        allowRequantize: this.allowRequantize,
        recipe: this.recipe,
        imatrix: this.imatrix.path,
        qualityReport: this.qualityText === 'none' ? undefined : this.qualityText,
      });
      await this.#loadExports();
    });
  }

  async #loadExports(): Promise<void> {
    this.exports = await this.gufo.listExports();
  }

  async #loadPlan(): Promise<void> {
    const modelId = this.modelId;
    if (modelId === null) return;
    const request = ++this.#planRequests;
    const plan = await this.gufo.exportPlan(modelId, {
      allowRequantize: this.allowRequantize,
      recipe: this.recipe,
      imatrix: this.imatrix.path,
    });
    // Another model, recipe or matrix was chosen meanwhile: its plan is the one to show.
    if (modelId !== this.modelId || request !== this.#planRequests) return;
    this.plan = plan;
    // Keep the chosen type while it stays available, or while only an importance matrix is missing (the recipe
    // editor says which roles need it, rather than another type taking its place unseen); else llama.cpp's
    // usual choice, else the first one.
    const available = plan.options.filter((o) => o.unavailable === null).map((o) => o.fileType);
    const kept = plan.options.some((o) => o.fileType === this.fileType && (o.unavailable === null || o.needsImatrix));
    if (!kept) {
      this.fileType = available.includes(USUAL_TYPE) ? USUAL_TYPE : (available[0] ?? null);
    }
  }

  /** An export ended: list it, and take the next free default names. */
  protected async afterJob(): Promise<void> {
    await Promise.all([this.#loadExports(), this.#loadPlan()]);
  }
}
