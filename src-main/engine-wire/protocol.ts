/**
 * Messages between a host (the Electron main process, the CLI, tests) and the engine process.
 * Every request carries an id chosen by the host; everything the engine sends about a request
 * (progress and token events, then exactly one final answer: a result or an error) carries the
 * same id, so several requests can be in flight at once. Messages with id null are about the
 * engine itself (a fatal error just before it exits).
 */
import type { WindowComparison, WindowScores } from '../core/quality/divergence';
import type { JsonConstraint } from '../core/constrained/token-constraint';
import type { ModelMemory } from '../../src-preload/api/engines';
import type { Pooling, PoolingType } from '../core/embedding-pooling';
import type { KvCacheTypes } from '../../src-preload/api/kv-cache';

export type { WindowComparison, WindowScores, JsonConstraint, ModelMemory, Pooling, PoolingType };

// What crosses the process boundary is declared here, and the engine's own modules import it from
// here: hosts read this file without reaching into the GPU code.

export interface GpuInfo {
  /** Adapter name as the driver reports it ("NVIDIA GeForce RTX 4090", "SwiftShader Device"). */
  readonly name: string;
  readonly vendor: string;
  readonly architecture: string;
  /** "vulkan", "metal", "d3d12", ... (Dawn's backend: GUFO_BACKEND, or the platform's default). */
  readonly backend: string;
  /** Software adapter (SwiftShader, WARP): slow, for tests and machines without a GPU driver. */
  readonly isFallbackAdapter: boolean;
  /**
   * The kernels take the shapes made for an adapter that runs on the CPU (threads own whole rows,
   * row-grouped K-quant weights, no barriers) rather than a GPU's: isFallbackAdapter, unless
   * GUFO_KERNEL_SHAPE=gpu|cpu says otherwise (device.ts).
   */
  readonly cpuShapes: boolean;
  /** Subgroup sizes the adapter may use (0 when it does not say). */
  readonly subgroupMinSize: number;
  readonly subgroupMaxSize: number;
  /** WGSL language extensions the implementation has (navigator.gpu.wgslLanguageFeatures), e.g. "subgroup_id". */
  readonly wgslLanguageFeatures: readonly string[];
  readonly features: readonly string[];
  readonly maxStorageBufferBindingSize: number;
  readonly maxBufferSize: number;
}

export interface SamplingParams {
  /** <= 0: greedy. */
  temperature: number;
  /** 0: off. */
  topK: number;
  /** >= 1: off. */
  topP: number;
  /** <= 0: off. */
  minP: number;
  repeatPenalty: number;
  presencePenalty: number;
  frequencyPenalty: number;
  /** Penalty window in tokens (at most MAX_PENALTY_LAST_N; more is cut to it). */
  penaltyLastN: number;
  seed: number;
}

/** The longest penalty window: the sampler's ring of recent tokens on the GPU (RING in sample.wgsl). */
export const MAX_PENALTY_LAST_N = 256;

export interface ModelInfo {
  path: string;
  architecture: string;
  name: string | null;
  layers: number;
  embedding: number;
  heads: number;
  kvHeads: number;
  headSize: number;
  vocab: number;
  /** The file's <arch>.pooling_type (null: it does not say, as a generation model). */
  pooling: PoolingType | null;
  /** Experts per MoE layer, and how many each token runs (both 0 for a dense model). */
  experts: number;
  expertsUsed: number;
  ctx: number;
  ctxTrain: number;
  bos: number | null;
  addBos: boolean;
  eog: number[];
}

export interface EngineInfo {
  adapter: GpuInfo;
  model: ModelInfo | null;
  memory: ModelMemory | null;
  loadMs: number | null;
}

export interface Timings {
  /** Prompt tokens evaluated (a prefix already in the KV cache is not; a cancel mid-prompt leaves the rest unread). */
  promptTokens: number;
  /** The prompt's prefix already in the KV cache, not evaluated again. */
  cachedTokens: number;
  /** From the call to the first generated token. */
  ttftMs: number;
  prefillTokS: number;
  decodeTokS: number;
  generated: number;
  decodeMs: number;
}

export type StopReason = 'stop' | 'length' | 'cancelled' | 'context';

export interface GenerateResult {
  ids: number[];
  logprobs?: [number, number][][];
  stopReason: StopReason;
  timings: Timings;
}

/** Where a window's scored positions go in (or come from) a log-probabilities file. */
export interface LogProbsFile {
  path: string;
  /** Index of the window's first scored position among all the positions in the file. */
  position: number;
}

export type EngineRequest =
  | InfoRequest
  | AdapterRequest
  | LoadRequest
  | UnloadRequest
  | GenerateRequest
  | CancelRequest
  | BenchRequest
  | EvaluateRequest
  | EmbedRequest
  | CollectRequest;

/** What the engine sends: events while a request runs, then its final response. */
export type EngineMessage = EngineEvent | EngineResponse;
export type EngineEvent = ProgressEvent | TokenEvent;
export type EngineResponse =
  | InfoResponse
  | AdapterResponse
  | LoadedResponse
  | UnloadedResponse
  | GeneratedResponse
  | CancelResponse
  | BenchResponse
  | EvaluatedResponse
  | EmbeddedResponse
  | CollectedResponse
  | ErrorResponse;

