/**
 * Threads that run quantizeChunk (entry.ts): worker threads, and this thread too when asked (a
 * command-line run, whose event loop has nothing else to do). Jobs go out first come first
 * served; results are promises, which the caller awaits in its own (file) order.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import { quantizeChunk, type ChunkJob, type ChunkResult } from './chunk';
import type { WorkerReply, WorkerRequest } from './entry';

interface Pending {
  request: WorkerRequest;
  resolve(result: ChunkResult): void;
  reject(err: Error): void;
}

interface Slot {
  worker: Worker;
  /** Jobs sent and not answered yet, oldest first. */
  jobs: Pending[];
}

/**
 * Jobs sent ahead to each worker. Its queue must outlast this thread's own chunk (while this
 * thread encodes, it answers nobody): with 2, a worker beside an encoding main thread sat idle
 * for 14–16 ms at a time.
 */
const JOBS_PER_WORKER = 4;

export class ChunkPool {
  readonly #slots: Slot[] = [];
  readonly #queue: Pending[] = [];
  /** Whether this thread encodes too, and the job it is on (one at a time, between events). */
  readonly #here: boolean;
  #hereBusy = false;
  #nextId = 1;
  #failure: Error | null = null;
  /** Chunks done so far by this thread and by the workers (how the work was shared). */
  readonly done = { here: 0, workers: 0 };

  /** `workers` worker threads, and this thread too with `here` (alone with workers 0: quantizeFile's one thread). */
  constructor(workers: number, { here = false }: { here?: boolean } = {}) {
    if (workers < 1 && !here) throw new Error('a quantize pool needs a thread');
    this.#here = here;
    for (let i = 0; i < workers; i++) this.#slots.push(this.#start());
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
    // Workers first, this thread takes what is left: new jobs come when this thread is free (the
    // writer makes them between its chunks), so taking them first left the workers with none.
    for (let sent = true; sent && this.#queue.length > 0;) {
      sent = false;
      for (const slot of this.#slots) {
        if (slot.jobs.length >= JOBS_PER_WORKER || this.#queue.length === 0) continue;
        const pending = this.#queue.shift()!;
        slot.jobs.push(pending);
        sent = true;
        // Bytes are transferred (the caller read them for this job alone); a file span is read there.
        const { source } = pending.request.job;
        slot.worker.postMessage(pending.request, source instanceof Uint8Array ? [source.buffer as ArrayBuffer] : []);
      }
    }
    if (this.#here && !this.#hereBusy && this.#queue.length > 0) this.#runHere(this.#queue.shift()!);
  }

  /** Encodes on this thread in a later turn of the event loop, so replies and writes go on between chunks. */
  #runHere(pending: Pending): void {
    this.#hereBusy = true;
    setImmediate(() => {
      this.#hereBusy = false;
      if (this.#failure) return pending.reject(this.#failure);
      try {
        const result = quantizeChunk(pending.request.job);
        this.done.here++;
        pending.resolve(result);
      } catch (err) {
        pending.reject(err instanceof Error ? err : new Error(String(err)));
      }
      this.#dispatch();
    });
  }

  #start(): Slot {
    const slot: Slot = { worker: startWorker(), jobs: [] };
    slot.worker.on('message', (reply: WorkerReply) => {
      const pending = slot.jobs[0];
      if (!pending || pending.request.id !== reply.id) return;
      slot.jobs.shift();
      if ('error' in reply) pending.reject(new Error(reply.error));
      else {
        this.done.workers++;
        pending.resolve({ bytes: reply.bytes, squaredError: reply.squaredError });
      }
      this.#dispatch();
    });
    slot.worker.on('error', (err) => this.#fail(new Error(`a quantize worker failed: ${err.message}`)));
    slot.worker.on('exit', (code) => this.#fail(new Error(`a quantize worker stopped (code ${code})`)));
    return slot;
  }

  /** A worker that dies takes the run with it: every job not done yet is rejected with `err`. */
  #fail(err: Error): void {
    this.#failure ??= err;
    for (const slot of this.#slots) for (const pending of slot.jobs.splice(0)) pending.reject(this.#failure);
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
  return new Worker(join(dirname(here), here.endsWith('.ts') ? 'tsx-bootstrap.mjs' : 'quantize-worker.js'), {
    execArgv: [],
  });
}
