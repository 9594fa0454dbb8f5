/** The models loaded on the GPU now, kept live from 'loaded-models' events, and unloading them. */
import { SvelteSet } from 'svelte/reactivity';
import type { GufoBridge, LoadedModel, ModelMemory } from '../../src-preload/api';
import { messageOf } from './format';

/** Everything a loaded model holds on the GPU. */
export function gpuBytes(memory: ModelMemory): number {
  return memory.residentWeightBytes + memory.kvBytes + memory.scratchBytes;
}

export class LoadedModelsStore {
  models: LoadedModel[] = $state([]);
  error: string | null = $state(null);
  /** Paths being unloaded: the engine frees them once the work queued on them ends. */
  readonly unloading = new SvelteSet<string>();
  readonly #gufo: GufoBridge;
  readonly #stopListening: () => void;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    let announced = false;
    this.#stopListening = gufo.onEvent((event) => {
      if (event.type !== 'loaded-models') return;
      announced = true;
      this.models = event.models;
    });
    // An event that arrived meanwhile is newer than this answer.
    void gufo.loadedModels().then(
      (models) => announced || (this.models = models),
      (err: unknown) => (this.error = messageOf(err)),
    );
  }

  dispose(): void {
    this.#stopListening();
  }

  async unload(path: string): Promise<void> {
    this.unloading.add(path);
    try {
      await this.#gufo.unloadModel(path);
      this.error = null;
    } catch (err) {
      this.error = messageOf(err);
    } finally {
      this.unloading.delete(path);
    }
  }
}