export interface InfoRequest {
  id: number;
  type: 'info';
}

/** Opens the GPU if it is not open yet (no model needed) and says which adapter it is; answered at once, not after queued work. */
export interface AdapterRequest {
  id: number;
  type: 'adapter';
}

export interface LoadRequest {
  id: number;
  type: 'load';
  path: string;
  /** Context length (default: the model's, at most 4096). */
  ctx?: number;
  maxBatch?: number;
  /** The K and V caches' types (default f16 each). */
  kvTypes?: Partial<KvCacheTypes>;
  /** Sequences kept, each with a KV cache of the whole context (default 1; LoadOptions.slots). */
  slots?: number;
  /** What the model is loaded for (default 'generate'; LoadOptions.use). */
  use?: ModelUse;
}

/**
 * What a model is loaded for. 'generate' runs every kernel of a prefill and of a decode step once
 * at load, so that the first answer compiles nothing; 'evaluate' (teacher-forced scoring,
 * importance matrices, embeddings) compiles each kernel at its first use, so only the prefill
 * kernels those run: on a software GPU most of a load's compile time is the decode kernels.
 */
export type ModelUse = 'generate' | 'evaluate';

export interface UnloadRequest {
  id: number;
  type: 'unload';
}

export interface GenerateRequest {
  id: number;
  type: 'generate';
  /** Token ids, BOS included when the model wants one. */
  prompt: number[];
  maxTokens: number;
  sampling?: Partial<SamplingParams>;
  topLogprobs?: number;
  /** End-of-generation ids (default: the vocabulary's). */
  stop?: number[];
  /**
   * Output held to JSON (any object, or a document valid for a JSON Schema), token by token; a
   * stop id only ends it once the document is whole. A schema outside the supported subset is an
   * error answer naming the keyword.
   */
  constraint?: JsonConstraint;
}

/** Stops the generation with id `target` within one token; answered with `cancel` right away. */
export interface CancelRequest {
  id: number;
  type: 'cancel';
  target: number;
}

export interface BenchRequest {
  id: number;
  type: 'bench';
  /** Prompt tokens to prefill. */
  promptTokens: number;
  /** Tokens to decode. */
  genTokens: number;
  /** Tokens in the context before the prompt (llama-bench's -d): prefill and decode are measured there. */
  depth?: number;
  /** Also time each kernel of a few decode steps (BenchResult.profile). */
  profile?: boolean;
}

/**
 * Teacher-forced evaluation of one window (perplexity, KL divergence): the engine scores the
 * logits at positions first … ids.length−2 against the next id and answers with a few numbers
 * per position; log-probabilities over the vocabulary go through files, never through the channel.
 */
export interface EvaluateRequest {
  id: number;
  type: 'evaluate';
  /** Token ids, evaluated from position 0 with an empty KV cache. */
  ids: number[];
  first: number;
  /** Write the scored positions' log-probabilities (f32, vocab per position) into this existing file. */
  saveLogProbs?: LogProbsFile;
  /** Compare with the log-probabilities a base model's run saved in this file. */
  baseLogProbs?: LogProbsFile;
}

/**
 * Embeddings of a batch of inputs (token ids each, BOS and EOS as the model wants them): each
 * evaluated alone from position 0, its final hidden states pooled by the file's pooling_type (mean
 * without one) and L2-normalized.
 */
export interface EmbedRequest {
  id: number;
  type: 'embed';
  inputs: number[][];
}

/**
 * Importance-matrix collection (gufo imatrix): evaluates `ids` from position 0 with an empty KV
 * cache, adding the squares of every layer matrix's inputs to the engine's sums; with `take`, the
 * answer carries the sums so far, which are then zeroed.
 */
export interface CollectRequest {
  id: number;
  type: 'collect';
  ids: number[];
  take?: boolean;
}

/**
 * Per weight matrix (output head excluded), per matrix of it (the experts of a stacked tensor):
 * Σ x² (sums) and Σ x (inSums) per input column, [matrix][column], over counts[matrix] tokens.
 */
export interface WeightActivations {
  weight: string;
  sums: number[];
  inSums: number[];
  counts: number[];
}

export interface EmbedResult {
  /** One vector per input, in order. */
  embeddings: number[][];
  pooling: Pooling;
  /** Tokens evaluated over all inputs. */
  promptTokens: number;
}

/** Who is answering, and what it holds. `adapter` is null until the GPU is first opened. */
export interface InfoResponse {
  id: number;
  type: 'info';
  pid: number;
  node: string;
  versions: NodeJS.ProcessVersions;
  adapter: GpuInfo | null;
  model: ModelInfo | null;
  memory: ModelMemory | null;
  loadMs: number | null;
}

export interface AdapterResponse {
  id: number;
  type: 'adapter';
  adapter: GpuInfo;
}

export interface ProgressEvent {
  id: number;
  type: 'progress';
  /**
   * 'weights': tensor bytes uploaded so far; then 'kernels': kernels run once so far (kernel-warm-up.ts).
   * 'bench': the bench's tokens so far, of depth + prompt + generated.
   */
  stage: 'weights' | 'kernels' | 'bench';
  done: number;
  total: number;
}

