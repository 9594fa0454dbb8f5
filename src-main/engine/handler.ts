/**
 * Serves protocol requests inside the engine process. GPU work (load, unload, bench, evaluate, embed, collect)
 * runs one request at a time in arrival order; generations run side by side (the engine steps them
 * together, each in a slot of its own), after the work asked before them and before the work asked
 * after them. Info, adapter and cancel are answered at once, so a cancel reaches a running
 * generation between two tokens. Messages cross a process boundary: their
 * shape is checked, and a bad one gets an error answer, never a crash.
 */
import { Engine } from './engine';
import { embedInputs } from './embed';
import { evaluateWindow } from './evaluate';
import type { EngineMessage, EngineRequest, InfoResponse } from '../engine-wire/protocol';

type Send = (message: EngineMessage) => void;

export class EngineHandler {
  private engine: Promise<Engine> | null = null;
  private opened: Engine | null = null;
  /** The tail of the one-at-a-time work. */
  private queue: Promise<void> = Promise.resolve();
  /** Generations started (each after the queue's tail when it came) and not yet answered. */
  private readonly running = new Set<Promise<void>>();
  private readonly generations = new Map<number, AbortController>();

  constructor(
    private readonly send: Send,
    /** Called when the GPU device is lost: the process cannot go on. */
    private readonly onFatal: (message: string) => void = () => {},
    private readonly openEngine: () => Promise<Engine> = () => Engine.open(),
  ) {}

  handle(message: unknown): void {
    const { id } = (message ?? {}) as { id?: unknown };
    if (typeof id !== 'number') {
      this.send({ id: null, type: 'error', message: 'request without a numeric id' });
      return;
    }
    const request = message as EngineRequest;
    const problem = checkRequest(request);
    if (problem) {
      this.send({ id, type: 'error', message: problem });
      return;
    }
    switch (request.type) {
      case 'info':
        this.send(this.infoResponse(id));
        return;
      case 'adapter':
        this.gpu().then(
          (engine) => this.send({ id, type: 'adapter', adapter: engine.info.adapter }),
          (err: unknown) => this.send({ id, type: 'error', message: err instanceof Error ? err.message : String(err) }),
        );
        return;
      case 'cancel': {
        const controller = this.generations.get(request.target);
        controller?.abort();
        this.send({ id, type: 'cancel', found: !!controller });
        return;
      }
      default:
        this.enqueue(request);
    }
  }

  /** Frees the GPU (the process is about to exit). */
  async close(): Promise<void> {
    for (const c of this.generations.values()) c.abort();
    await Promise.all([this.queue, ...this.running]);
    this.opened?.destroy();
  }

  private enqueue(request: Exclude<EngineRequest, { type: 'info' | 'adapter' | 'cancel' }>): void {
    const controller = new AbortController();
    const run = async () => {
      try {
        await this.run(request, controller.signal);
      } catch (err) {
        this.send({ id: request.id, type: 'error', message: err instanceof Error ? err.message : String(err) });
      } finally {
        this.generations.delete(request.id);
      }
    };
    if (request.type === 'generate') {
      this.generations.set(request.id, controller);
      const task = this.queue.then(run);
      this.running.add(task);
      void task.then(() => this.running.delete(task));
    } else this.queue = Promise.all([this.queue, ...this.running]).then(run);
  }

  private async run(
    request: Exclude<EngineRequest, { type: 'info' | 'adapter' | 'cancel' }>,
    signal: AbortSignal,
  ): Promise<void> {
    const { id } = request;
    switch (request.type) {
      case 'load': {
        const engine = await this.gpu();
        const info = await engine.load(request.path, {
          ctx: request.ctx,
          maxBatch: request.maxBatch,
          kvTypes: request.kvTypes,
          slots: request.slots,
          use: request.use,
          onProgress: (done, total) => this.send({ id, type: 'progress', stage: 'weights', done, total }),
          onKernels: (done, total) => this.send({ id, type: 'progress', stage: 'kernels', done, total }),
        });
        this.send({ id, type: 'loaded', info });
        return;
      }
      case 'unload':
        this.opened?.unload();
        this.send({ id, type: 'unloaded' });
        return;
      case 'generate': {
        const engine = await this.gpu();
        const result = await engine.generate(request.prompt, {
          maxTokens: request.maxTokens,
          sampling: request.sampling,
          topLogprobs: request.topLogprobs,
          stop: request.stop,
          constraint: request.constraint,
          signal,
          onToken: (token, index) =>
            this.send({
              id,
              type: 'token',
              index,
              token: token.id,
              ...(token.top ? { logprob: token.logprob, top: token.top } : {}),
            }),
        });
        this.send({ id, type: 'generated', result });
        return;
      }
      case 'bench': {
        const engine = await this.gpu();
        const result = await engine.bench(request.promptTokens, request.genTokens, {
          profile: request.profile === true,
          depth: request.depth ?? 0,
          onProgress: (done, total) => this.send({ id, type: 'progress', stage: 'bench', done, total }),
        });
        this.send({ id, type: 'bench', result, info: engine.info });
        return;
      }
      case 'evaluate': {
        const engine = await this.gpu();
        const { ids, first, saveLogProbs, baseLogProbs } = request;
        const result = await evaluateWindow(engine, { ids, first, saveLogProbs, baseLogProbs });
        this.send({ id, type: 'evaluated', result });
        return;
      }
      case 'embed': {
        const engine = await this.gpu();
        this.send({ id, type: 'embedded', result: await embedInputs(engine, request.inputs) });
        return;
      }
      case 'collect': {
        const engine = await this.gpu();
        await engine.collectActivations(request.ids);
        if (!request.take) return this.send({ id, type: 'collected' });
        const activations = (await engine.takeActivations()).map((a) => ({
          ...a,
          sums: Array.from(a.sums),
          inSums: Array.from(a.inSums),
          counts: [...a.counts],
        }));
        this.send({ id, type: 'collected', activations });
        return;
      }
    }
  }

