/** Long work (export, benchmark, hashing, re-quantization error) runs as jobs with progress and cancel. */

export type JobKind = 'export' | 'bench' | 'hash' | 'requant-error' | 'scan' | 'ollama-export' | 'quality' | 'tensor-error';

export type JobStatus = 'running' | 'done' | 'failed' | 'cancelled';

export interface JobState {
  id: string;
  kind: JobKind;
  /** What the UI shows ("Export stories260K to Q8_0"). */
  title: string;
  status: JobStatus;
  /** Progress in `unit`s; total null while unknown. */
  done: number;
  total: number | null;
  unit: 'bytes' | 'tensors' | 'tokens' | 'steps';
  /** A short line about the current step ("blk.3.ffn_up.weight"). */
  detail: string | null;
  /** The job's answer when done (its shape depends on `kind`; see each feature's API). */
  result: unknown;
  /** Why it failed. */
  error: string | null;
  startedAt: string;
  endedAt: string | null;
  /** Model the job is about, when there is one. */
  modelId: number | null;
}

export interface JobsApi {
  /** Running jobs and the last finished ones. */
  listJobs(): Promise<JobState[]>;
  /** Stops a running job (no-op for a finished one); its status becomes 'cancelled'. */
  cancelJob(id: string): Promise<void>;
}

export const JOBS_METHODS = ['listJobs', 'cancelJob'] as const satisfies readonly (keyof JobsApi)[];
