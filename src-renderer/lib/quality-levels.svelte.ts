/**
 * Quality across quantization levels for the model on show: its exports with size, decode speed
 * and mean KL (one back-end call), reloaded when an export, a quality report or a benchmark ends.
 */
import type { GufoBridge, QualityLevels } from '../../src-preload/api';
import { messageOf } from './format';

/** Jobs whose end can change a row. */
const CHANGING_KINDS = new Set(['export', 'quality', 'bench']);

export class QualityLevelsState {
  view: QualityLevels | null = $state(null);
  error: string | null = $state(null);

  readonly #gufo: GufoBridge;
  readonly #stop: () => void;
  #modelId: number | null = null;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    this.#stop = gufo.onEvent((event) => {
      if (event.type === 'job' && CHANGING_KINDS.has(event.job.kind) && event.job.status === 'done') void this.#load();
    });
  }

  async show(modelId: number): Promise<void> {
    this.#modelId = modelId;
    if (this.view?.sourceModelId !== modelId) this.view = null;
    await this.#load();
  }

  dispose(): void {
    this.#stop();
  }

  async #load(): Promise<void> {
    const modelId = this.#modelId;
    if (modelId === null) return;
    try {
      const view = await this.#gufo.qualityAcrossLevels(modelId);
      // Another model chosen meanwhile: its own load shows it.
      if (modelId !== this.#modelId) return;
      this.view = view;
      this.error = null;
    } catch (err) {
      if (modelId === this.#modelId) this.error = messageOf(err);
    }
  }
}
