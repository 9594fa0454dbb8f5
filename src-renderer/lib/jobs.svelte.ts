/** Every job the back end reports (export, benchmark, hashing, …), kept live from 'job' events. */
import type { GufoBridge, JobKind, JobResults, JobState } from '../../src-preload/api';

/** A finished job's answer when `job` is of `kind`; null while it runs, when it failed, or for another kind. */
export function jobResult<K extends JobKind>(job: JobState | undefined, kind: K): JobResults[K] | null {
  // The kind was just checked: this job's result is that kind's.
  return job?.kind === kind && job.status === 'done' ? (job.result as JobResults[K] | null) : null;
}

export class JobsStore {
  jobs: JobState[] = $state([]);
  readonly #gufo: GufoBridge;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    gufo.onEvent((event) => {
      if (event.type === 'job') this.#put(event.job);
    });
    void gufo.listJobs().then((jobs) => jobs.forEach((job) => this.#put(job)));
  }

  get(id: string | null): JobState | undefined {
    return id === null ? undefined : this.jobs.find((job) => job.id === id);
  }

  running(kind?: JobState['kind']): JobState[] {
    return this.jobs.filter((job) => job.status === 'running' && (kind === undefined || job.kind === kind));
  }

  cancel(id: string): Promise<void> {
    return this.#gufo.cancelJob(id);
  }

  #put(job: JobState): void {
    const index = this.jobs.findIndex((j) => j.id === job.id);
    if (index === -1) this.jobs.unshift(job);
    else this.jobs[index] = job;
  }
}