export interface TokenEvent {
  id: number;
  type: 'token';
  /** 0 for the first generated token. */
  index: number;
  token: number;
  /** The token's own log-probability in the raw distribution (with `top`). */
  logprob?: number;
  /** [id, log-probability] pairs of the raw distribution, most likely first (when asked). */
  top?: [number, number][];
}

export interface LoadedResponse {
  id: number;
  type: 'loaded';
  info: EngineInfo;
}

export interface UnloadedResponse {
  id: number;
  type: 'unloaded';
}

export interface GeneratedResponse {
  id: number;
  type: 'generated';
  result: GenerateResult;
}

export interface CancelResponse {
  id: number;
  type: 'cancel';
  /** Whether a running generation with that id was found. */
  found: boolean;
}

export interface BenchResult {
  /** Tokens already in the context when the prompt was prefilled. */
  depth: number;
  promptTokens: number;
  genTokens: number;
  prefillTokS: number;
  decodeTokS: number;
  /** Weight and KV bytes read per decoded token (on average over the run). */
  bytesPerToken: number;
  /** bytesPerToken × decodeTokS. */
  achievedBytesPerSecond: number;
  /** This adapter's copy bandwidth (read + write), measured in the same run. */
  copyBytesPerSecond: number;
  /** achievedBytesPerSecond / copyBytesPerSecond. */
  rooflineFraction: number;
  /** Kernel launches one decode step encodes. */
  dispatchesPerToken: number;
  /** Queue submissions per decoded token. */
  submitsPerToken: number;
  /** CPU time to encode and submit one decode step (the GPU runs meanwhile, apart). */
  hostMsPerToken: number;
  /** GPU time per kernel per token, with the bytes weight kernels read (bench with profile). */
  profile?: StepProfile;
  /** The kernel shapes that ran. */
  kernelShapes: KernelShapes;
}

/** The weight kernels' shapes the engine chose on its adapter (docs/engine.md, "Kernel shapes"). */
export interface KernelShapes {
  /** A CPU adapter's shapes (threads own rows, no barriers), or a GPU's; decode attention's too. */
  family: 'cpu' | 'gpu';
  /**
   * The decode mat-vec: threads a workgroup, rows a workgroup, rows a thread owns (0: the workgroup
   * shares its rows); whether x goes through workgroup memory (a GPU's, read side by side); whose
   * setting the shape is: the adapter's vendor (e.g. "nvidia"), "default", "GUFO_MATVEC_SHAPE" or "cpu".
   */
  matvec: { workgroup: number; rows: number; threadRows: number; xStaged: boolean; tunedFor: string };
  /** Tokens of a batched decode step the mat-vec takes at once (0: none; such steps run the prefill kernel). */
  batchTokens: number;
  /** Prefill's mat-mat: matmat.wgsl's tiles (tiled), matmat-tiled.wgsl's workgroup-memory tiles (wgtiled), or matmat. */
  prefill: 'tiled' | 'wgtiled' | 'matmat';
  /** Subgroup operations: a GPU's sums, a CPU adapter's x broadcast. */
  subgroups: boolean;
  /** The shader-f16 feature. */
  f16: boolean;
  /** RMSNorm folded into the decode mat-vecs that read its output. */
  foldsNorm: boolean;
  /** The GPU mat-vec's integer steps: x as q8_1, codes dotted four bytes at a time (K-quants, Q4_0, Q8_0). */
  intDot: boolean;
}

export interface KernelTime {
  /** The pipeline's label, e.g. "matvec4:Q4_K" or "attention-prefill.wgsl:attend_tile". */
  kernel: string;
  dispatchesPerToken: number;
  gpuMsPerToken: number;
  /** Bytes its dispatches read per token (weight kernels only; null for the others). */
  bytesPerToken: number | null;
  /** bytesPerToken over gpuMsPerToken. */
  bytesPerSecond: number | null;
  /** bytesPerSecond / the copy kernel's bandwidth (its roofline). */
  rooflineFraction: number | null;
}

export interface StepProfile {
  /** Decode steps profiled. */
  tokens: number;
  /** Sum of every kernel's GPU time per token. */
  gpuMsPerToken: number;
  /** Slowest first. */
  kernels: KernelTime[];
}

export interface BenchResponse {
  id: number;
  type: 'bench';
  result: BenchResult;
  info: EngineInfo;
}

export interface EvaluatedResponse {
  id: number;
  type: 'evaluated';
  result: WindowScores;
}

export interface CollectedResponse {
  id: number;
  type: 'collected';
  activations?: WeightActivations[];
}

export interface EmbeddedResponse {
  id: number;
  type: 'embedded';
  result: EmbedResult;
}

/**
 * A request the engine could not serve. `id` is null when the request had no usable id, or when
 * the engine itself failed (`fatal`: it exits right after; the host should restart it).
 */
export interface ErrorResponse {
  id: number | null;
  type: 'error';
  message: string;
  fatal?: boolean;
}
