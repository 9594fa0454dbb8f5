/**
 * Long work as jobs: each has progress, can be cancelled, and reports every change as a 'job'
 * event. Progress events are throttled so a fast job does not flood the UI.
 */
import { randomUUID } from 'node:crypto';
import type { JobKind, JobResults, JobState, JobStateOf } from '../../src-preload/api';
import type { EventHub } from './events';
import { Throttle } from './throttle';

export interface JobContext {
  signal: AbortSignal;
  /** Reports progress; `detail` replaces the current step line when given. */
  progress(done: number, total?: number | null, detail?: string | null): void;
}

export interface JobSpec<K extends JobKind> {
  kind: K;
  title: string;
  unit: JobState['unit'];
  modelId?: number | null;
}

/** Finished jobs kept for listJobs. */
const KEEP_FINISHED = 50;
/** At most one progress event per job in this many ms, unless the back end says otherwise. */
const PROGRESS_EVERY_MS = 100;

/** Thrown by work that noticed its signal; the job ends as 'cancelled', not 'failed'. */
export function isAbort(err: unknown, signal: AbortSignal): boolean {
  return signal.aborted || (err instanceof Error && err.name === 'AbortError');
}

/**
 * `promise`, or the abort as soon as `signal` fires: for engine work that cannot stop midway (a
 * benchmark, one evaluated window), so the job ends at once and the late answer is dropped.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}

export class JobManager {
  readonly #jobs = new Map<string, { state: JobState; controller: AbortController; done: Promise<unknown> }>();

  /**
   * `progressEveryMs` 0 sends every progress report as it is made, inside the work's own call: a
   * listener then runs at that chunk boundary, which is how tests act mid-job at a chosen point.
   */
  constructor(
    private readonly events: EventHub,
    readonly progressEveryMs = PROGRESS_EVERY_MS,
  ) {}

  /** Starts `work` now; answers the job id at once. The job's result is what `work` resolves to. */
  start<K extends JobKind>(spec: JobSpec<K>, work: (job: JobContext) => Promise<JobResults[K]>): string {
    const controller = new AbortController();
    const state: JobStateOf<K> = {
      id: randomUUID(),
      kind: spec.kind,
      title: spec.title,
      status: 'running',
      done: 0,
      total: null,
      unit: spec.unit,
      detail: null,
      result: null,
      error: null,
      startedAt: new Date().toISOString(),
      endedAt: null,
      modelId: spec.modelId ?? null,
    };
    // The same object, as the union the API speaks (TypeScript cannot see that a generic K's state is one of its members).
    const view = state as JobState;
    const progress = new Throttle<JobState>(this.progressEveryMs, (job) => this.#emit(job));
    const context: JobContext = {
      signal: controller.signal,
      progress: (done, total, detail) => {
        if (state.status !== 'running') return;
        state.done = done;
        if (total !== undefined) state.total = total;
        if (detail !== undefined) state.detail = detail;
        progress.push(view);
      },
    };
    const finish = (patch: Partial<JobStateOf<K>>) => {
      progress.cancel();
      Object.assign(state, patch, { endedAt: new Date().toISOString() });
      this.#emit(view);
      this.#prune();
    };
    const done = Promise.resolve()
      .then(() => {
        // Cancelled before it began: never start the work.
        controller.signal.throwIfAborted();
        return work(context);
      })
      .then(
        (result) => finish(controller.signal.aborted ? { status: 'cancelled' } : { status: 'done', result }),
        (err: unknown) =>
          finish(
            isAbort(err, controller.signal)
              ? { status: 'cancelled' }
              : { status: 'failed', error: err instanceof Error ? err.message : String(err) },
          ),
      );
    this.#jobs.set(state.id, { state: view, controller, done });
    this.#emit(view);
    return state.id;
  }

  list(): JobState[] {
    return [...this.#jobs.values()].map((j) => structuredClone(j.state)).reverse();
  }

  get(id: string): JobState | undefined {
    const job = this.#jobs.get(id);
    return job && structuredClone(job.state);
  }

  cancel(id: string): void {
    const job = this.#jobs.get(id);
    if (!job) throw new Error(`no job ${id}`);
    if (job.state.status === 'running') job.controller.abort();
  }

  /** Resolves when the job has ended (tests, shutdown). */
  async wait(id: string): Promise<JobState> {
    const job = this.#jobs.get(id);
    if (!job) throw new Error(`no job ${id}`);
    await job.done;
    return structuredClone(job.state);
  }

  /** Cancels every running job and waits for them to end. */
  async close(): Promise<void> {
    const running = [...this.#jobs.values()].filter((j) => j.state.status === 'running');
    for (const job of running) job.controller.abort();
    await Promise.all(running.map((j) => j.done));
  }

  #emit(state: JobState): void {
    this.events.emit({ type: 'job', job: structuredClone(state) });
  }

  #prune(): void {
    const finished = [...this.#jobs.values()].filter((j) => j.state.status !== 'running');
    for (const job of finished.slice(0, Math.max(0, finished.length - KEEP_FINISHED))) this.#jobs.delete(job.state.id);
  }
}
