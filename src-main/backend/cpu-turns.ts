/**
 * The back end's CPU-heavy jobs (exports, quality predictions) take turns: run together they share
 * the cores and the event loop, so each takes as long as both and the later one shows no progress.
 * A job waiting for its turn says so, naming the job it waits for.
 */
import type { BackendContext } from './context';
import type { JobContext } from './jobs';

export class CpuTurns {
  /** The jobs in line, the one running first. */
  readonly #line: { title: string }[] = [];
  #tail: Promise<void> = Promise.resolve();

  /** Runs `work` once the jobs before it have ended; `title` is what a later job says it waits for. */
  async run<T>(job: JobContext, title: string, work: () => Promise<T>): Promise<T> {
    const before = this.#tail;
    let end!: () => void;
    this.#tail = new Promise<void>((resolve) => (end = resolve));
    const ahead = this.#line.at(-1);
    const place = { title };
    this.#line.push(place);
    try {
      if (ahead) job.progress(0, null, `Waiting for "${ahead.title}" to finish`);
      await untilAbortedOrDone(before, job.signal);
      return await work();
    } finally {
      this.#line.splice(this.#line.indexOf(place), 1);
      // Those after this one wait for it and for everything before it.
      void before.then(end);
    }
  }
}

/** Resolves with `turn`, or rejects as soon as the job is cancelled (it then never runs). */
function untilAbortedOrDone(turn: Promise<void>, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const abort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('aborted'));
    if (signal.aborted) return abort();
    signal.addEventListener('abort', abort, { once: true });
    void turn.then(() => {
      signal.removeEventListener('abort', abort);
      resolve();
    });
  });
}

const turnsOf = new WeakMap<BackendContext, CpuTurns>();

export function cpuTurnsOf(ctx: BackendContext): CpuTurns {
  let turns = turnsOf.get(ctx);
  if (!turns) turnsOf.set(ctx, (turns = new CpuTurns()));
  return turns;
}
