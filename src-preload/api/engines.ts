/** The GPU adapter the engines use, the models the engine processes hold on it now, and freeing them. */
import type { KvCacheTypes } from './kv-cache';

/** GPU memory a loaded model holds. */
export interface ModelMemory {
  /** Bytes of the file's tensors the model uses. */
  fileTensorBytes: number;
  /** Bytes of those tensors on the GPU (quantized blocks, repacked; f32 vectors). */
  residentWeightBytes: number;
  kvBytes: number;
  /** The K and V caches' element types. */
  kvTypes: KvCacheTypes;
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

/** The GPU adapter the engine computes on. */
export interface GpuAdapter {
  /** As the driver names it ("NVIDIA GeForce RTX 4090", "SwiftShader Device", "llvmpipe (LLVM 19…)"). */
  name: string;
  vendor: string;
  /** The graphics API WebGPU drives it through: "vulkan", "metal", "d3d12", … */
  backend: string;
  /** A software driver (lavapipe, SwiftShader, WARP): works without a GPU driver, but slowly. */
  software: boolean;
  /** Whether kernels can compute in f16 (the shader-f16 feature). */
  shaderF16: boolean;
  /** Subgroup sizes the kernels may use; null when the adapter has no subgroups. */
  subgroups: { min: number; max: number } | null;
  /**
   * Bytes of memory the adapter computes in, where known: a software adapter runs in the machine's
   * RAM (its total); null for a real GPU, whose memory size WebGPU does not report.
   */
  memoryBytes: number | null;
}

/** The adapter in use, or why there is none (the engine's own words: which driver to install). */
export type GpuAdapterState = { status: 'ready'; adapter: GpuAdapter } | { status: 'none'; reason: string };

export interface EnginesApi {
  /**
   * The GPU adapter the engines use, opening the GPU on first call (asked once, then kept); 'none'
   * with the reason when no adapter can be opened (asked again next time: a driver may have come).
   */
  gpuAdapter(): Promise<GpuAdapterState>;
  /** The models loaded on the GPU now (the 'loaded-models' event says when this changes). */
  loadedModels(): Promise<LoadedModel[]>;
  /**
   * Frees the model's GPU memory once the work queued on it has ended (an answer being written
   * finishes first); the next chat, benchmark or request for it loads it again. No-op when it is
   * not loaded.
   */
  unloadModel(path: string): Promise<void>;
}

export const ENGINES_METHODS = [
  'gpuAdapter',
  'loadedModels',
  'unloadModel',
] as const satisfies readonly (keyof EnginesApi)[];