  /** The engine, opening the GPU on first use. */
  private gpu(): Promise<Engine> {
    this.engine ??= this.openEngine().then(
      (engine) => {
        this.opened = engine;
        void engine.gpu.device.lost.then((lost) => {
          if (lost.reason !== 'destroyed') this.onFatal(`GPU device lost: ${lost.message || lost.reason}`);
        });
        return engine;
      },
      (err: unknown) => {
        this.engine = null; // let a later request try again (a driver may be installed by then)
        throw err;
      },
    );
    return this.engine;
  }

  private infoResponse(id: number): InfoResponse {
    const info = this.opened?.info;
    return {
      id,
      type: 'info',
      pid: process.pid,
      node: process.versions.node,
      versions: process.versions,
      adapter: info?.adapter ?? null,
      model: info?.model ?? null,
      memory: info?.memory ?? null,
      loadMs: info?.loadMs ?? null,
    };
  }
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;
const isOptionalCount = (v: unknown) => v === undefined || isCount(v);
const isIds = (v: unknown): v is number[] => Array.isArray(v) && v.every(isCount);
const isOptionalConstraint = (v: unknown) =>
  v === undefined ||
  (typeof v === 'object' &&
    v !== null &&
    ((v as { kind?: unknown }).kind === 'json' || ((v as { kind?: unknown }).kind === 'json-schema' && 'schema' in v)));
const isLogProbsFile = (v: unknown) =>
  v === undefined ||
  (typeof v === 'object' &&
    v !== null &&
    typeof (v as { path?: unknown }).path === 'string' &&
    isCount((v as { position?: unknown }).position));

/** What is wrong with a request's shape, or null. */
function checkRequest(r: EngineRequest): string | null {
  switch (r.type) {
    case 'info':
    case 'adapter':
    case 'unload':
      return null;
    case 'cancel':
      return typeof r.target === 'number' ? null : 'cancel: target must be the id of a generate request';
    case 'load':
      if (typeof r.path !== 'string' || !r.path) return 'load: path must be a file path';
      if (!isOptionalCount(r.ctx) || !isOptionalCount(r.maxBatch) || !isOptionalCount(r.slots))
        return 'load: ctx, maxBatch and slots must be non-negative integers';
      return null;
    case 'generate':
      if (!isIds(r.prompt) || r.prompt.length === 0) return 'generate: prompt must be a non-empty array of token ids';
      if (!isCount(r.maxTokens)) return 'generate: maxTokens must be a non-negative integer';
      if (r.stop !== undefined && !isIds(r.stop)) return 'generate: stop must be an array of token ids';
      if (!isOptionalCount(r.topLogprobs)) return 'generate: topLogprobs must be a non-negative integer';
      if (r.sampling !== undefined && (typeof r.sampling !== 'object' || r.sampling === null))
        return 'generate: sampling must be an object';
      if (!isOptionalConstraint(r.constraint))
        return 'generate: constraint must be { kind: "json" } or { kind: "json-schema", schema }';
      return null;
    case 'bench':
      if (!isCount(r.promptTokens) || !isCount(r.genTokens) || !isOptionalCount(r.depth))
        return 'bench: promptTokens, genTokens and depth must be non-negative integers';
      return r.profile === undefined || typeof r.profile === 'boolean' ? null : 'bench: profile must be a boolean';
    case 'evaluate':
      if (!isIds(r.ids) || r.ids.length < 2) return 'evaluate: ids must be an array of at least 2 token ids';
      if (!isCount(r.first)) return 'evaluate: first must be a non-negative integer';
      if (!isLogProbsFile(r.saveLogProbs) || !isLogProbsFile(r.baseLogProbs))
        return 'evaluate: saveLogProbs and baseLogProbs must be { path, position }';
      return null;
    case 'embed':
      if (!Array.isArray(r.inputs) || r.inputs.length === 0 || !r.inputs.every((ids) => isIds(ids) && ids.length > 0)) {
        return 'embed: inputs must be a non-empty array of non-empty arrays of token ids';
      }
      return null;
    case 'collect':
      if (!isIds(r.ids) || r.ids.length === 0) return 'collect: ids must be a non-empty array of token ids';
      return r.take === undefined || typeof r.take === 'boolean' ? null : 'collect: take must be a boolean';
    default:
      return `unknown request type ${JSON.stringify((r as { type: unknown }).type)}`;
  }
}
