/**
 * Acting on a job at a chosen chunk boundary, whatever the machine's speed. A back end made with
 * `progressEveryMs: 0` sends each progress report from inside the work's own (synchronous) call,
 * so a listener that runs on that event runs while the work is held at that boundary: a cancel
 * lands there, and so does a change to the world under the job. Nothing here waits on a clock.
 */
import type { JobKind, JobState } from '../../src-preload/api';
import type { Backend } from '../../src-main/backend/index';

/**
 * Runs `action` inside the first progress report of the next `kind` job to start for which `when`
 * holds, and resolves with the job as it stood then. Call it before starting the job: a job's
 * first report can come before the call that started it has answered. Rejects if the job ends
 * first (then `when` never held while it ran).
 */
export function atProgress(
  b: Backend,
  kind: JobKind,
  when: (job: JobState) => boolean,
  action: (job: JobState) => void,
): Promise<JobState> {
  if (b.context.jobs.progressEveryMs !== 0) throw new Error('atProgress needs a back end made with progressEveryMs: 0');
  return new Promise<JobState>((resolve, reject) => {
    let id: string | null = null;
    const stop = b.events.subscribe((e) => {
      if (e.type !== 'job' || e.job.kind !== kind || (id !== null && e.job.id !== id)) return;
      id = e.job.id;
      if (e.job.status !== 'running') {
        stop();
        reject(
          new Error(
            `the ${kind} job ended (${e.job.status}, ${e.job.done}/${e.job.total}) before its progress matched`,
          ),
        );
      } else if (when(e.job)) {
        stop();
        action(e.job);
        resolve(e.job);
      }
    });
  });
}

/** Cancels the next `kind` job inside its first report with `done > 0`: mid-work, never before it began or after it ended. */
export function cancelMidJob(b: Backend, kind: JobKind): Promise<JobState> {
  return atProgress(
    b,
    kind,
    (job) => job.done > 0,
    (job) => void b.api.cancelJob(job.id),
  );
}
