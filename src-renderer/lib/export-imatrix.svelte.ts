/**
 * The Export screen's importance matrix: none, or one computed (an 'imatrix' job on the GPU) from
 * the built-in text, the user's chats or a text file, or a matrix file used as it is. Once ready,
 * its path goes with the plan, the quality prediction and the export.
 */
import type { GufoBridge, ImatrixSource, ImatrixView } from '../../src-preload/api';
import { messageOf } from './format';

export type ImatrixChoiceKind = 'none' | ImatrixSource['kind'];

export const IMATRIX_CHOICES: readonly { kind: ImatrixChoiceKind; label: string }[] = [
  { kind: 'none', label: 'None' },
  { kind: 'builtin', label: 'Compute from the built-in text' },
  { kind: 'chats', label: 'Compute from my chats' },
  { kind: 'file', label: 'From a file (.imatrix.gguf, .dat, or a text to compute from)' },
];

/** "built-in text v1: 35 matrices from 2 chunks of 283 tokens (stored, reused)". */
export function describeImatrix(view: ImatrixView): string {
  const from =
    view.chunks === null ? '' : ` from ${view.chunks} chunk${view.chunks === 1 ? '' : 's'} of ${view.chunkSize} tokens`;
  return `${view.label}: ${view.entries} matrices${from}${view.cached ? ' (computed before, reused)' : ''}`;
}

export class ImatrixChoice {
  kind: ImatrixChoiceKind = $state('none');
  /** The path typed for kind 'file'. */
  filePath = $state('');
  /** The computing (or checking) job while it runs. */
  jobId: string | null = $state(null);
  /** The matrix in use; null: none. */
  ready: ImatrixView | null = $state(null);
  error: string | null = $state(null);
  readonly #gufo: GufoBridge;
  readonly #stop: () => void;
  readonly #changed: () => void;

  /** `changed`: the matrix in use changed (the plan and predictions follow it). */
  constructor(gufo: GufoBridge, changed: () => void) {
    this.#gufo = gufo;
    this.#changed = changed;
    this.#stop = gufo.onEvent((event) => {
      if (
        event.type !== 'job' ||
        event.job.kind !== 'imatrix' ||
        event.job.id !== this.jobId ||
        event.job.status === 'running'
      )
        return;
      this.jobId = null;
      if (event.job.status === 'failed') this.error = event.job.error;
      if (event.job.result) this.#use(event.job.result);
    });
  }

  /** The path the plan and the export take. */
  get path(): string | undefined {
    return this.ready?.path;
  }

  /**
   * Picks a source: 'none' drops the matrix at once; the built-in text and the chats start
   * computing it for `modelId` at once (choosing one is asking for it); a file waits for its path.
   */
  choose(kind: ImatrixChoiceKind, modelId: number): void {
    this.kind = kind;
    this.error = null;
    if (kind === 'none' && this.ready) this.#use(null);
    if (kind === 'builtin' || kind === 'chats') void this.start(modelId);
  }

  /** Computes (or checks) the matrix of the chosen source for `modelId`. */
  async start(modelId: number): Promise<void> {
    this.error = null;
    const { kind } = this;
    if (kind === 'none') return;
    if (kind === 'file' && this.filePath.trim() === '') {
      this.error = 'Give the path of an importance matrix file or of a text file.';
      return;
    }
    const source: ImatrixSource = kind === 'file' ? { kind, path: this.filePath.trim() } : { kind };
    try {
      this.jobId = await this.#gufo.startImatrix(modelId, source);
    } catch (err) {
      this.error = messageOf(err);
    }
  }

  /** Another model: its matrix is another one. */
  reset(): void {
    this.jobId = null;
    this.error = null;
    this.ready = null;
    this.kind = 'none';
  }

  dispose(): void {
    this.#stop();
  }

  #use(view: ImatrixView | null): void {
    this.ready = view;
    this.#changed();
  }
}
