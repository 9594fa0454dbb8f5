/**
 * Messages between a host (the Electron main process, the CLI, tests) and the engine process.
 * Every request carries an id chosen by the host; everything the engine sends about a request
 * (progress and token events, then exactly one final answer: a result or an error) carries the
 * same id, so several requests can be in flight at once. Messages with id null are about the
 * engine itself (a fatal error just before it exits).
 */
import type { GpuInfo } from './gpu/device';
import type { SamplingParams } from './gpu/ops';
import type { ModelMemory } from './model/llama';
import type { EngineInfo, GenerateResult, ModelInfo } from './engine';
import type { LogProbsFile } from './evaluate';
import type { WindowComparison, WindowScores } from '../core/quality/divergence';
import type { JsonConstraint } from '../core/constrained/token-constraint';

export type { EngineInfo, GenerateResult, ModelInfo, ModelMemory, GpuInfo, SamplingParams, LogProbsFile, WindowComparison, WindowScores, JsonConstraint };

export type EngineRequest = InfoRequest | LoadRequest | UnloadRequest | GenerateRequest | CancelRequest | BenchRequest | EvaluateRequest;

/** What the engine sends: events while a request runs, then its final response. */
export type EngineMessage = EngineEvent | EngineResponse;
export type EngineEvent = ProgressEvent | TokenEvent;
export type EngineResponse =
  | InfoResponse
  | LoadedResponse
  | UnloadedResponse
  | GeneratedResponse
  | CancelResponse
  | BenchResponse
  | EvaluatedResponse
  | ErrorResponse;

export interface InfoRequest {
  id: number;
  type: 'info';
}

export interface LoadRequest {
  id: number;
  type: 'load';
  path: string;
  /** Context length (default: the model's, at most 4096). */
  ctx?: number;
  maxBatch?: number;
  kvF16?: boolean;
}

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

export interface ProgressEvent {
  id: number;
  type: 'progress';
  /** Tensor bytes uploaded so far. */
  done: number;
  total: number;
}

export interface TokenEvent {
  id: number;
  type: 'token';
  /** 0 for the first generated token. */
  index: number;
  token: number;
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
