/**
 * The host side of the engine process: starts it through a launcher (by default child_process.fork
 * of the engine entry, for the CLI, the server and tests; the app passes one built on Electron's
 * utilityProcess, see src-main/app/engine-launcher.ts), sends typed requests and
 * resolves each with its final answer, passing its events (load progress, tokens) to a callback.
 *
 * A dead engine never leaves a caller waiting: when the process exits or reports a fatal error,
 * every pending request is rejected with EngineCrashedError. The next request starts a fresh
 * engine (with no model loaded); `restart()` does it explicitly.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { CollectedWeight } from '../core/imatrix';
import { forwardWithoutDriverNoise } from './driver-noise';
import type {
  BenchResponse,
  EngineEvent,
  EngineInfo,
  EngineMessage,
  EngineRequest,
  EmbedResult,
  EngineResponse,
  EvaluateRequest,
  GenerateRequest,
  GpuInfo,
  GenerateResult,
  InfoResponse,
  LoadRequest,
  ProgressEvent,
  TokenEvent,
  WeightActivations,
  WindowScores,
} from './protocol';

/** The engine process died (crash, lost GPU, killed) before answering. */
export class EngineCrashedError extends Error {
  override readonly name = 'EngineCrashedError';
}

/** The engine answered a request with an error. */
export class EngineRequestError extends Error {
  override readonly name = 'EngineRequestError';
}

/** A running engine process, whatever started it. */
export interface EngineProcess {
  readonly pid: number | null;
  /** Sends a request; throws, or calls `onError`, when it cannot be delivered. */
  send(message: EngineRequest, onError: (err: Error) => void): void;
  /** Ends the process at once. */
  kill(): void;
  /** Ends the process (gracefully where the channel allows, forced after a delay); resolves once it is gone. */
  stop(): Promise<void>;
}

/** What a launched process reports back to the host. */
export interface EngineProcessEvents {
  message(message: EngineMessage): void;
  /** The process is gone (or failed); reported at most once. */
  exit(reason: string): void;
}

/** Starts one engine process. */
export type EngineLauncher = (events: EngineProcessEvents) => EngineProcess;

export interface ForkOptions {
  /** The engine entry (default: `defaultEngineEntry()`). */
  entry?: string;
  env?: NodeJS.ProcessEnv;
  /** Where the engine's stdout/stderr go (default: inherited, so its logs reach stderr, less driver noise). */
  stdio?: 'inherit' | 'ignore';
}

export interface HostOptions extends ForkOptions {
  /** How the engine process is started (default: `forkLauncher` with the options above). */
  launcher?: EngineLauncher;
}

/**
 * The engine entry that goes with this module: run from the sources (tsx, vitest), index.ts beside
 * it, forked through tsx; built into the CLI (out/cli/, see scripts/build-cli.mjs), the bundle
 * engine.js beside it, plain Node.
 */
function defaultEngineEntry(): string {
  return fileURLToPath(
    new URL(import.meta.url.endsWith('.ts') ? '../engine/index.ts' : './engine.js', import.meta.url),
  );
}

/** Starts the engine with child_process.fork, over its IPC channel. */
export function forkLauncher(options: ForkOptions = {}): EngineLauncher {
  return (events) => {
    const entry = options.entry ?? defaultEngineEntry();
    const stdio = options.stdio ?? 'inherit';
    const child = fork(entry, {
      execArgv: entry.endsWith('.ts') ? ['--import', 'tsx'] : [],
      env: options.env ?? process.env,
      // stderr through a filter that drops the GPU stack's start-up noise.
      stdio: [stdio, stdio, stdio === 'inherit' ? 'pipe' : stdio, 'ipc'],
    });
    if (child.stderr) forwardWithoutDriverNoise(child.stderr, process.stderr);
    let gone = false;
    const exit = (reason: string) => {
      if (gone) return;
      gone = true;
      events.exit(reason);
    };
    child.on('message', (message) => events.message(message as EngineMessage));
    child.on('error', (err) => exit(`engine process error: ${err.message}`));
    child.on('exit', (code, signal) => exit(`engine process exited (${signal ?? `code ${code}`})`));
    return {
      get pid() {
        return child.pid ?? null;
      },
      send: (message, onError) => {
        child.send(message, (err) => {
          if (err) onError(err);
        });
      },
      kill: () => void child.kill('SIGKILL'),
      stop: () => stopEngineChild(child),
    };
  };
}

