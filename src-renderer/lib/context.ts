import { getContext, setContext } from 'svelte';
import type { GufoBridge } from '../../src-preload/api';
import type { JobsStore } from './jobs.svelte';

const GUFO = Symbol('gufo');
const JOBS = Symbol('jobs');

/** Makes the API and the live job list available to every component below (called once, by App). */
export function provideServices(gufo: GufoBridge, jobs: JobsStore): void {
  setContext(GUFO, gufo);
  setContext(JOBS, jobs);
}

/** The API, in any component under App. */
export function useGufo(): GufoBridge {
  return required(getContext<GufoBridge | undefined>(GUFO));
}

/** Every job the back end reports, kept live. */
export function useJobs(): JobsStore {
  return required(getContext<JobsStore | undefined>(JOBS));
}

function required<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('used outside <App>');
  return value;
}
