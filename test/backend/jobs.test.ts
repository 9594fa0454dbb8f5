import { describe, expect, it } from 'vitest';
import type { GufoEvent, JobState } from '../../src-preload/api';
import { EventHub } from '../../src-main/backend/events';
import { JobManager } from '../../src-main/backend/jobs';

function manager() {
  const events = new EventHub();
  const seen: JobState[] = [];
  events.subscribe((e: GufoEvent) => {
    if (e.type === 'job') seen.push(e.job);
  });
  return { jobs: new JobManager(events), seen, events };
}

/** Resolves with the first job event from now on that `test` accepts. */
function nextJob(events: EventHub, test: (job: JobState) => boolean): Promise<JobState> {
  return new Promise((resolve) => {
    const stop = events.subscribe((e) => {
      if (e.type === 'job' && test(e.job)) {
        stop();
        resolve(e.job);
      }
    });
  });
}

const spec = { kind: 'hash', title: 'Hash models', unit: 'bytes' } as const;
/** A hash job's answer. */
const HASHED = { hashed: 42, skipped: [] };

describe('JobManager', () => {
  it('runs work, reports start, progress and the result', async () => {
    const { jobs, seen } = manager();
    const id = jobs.start(spec, (job) => {
      job.progress(5, 10, 'half');
      return Promise.resolve(HASHED);
    });
    const done = await jobs.wait(id);
    expect(done).toMatchObject({ status: 'done', result: HASHED, done: 5, total: 10, detail: 'half', error: null });
    expect(done.endedAt).not.toBeNull();
    expect(seen[0]).toMatchObject({ id, status: 'running' });
    expect(seen.at(-1)).toMatchObject({ id, status: 'done' });
    expect(jobs.list()[0]).toEqual(done);
  });

  it('ends as failed with the error message', async () => {
    const { jobs } = manager();
    const id = jobs.start(spec, () => Promise.reject(new Error('disk full: /tmp/x.gguf')));
    expect(await jobs.wait(id)).toMatchObject({ status: 'failed', error: 'disk full: /tmp/x.gguf' });
  });

  it('cancels through the signal; the job ends as cancelled, not failed', async () => {
    const { jobs } = manager();
    const id = jobs.start(
      spec,
      (job) => new Promise((_, reject) => job.signal.addEventListener('abort', () => reject(new Error('stopped')))),
    );
    jobs.cancel(id); // before the work even began
    expect(await jobs.wait(id)).toMatchObject({ status: 'cancelled', error: null });
    expect(() => jobs.cancel('nope')).toThrow(/no job nope/);
  });

  it('throttles progress events', async () => {
    const { jobs, seen } = manager();
    const id = jobs.start(spec, (job) => {
      for (let i = 0; i < 10_000; i++) job.progress(i, 10_000);
      return Promise.resolve(HASHED);
    });
    await jobs.wait(id);
    expect(seen.length).toBeLessThan(10);
    expect(seen.at(-1)).toMatchObject({ status: 'done', done: 9999 });
  });

  it('sends the last progress held back by the throttle', async () => {
    const { jobs, events } = manager();
    let finish!: () => void;
    // Sent by the throttle's timer, while the work waits: no clock in the test.
    const held = nextJob(events, (job) => job.done === 2);
    const id = jobs.start(spec, async (job) => {
      job.progress(1, 3, 'loading');
      job.progress(2, 3, 'measuring'); // within the throttle interval
      await new Promise<void>((resolve) => (finish = resolve));
      return HASHED;
    });
    expect(await held).toMatchObject({ status: 'running', done: 2, detail: 'measuring' });
    finish();
    await jobs.wait(id);
  });

  it('close() cancels running jobs and waits for them', async () => {
    const { jobs } = manager();
    let ended = false;
    const id = jobs.start(
      spec,
      (job) =>
        new Promise<typeof HASHED>((resolve) =>
          job.signal.addEventListener('abort', () => {
            ended = true;
            resolve(HASHED);
          }),
        ),
    );
    await new Promise((resolve) => setTimeout(resolve, 0)); // the work has begun
    await jobs.close();
    expect(ended).toBe(true);
    expect(jobs.get(id)?.status).toBe('cancelled');
  });
});
