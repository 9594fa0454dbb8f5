/**
 * Worker threads that run quantizeChunk (entry.ts): one job at a time each, first come first
 * served. Results are promises; the caller awaits them in its own (file) order.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { ChunkJob, ChunkResult } from './chunk';
import type { WorkerReply, WorkerRequest } from './entry';

interface Pending {
  request: WorkerRequest;
  resolve(result: ChunkResult): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  job: Pending | null;
}

export class ChunkPool {
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  #nextId = 1;
  #failure: Error | null = null;

  constructor(size: number) {
    for (let i = 0; i < size; i++) this.#slots.push(this.#start());
  }

  run(job: ChunkJob): Promise<ChunkResult> {
    return new Promise((resolve, reject) => {
      if (this.#failure) return reject(this.#failure);
      this.#queue.push({ request: { id: this.#nextId++, job }, resolve, reject });
      this.#dispatch();
    });
  }

  /** Ends every worker (a cancelled run's included: their current chunk is dropped). */
  close(): void {
    this.#fail(new Error('the quantize workers were closed'));
    for (const slot of this.#slots) void slot.worker.terminate();
  }

  #dispatch(): void {
    for (const slot of this.#slots) {
      if (slot.job || this.#queue.length === 0) continue;
      slot.job = this.#queue.shift()!;
      // Bytes are transferred (the caller read them for this job alone); a file span is read there.
      const { source } = slot.job.request.job;
      slot.worker.postMessage(slot.job.request, source instanceof Uint8Array ? [source.buffer as ArrayBuffer] : []);
    }
  }

  #start(): Slot {
    const slot: Slot = { worker: startWorker(), job: null };
    slot.worker.on('message', (reply: WorkerReply) => {
      const pending = slot.job;
      if (!pending || pending.request.id !== reply.id) return;
      slot.job = null;
      if ('error' in reply) pending.reject(new Error(reply.error));
      else pending.resolve({ bytes: reply.bytes, squaredError: reply.squaredError });
      this.#dispatch();
    });
    slot.worker.on('error', (err) => this.#fail(new Error(`a quantize worker failed: ${err.message}`)));
    slot.worker.on('exit', (code) => this.#fail(new Error(`a quantize worker stopped (code ${code})`)));
    return slot;
  }

  /** A worker that dies takes the run with it: every job not done yet is rejected with `err`. */
  #fail(err: Error): void {
    this.#failure ??= err;
    for (const slot of this.#slots) {
      slot.job?.reject(this.#failure);
      slot.job = null;
    }
    for (const pending of this.#queue.splice(0)) pending.reject(this.#failure);
  }
}

/**
 * A worker running entry.ts: from the TypeScript sources through tsx (GUFO_DEV, tests), or the
 * built quantize-worker.js beside the bundle that holds this code (out/cli, out/main: flat folders).
 */
function startWorker(): Worker {
  const here = fileURLToPath(import.meta.url);
  // No inherited flags: a parent run with `--import tsx` would load tsx in every worker (tens of MB each).
  return new Worker(join(dirname(here), here.endsWith('.ts') ? 'tsx-bootstrap.mjs' : 'quantize-worker.js'), { execArgv: [] });
}
