/** The models the engine processes hold on the GPU now, and freeing them. */

/** GPU memory a loaded model holds. */
export interface ModelMemory {
  /** Bytes of the file's tensors the model uses. */
  fileTensorBytes: number;
  /** Bytes of those tensors on the GPU (quantized blocks, repacked; f32 vectors). */
  residentWeightBytes: number;
  kvBytes: number;
  /** Activations, RoPE table, ids. */
  scratchBytes: number;
}

export interface LoadedModel {
  path: string;
  /** The model's name, as the library shows it (its file name without .gguf). */
  name: string;
  /** Tokens of context its KV cache holds. */
  contextSize: number;
  memory: ModelMemory;
}

export interface EnginesApi {
  /** The models loaded on the GPU now (the 'loaded-models' event says when this changes). */
  loadedModels(): Promise<LoadedModel[]>;
  /**
   * Frees the model's GPU memory once the work queued on it has ended (an answer being written
   * finishes first); the next chat, benchmark or request for it loads it again. No-op when it is
   * not loaded.
   */
  unloadModel(path: string): Promise<void>;
}

export const ENGINES_METHODS = ['loadedModels', 'unloadModel'] as const satisfies readonly (keyof EnginesApi)[];
