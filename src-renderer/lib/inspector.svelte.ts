/**
 * The inspector screen's state for one model: its overview, the open section, the selected
 * tensor, and the panels' stores (kept here so switching sections keeps searches and pages).
 */
import type { GufoApi, LayerMap, MemoryEstimate, ModelOverview } from '../../src-preload/api';
import type { JobsStore } from './jobs.svelte';
import { Loadable } from './inspector-loadable.svelte';
import { MetadataStore } from './inspector-metadata.svelte';
import { TensorErrorStore } from './inspector-tensor-error.svelte';
import { TensorDetailStore } from './inspector-tensor.svelte';
import { TensorTableStore } from './inspector-tensors.svelte';
import { typeColors } from './inspector-view';
import { memoryBudget, type MemoryBudget } from './export-budget';

export type InspectorSection = 'metadata' | 'tensors' | 'layers' | 'types' | 'memory' | 'error' | 'tensor';

/** The memory panel: weights + KV cache at a context the user picks. */
export class MemoryStore {
  context = $state(0);
  readonly estimate = new Loadable<MemoryEstimate>();
  /** The GPU memory budget the contexts are set against (as Export's); null where there is none. */
  budget: MemoryBudget | null = $state(null);

  constructor(
    private readonly gufo: GufoApi,
    private readonly modelId: number,
  ) {}

  /** The setting, else a software adapter's RAM (asking for the adapter opens the GPU, so only when the setting is automatic). */
  async loadBudget(): Promise<void> {
    try {
      const { gpuMemoryBudgetGiB } = await this.gufo.getSettings();
      this.budget = memoryBudget(gpuMemoryBudgetGiB, gpuMemoryBudgetGiB === null ? await this.gufo.gpuAdapter() : null);
    } catch {
      this.budget = null; // no budget to tell: the choices say nothing of it
    }
  }

  setContext(context: number): void {
    this.context = context;
    if (Number.isSafeInteger(context) && context > 0)
      void this.estimate.load(() => this.gufo.memoryEstimate(this.modelId, context));
  }
}

export class InspectorStore {
  readonly overview = new Loadable<ModelOverview>();
  readonly layerMap = new Loadable<LayerMap>();
  readonly metadata: MetadataStore;
  readonly tensors: TensorTableStore;
  readonly memory: MemoryStore;
  readonly tensorError: TensorErrorStore;
  section: InspectorSection = $state('metadata');
  detail: TensorDetailStore | null = $state(null);
  /** A colour per tensor type in the file, for the layer map and the types panel. */
  readonly colors = $derived(typeColors(this.overview.value?.typeMix ?? []));

  constructor(
    readonly gufo: GufoApi,
    private readonly jobs: JobsStore,
    readonly modelId: number,
  ) {
    this.metadata = new MetadataStore(gufo, modelId);
    this.tensors = new TensorTableStore(gufo, modelId);
    this.memory = new MemoryStore(gufo, modelId);
    this.tensorError = new TensorErrorStore(gufo, jobs, modelId);
  }

  async load(): Promise<void> {
    await this.overview.load(() => this.gufo.modelOverview(this.modelId));
    const context = this.overview.value?.contextLength;
    this.memory.setContext(context && context > 0 ? context : 4096);
  }

  loadLayerMap(): void {
    this.layerMap.ensure(() => this.gufo.layerMap(this.modelId));
  }

  /** Opens a tensor's detail (its histogram, blocks and re-quantization error). */
  select(tensor: string): void {
    if (this.detail?.tensor !== tensor) {
      this.detail = new TensorDetailStore(this.gufo, this.jobs, this.modelId, tensor);
      void this.detail.load();
    }
    this.section = 'tensor';
  }
}
