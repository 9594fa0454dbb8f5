/**
 * The OpenAI-compatible API of one back end: the state every listener serving it shares (request
 * queues per model, metrics, open tokenizers) and its limits, from the settings, GUFO_API_KEY,
 * GUFO_ORIGINS and what `gufo serve` was told.
 */
import type { DownloadsApi, LibraryApi } from '../../../src-preload/api';
import type { BackendContext } from '../context';
import type { EnginePool } from '../engine-pool';
import { modelNotFound, modelNotRunnable } from './errors';
import { ServerMetrics } from './metrics';
import { runnableModels, servedModels, type ServedModel } from './model-ids';
import { ModelTexts } from './model-texts';
import { ModelQueues } from './queue';
import { originPatternProblem } from '../../node/server/guard';

/**
 * What the service needs of the app's API: the library's models after a quick scan of the folders,
 * removing one, and downloads (Ollama's /api/pull, /api/delete do what the UI's Download and Remove do).
 */
export type ModelLibrary = Pick<LibraryApi, 'listModels' | 'removeModel'> &
  Pick<DownloadsApi, 'startDownload' | 'listDownloads'>;

export interface ServiceLimits {
  /** Required as a Bearer token when not null. */
  apiKey: string | null;
  /** Largest context a model is loaded with. */
  contextSize: number;
  /** Tokens one request may generate at most (a larger max_tokens is lowered to it). */
  maxTokens: number;
  /** Requests a model may have waiting or running; more get a 503. */
  maxQueue: number;
  /** Largest request body. */
  maxBodyBytes: number;
  /** Origins of web pages allowed to call the API (node/server/guard.ts's originListed). */
  origins: readonly string[];
}

/** Limits set from outside the settings (`gufo serve` options, tests); they win over the settings. */
export type LimitOverrides = Partial<ServiceLimits>;

export const DEFAULT_MAX_TOKENS = 4096;
export const DEFAULT_MAX_QUEUE = 32;
export const DEFAULT_MAX_BODY_BYTES = 8 << 20;

export class OpenAiService {
  readonly metrics = new ServerMetrics();
  readonly queues = new ModelQueues(
    () => this.limits().maxQueue,
    (model, depth) => this.metrics.queueDepth(model, depth),
    () => this.engines.parallel,
  );
  readonly texts = new ModelTexts();
  #overrides: LimitOverrides = {};
  /** The base URL `gufo serve` serves the API at (the UI's port or --api-port), whatever the settings say; set by it. */
  servedUrl: string | null = null;

  constructor(
    readonly ctx: BackendContext,
    readonly library: ModelLibrary,
  ) {
    const key = ctx.env.GUFO_API_KEY;
    if (key) this.#overrides.apiKey = key;
    const origins = ctx.env.GUFO_ORIGINS;
    if (origins) this.#overrides.origins = envOrigins(origins, ctx.notices);
    ctx.onClose(() => this.texts.close());
  }

  get engines(): EnginePool {
    return this.ctx.engines;
  }

  /** Sets limits that win over the settings (undefined fields leave the current ones). */
  override(overrides: LimitOverrides): void {
    for (const [name, value] of Object.entries(overrides)) {
      if (value !== undefined) (this.#overrides as Record<string, unknown>)[name] = value;
    }
  }

  /** Whether the API key comes from GUFO_API_KEY or an option rather than the settings. */
  get apiKeyOverridden(): boolean {
    return this.#overrides.apiKey !== undefined;
  }

  limits(): ServiceLimits {
    const settings = this.ctx.settings.openAiServer.get();
    return {
      apiKey: settings.apiKey,
      contextSize: settings.contextSize,
      origins: settings.origins,
      maxTokens: DEFAULT_MAX_TOKENS,
      maxQueue: DEFAULT_MAX_QUEUE,
      maxBodyBytes: DEFAULT_MAX_BODY_BYTES,
      ...this.#overrides,
    };
  }

  /** The models clients may ask for (those Gufo can run), after a quick scan of the model folders. */
  async models(): Promise<ServedModel[]> {
    return runnableModels(await this.library.listModels());
  }

  /**
   * The model a request names; the folders are scanned again before saying it is not there. One
   * Gufo cannot run is the client's error, saying why.
   */
  async resolve(id: string): Promise<ServedModel> {
    const known = servedModels(this.ctx.models.list()).find((m) => m.id === id);
    const model = known ?? servedModels(await this.library.listModels()).find((m) => m.id === id);
    if (!model) throw modelNotFound(id);
    if (model.entry.notRunnable !== null) throw modelNotRunnable(id, model.entry.notRunnable);
    return model;
  }

  /** The context `model` is loaded with: the limit, or the model's trained context when smaller. */
  contextFor(model: ServedModel): number {
    const limit = this.limits().contextSize;
    return Math.min(model.entry.contextLength ?? limit, limit);
  }
}

/** GUFO_ORIGINS' comma-separated origins; one that is not an origin is left out, with a notice saying so. */
function envOrigins(text: string, notices: string[]): string[] {
  const origins = text
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const problem of origins.map(originPatternProblem))
    if (problem) notices.push(`GUFO_ORIGINS: ${problem}; left out`);
  return origins.filter((o) => originPatternProblem(o) === null);
}

const services = new WeakMap<BackendContext, OpenAiService>();

/** Makes the back end's OpenAI service (createServerApi does, once). */
export function createOpenAiService(ctx: BackendContext, library: ModelLibrary): OpenAiService {
  if (services.has(ctx)) throw new Error('this back end already has an OpenAI service');
  const service = new OpenAiService(ctx, library);
  services.set(ctx, service);
  return service;
}

/** The back end's OpenAI service, for mounting its routes on a server (`gufo serve`, the app). */
export function openAiServiceOf(ctx: BackendContext): OpenAiService {
  const service = services.get(ctx);
  if (!service) throw new Error('this back end has no OpenAI service (createServerApi was not part of it)');
  return service;
}
