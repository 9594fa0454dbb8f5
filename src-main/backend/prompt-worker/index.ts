/**
 * Prompt work off the event loop. Rendering and tokenizing a prompt of megabytes takes seconds of
 * CPU; done on the main thread it would freeze the UI, /api and /metrics for all clients. Small
 * inputs run inline (a worker hop would cost more than the work); large ones go to a few worker
 * threads (entry.ts), started when needed and ended when idle. A caller that gives up (its signal
 * aborts) has its job dropped from the queue, or its worker ended.
 */
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { ChatTemplateError } from '../../core/chat-template';
import { VocabError } from '../../core/tokenizer/index';
import type { ModelText } from '../chat/prompt';
import type { BackendContext } from '../context';
import {
  jobChars,
  runPromptJob,
  type PromptJob,
  type PromptJobReply,
  type PromptJobRequest,
  type PromptJobResult,
  type SentError,
} from './jobs';

/** Inputs up to this many UTF-16 units are rendered and tokenized inline (a few milliseconds). */
export const INLINE_CHARS = 8 * 1024;
/** A worker with nothing to do ends after this long (its heap held the last large prompt). */
const IDLE_MS = 30_000;

interface Pending {
  request: PromptJobRequest;
  resolve(result: unknown): void;
  reject(err: Error): void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
  idle: NodeJS.Timeout | null;
}

export class PromptWorkers {
  readonly #slots = new Set<Slot>();
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #closed = false;

  constructor(private readonly size = Math.max(1, Math.min(4, availableParallelism() - 1))) {}

  /**
   * Runs `job` for the model file at `path`; `text` is that file's tokenizer on this thread, for
   * the inline case. Rejects with the job's own error (a ChatTemplateError, a VocabError...), or
   * with the signal's reason when the caller gives up.
   */
  run<J extends PromptJob>(text: ModelText, path: string, job: J, signal?: AbortSignal): Promise<PromptJobResult<J>> {
    if (jobChars(job) <= INLINE_CHARS) return Promise.resolve().then(() => runPromptJob(text, job));
    return new Promise((resolve, reject) => {
      if (this.#closed) return reject(new Error('Gufo is shutting down; the prompt was not read'));
      if (signal?.aborted) return reject(signal.reason as Error);
      const pending: Pending = {
        request: { id: this.#nextId++, path, job },
        resolve: resolve,
        reject,
        signal,
        onAbort: () => this.#abandon(pending),
      };
      signal?.addEventListener('abort', pending.onAbort, { once: true });
      this.#queue.push(pending);
      this.#dispatch();
    });
  }

  /** Ends every worker; queued and running jobs are rejected. */
  close(): void {
    this.#closed = true;
    for (const pending of this.#queue.splice(0))
      this.#settle(pending, new Error('Gufo is shutting down; the prompt was not read'));
    for (const slot of [...this.#slots]) this.#end(slot, new Error('Gufo is shutting down; the prompt was not read'));
  }

  #dispatch(): void {
    while (this.#queue.length > 0) {
      const slot =
        [...this.#slots].find((s) => s.job === null) ?? (this.#slots.size < this.size ? this.#start() : null);
      if (!slot) return;
      const pending = this.#queue.shift()!;
      if (slot.idle) clearTimeout(slot.idle);
      slot.idle = null;
      slot.job = pending;
      slot.worker.postMessage(pending.request);
    }
  }

  #start(): Slot {
    const worker = startWorker();
    // A worker never keeps the process alive on its own (the CLI, tests).
    worker.unref();
    const slot: Slot = { worker, job: null, idle: null };
    worker.on('message', (reply: PromptJobReply) => {
      const pending = slot.job;
      // An ended worker's last word (its caller gave up) is not heard.
      if (!this.#slots.has(slot) || !pending || pending.request.id !== reply.id) return;
      slot.job = null;
      if ('error' in reply) this.#settle(pending, rebuiltError(reply.error));
      else this.#settle(pending, null, reply.result);
      slot.idle = setTimeout(() => this.#end(slot, null), IDLE_MS).unref();
      this.#dispatch();
    });
    const gone = (err: Error) => {
      if (!this.#slots.has(slot)) return;
      this.#slots.delete(slot);
      if (slot.idle) clearTimeout(slot.idle);
      if (slot.job) this.#settle(slot.job, err);
      this.#dispatch();
    };
    worker.on('error', (err) => gone(new Error(`the prompt worker failed: ${err.message}`)));
    worker.on('exit', (code) => gone(new Error(`the prompt worker stopped (code ${code})`)));
    this.#slots.add(slot);
    return slot;
  }

  /** Ends a worker; its job, if any, is rejected with `err`. */
  #end(slot: Slot, err: Error | null): void {
    this.#slots.delete(slot);
    if (slot.idle) clearTimeout(slot.idle);
    if (slot.job && err) this.#settle(slot.job, err);
    void slot.worker.terminate();
    this.#dispatch();
  }

  /** The caller gave up: a queued job leaves the queue, a running one's worker is ended (the next job starts a fresh one). */
  #abandon(pending: Pending): void {
    const reason = pending.signal!.reason as Error;
    const queued = this.#queue.indexOf(pending);
    if (queued >= 0) {
      this.#queue.splice(queued, 1);
      this.#settle(pending, reason);
      return;
    }
    const slot = [...this.#slots].find((s) => s.job === pending);
    if (slot) this.#end(slot, reason);
  }

  #settle(pending: Pending, err: Error | null, result?: unknown): void {
    pending.signal?.removeEventListener('abort', pending.onAbort);
    if (err) pending.reject(err);
    else pending.resolve(result);
  }
}

/** The errors callers tell apart (a 400 for the client) come back as their own classes. */
function rebuiltError({ name, message }: SentError): Error {
  if (name === 'ChatTemplateError') return new ChatTemplateError(message);
  if (name === 'VocabError') return new VocabError(message);
  return new Error(message);
}

/**
 * A worker running entry.ts: from the TypeScript sources through tsx (the CLI, `gufo serve`,
 * tests), or the built prompt-worker.js beside the app's bundle (electron.vite.config.ts).
 */
function startWorker(): Worker {
  const here = fileURLToPath(import.meta.url);
  return new Worker(join(dirname(here), here.endsWith('.ts') ? 'tsx-bootstrap.mjs' : 'prompt-worker.js'));
}

const workersOf = new WeakMap<BackendContext, PromptWorkers>();

/** The back end's prompt workers (made on first use, ended when it closes). */
export function promptWorkersOf(ctx: BackendContext): PromptWorkers {
  let workers = workersOf.get(ctx);
  if (!workers) {
    const made = new PromptWorkers();
    ctx.onClose(() => made.close());
    workersOf.set(ctx, made);
    workers = made;
  }
  return workers;
}
