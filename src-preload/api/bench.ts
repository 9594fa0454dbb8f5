/** Benchmarks: prefill and decode speed of a model on this machine's GPU, kept over time. */

export interface BenchRequest {
  modelId: number;
  /** Prompt tokens to prefill (default 512). */
  promptTokens?: number;
  /** Tokens to decode (default 128). */
  genTokens?: number;
}

export interface BenchRun {
  id: number;
  modelId: number | null;
  modelName: string;
  modelPath: string;
  fileSha256: string | null;
  /** Adapter name ("SwiftShader Device (Subzero)"). */
  adapter: string;
  /** "vulkan", "metal", "d3d12". */
  backend: string;
  promptTokens: number;
  genTokens: number;
  prefillTokS: number;
  decodeTokS: number;
  ttftMs: number;
  loadMs: number;
  rooflineFraction: number | null;
  appVersion: string;
  createdAt: string;
}

export interface BenchApi {
  /** Starts a 'bench' job; its result is the stored BenchRun. */
  startBenchmark(request: BenchRequest): Promise<string>;
  /** Newest first, optionally for one model. */
  listBenchmarks(modelId?: number): Promise<BenchRun[]>;
  deleteBenchmark(id: number): Promise<void>;
}

export const BENCH_METHODS = [
  'startBenchmark',
  'listBenchmarks',
  'deleteBenchmark',
] as const satisfies readonly (keyof BenchApi)[];