/** A graceful disconnect of a forked engine (it closes its model and exits), then SIGKILL if it lingers. */
export function stopEngineChild(child: ChildProcess): Promise<void> {
  return new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    const kill = setTimeout(() => child.kill('SIGKILL'), 2000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    if (child.connected) child.disconnect();
    else child.kill('SIGKILL');
  });
}

type Request = EngineRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;

interface Pending {
  resolve(response: EngineResponse): void;
  reject(err: Error): void;
  onEvent?(event: EngineEvent): void;
}

export interface GenerateCallbacks {
  onToken?: (event: TokenEvent) => void;
  /** Aborting sends a cancel; the generation then ends within one token with stopReason 'cancelled'. */
  signal?: AbortSignal;
}

export class EngineHost {
  private child: EngineProcess | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly crashListeners = new Set<(err: EngineCrashedError) => void>();

  constructor(private readonly options: HostOptions = {}) {}

  /** The engine process's pid, or null when none runs. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Called when the engine dies with requests or not. */
  onCrash(listener: (err: EngineCrashedError) => void): () => void {
    this.crashListeners.add(listener);
    return () => this.crashListeners.delete(listener);
  }

  info(): Promise<InfoResponse> {
    return this.ask({ type: 'info' }, 'info');
  }

  /** The GPU adapter, opening the GPU if no request has yet; rejects with the engine's reason when there is none. */
  async adapter(): Promise<GpuInfo> {
    const r = await this.ask({ type: 'adapter' }, 'adapter');
    return r.adapter;
  }

  async load(
    path: string,
    options: Omit<LoadRequest, 'id' | 'type' | 'path'> = {},
    onProgress?: (e: ProgressEvent) => void,
  ): Promise<EngineInfo> {
    const r = await this.ask({ type: 'load', path, ...options }, 'loaded', (e) => {
      if (e.type === 'progress') onProgress?.(e);
    });
    return r.info;
  }

  async unload(): Promise<void> {
    await this.ask({ type: 'unload' }, 'unloaded');
  }

  async generate(
    request: Omit<GenerateRequest, 'id' | 'type'>,
    callbacks: GenerateCallbacks = {},
  ): Promise<GenerateResult> {
    const { signal, onToken } = callbacks;
    const id = this.nextId++;
    const cancel = () => void this.ask({ type: 'cancel', target: id }, 'cancel').catch(() => {});
    signal?.addEventListener('abort', cancel, { once: true });
    try {
      const r = await this.ask(
        { type: 'generate', ...request },
        'generated',
        (e) => {
          if (e.type === 'token') onToken?.(e);
        },
        id,
      );
      return r.result;
    } finally {
      signal?.removeEventListener('abort', cancel);
    }
  }

  /** `onProgress`: tokens done of depth + prompt + generated (the prompt's all at once, once evaluated). */
  bench(
    promptTokens: number,
    genTokens: number,
    options: { profile?: boolean; depth?: number; onProgress?: (done: number, total: number) => void } = {},
  ): Promise<BenchResponse> {
    return this.ask(
      {
        type: 'bench',
        promptTokens,
        genTokens,
        ...(options.depth ? { depth: options.depth } : {}),
        ...(options.profile ? { profile: true } : {}),
      },
      'bench',
      (e) => {
        if (e.type === 'progress') options.onProgress?.(e.done, e.total);
      },
    );
  }

  /** Scores one window of a text, teacher-forced (perplexity, KL divergence against saved log-probabilities). */
  async evaluate(request: Omit<EvaluateRequest, 'id' | 'type'>): Promise<WindowScores> {
    const r = await this.ask({ type: 'evaluate', ...request }, 'evaluated');
    return r.result;
  }

  /** Embeddings of token-id inputs with the loaded model (see EmbedRequest). */
  async embed(inputs: number[][]): Promise<EmbedResult> {
    const r = await this.ask({ type: 'embed', inputs }, 'embedded');
    return r.result;
  }

