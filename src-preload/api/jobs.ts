/** Long work (export, benchmark, hashing, re-quantization error) runs as jobs with progress and cancel. */
import type { BenchRun } from './bench';
import type { ExportRecord, ImatrixView, QualityPrediction, QualityReport } from './export';
import type { RequantError, TensorErrorComparison } from './inspector';
import type { HashResult } from './library';
import type { OllamaExportResult } from './ollama';

/** What each kind of job answers when done. */
export interface JobResults {
  export: ExportRecord;
  bench: BenchRun;
  hash: HashResult;
  'requant-error': RequantError;
  'ollama-export': OllamaExportResult;
  quality: QualityReport;
  'tensor-error': TensorErrorComparison;
  'quality-prediction': QualityPrediction;
  imatrix: ImatrixView;
}

export type JobKind = keyof JobResults;

export type JobStatus = 'running' | 'done' | 'failed' | 'cancelled';

/** A job of one kind; `JobState` is the union over kinds, narrowed by `kind`. */
export interface JobStateOf<K extends JobKind> {
  id: string;
  kind: K;
  /** What the UI shows ("Export stories260K to Q8_0"). */
  title: string;
  status: JobStatus;
  /** Progress in `unit`s; total null while unknown. */
  done: number;
  total: number | null;
  unit: 'bytes' | 'tensors' | 'tokens' | 'steps';
  /** A short line about the current step ("blk.3.ffn_up.weight"). */
  detail: string | null;
  /** The job's answer once done, else null. */
  result: JobResults[K] | null;
  /** Why it failed. */
  error: string | null;
  startedAt: string;
  endedAt: string | null;
  /** Model the job is about, when there is one. */
  modelId: number | null;
}

export type JobState = { [K in JobKind]: JobStateOf<K> }[JobKind];

export interface JobsApi {
  /** Running jobs and the last finished ones. */
  listJobs(): Promise<JobState[]>;
  /** Stops a running job (no-op for a finished one); its status becomes 'cancelled'. */
  cancelJob(id: string): Promise<void>;
}

export const JOBS_METHODS = ['listJobs', 'cancelJob'] as const satisfies readonly (keyof JobsApi)[];
