/** Every job the back end reports (export, benchmark, hashing, …), kept live from 'job' events. */
import type { GufoBridge, JobState } from '../../src-preload/api';

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