  /** Adds the activations of `ids` to the engine's importance-matrix sums; with `take`, returns them (see CollectRequest). */
  async collect(ids: number[], take = false): Promise<WeightActivations[] | undefined> {
    const r = await this.ask({ type: 'collect', ids, ...(take ? { take } : {}) }, 'collected');
    return r.activations;
  }

  /**
   * llama-imatrix's run: evaluates the chunks one by one and takes the sums over all of them.
   * `onChunk(i)` is called before chunk i. On abort the sums so far are taken, so no later run counts them.
   */
  async collectChunks(
    chunks: number[][],
    signal: AbortSignal,
    onChunk: (index: number) => void,
  ): Promise<CollectedWeight[]> {
    for (const [i, ids] of chunks.entries()) {
      const last = i === chunks.length - 1;
      if (signal.aborted) {
        if (i > 0) await this.collect([ids[0]!], true);
        signal.throwIfAborted();
      }
      onChunk(i);
      const taken = await this.collect(ids, last);
      if (last)
        return taken!.map((w) => ({ ...w, sums: Float32Array.from(w.sums), inSums: Float32Array.from(w.inSums) }));
    }
    throw new Error('no chunk was evaluated');
  }

  /** Stops the engine process (if any) and starts a fresh one. */
  async restart(): Promise<void> {
    await this.close();
    this.start();
  }

  /** Stops the engine: gracefully if the launcher can, forcibly if it lingers. */
  async close(): Promise<void> {
    const child = this.child;
    if (!child) return;
    this.child = null; // a deliberate stop is not a crash
    this.crashed(new EngineCrashedError('the engine was stopped'), false);
    await child.stop();
  }

  /** Starts the engine process if none runs. */
  start(): void {
    if (this.child) return;
    const launch = this.options.launcher ?? forkLauncher(this.options);
    let child: EngineProcess | null = null;
    child = launch({
      // Only the current process speaks for the engine; a stopped one's last words are dropped.
      message: (message) => {
        if (child && this.child === child) this.receive(message);
      },
      exit: (reason) => {
        if (child) this.died(child, reason);
      },
    });
    this.child = child;
  }

  /** Sends a request and resolves with its final response of type `expect`. */
  private ask<T extends EngineResponse['type']>(
    request: Request,
    expect: T,
    onEvent?: (e: EngineEvent) => void,
    id = this.nextId++,
  ): Promise<Extract<EngineResponse, { type: T }>> {
    this.start();
    const child = this.child!;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {
        resolve: (response) => {
          if (response.type === expect) resolve(response as Extract<EngineResponse, { type: T }>);
          else reject(new EngineRequestError(`engine answered ${response.type} to ${request.type}`));
        },
        reject,
        onEvent,
      });
      try {
        child.send({ ...request, id }, (err) => {
          this.settle(id, (p) => p.reject(new EngineCrashedError(`could not reach the engine: ${err.message}`)));
        });
      } catch (err) {
        this.settle(id, (p) =>
          p.reject(new EngineCrashedError(`could not reach the engine: ${(err as Error).message}`)),
        );
      }
    });
  }

  private receive(message: EngineMessage): void {
    if (message.id === null) {
      if (message.type === 'error' && message.fatal) {
        // The process exits by itself right after; make sure, and start afresh on the next request.
        const child = this.child;
        this.child = null;
        if (child) setTimeout(() => child.kill(), 1000).unref();
        this.crashed(new EngineCrashedError(message.message));
      }
      return;
    }
    const pending = this.pending.get(message.id);
    if (!pending) return;
    if (message.type === 'progress' || message.type === 'token') {
      pending.onEvent?.(message);
      return;
    }
    this.pending.delete(message.id);
    if (message.type === 'error') pending.reject(new EngineRequestError(message.message));
    else pending.resolve(message);
  }

  private died(child: EngineProcess, reason: string): void {
    if (this.child !== child) return;
    this.child = null;
    this.crashed(new EngineCrashedError(reason));
  }

  private crashed(err: EngineCrashedError, notify = true): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const p of pending) p.reject(err);
    if (notify) for (const listener of this.crashListeners) listener(err);
  }

  private settle(id: number, action: (p: Pending) => void): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    action(p);
  }
}
