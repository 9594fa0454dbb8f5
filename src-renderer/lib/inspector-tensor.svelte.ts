/** One tensor in the inspector: its histogram, one block at a time, and its re-quantization error (a job). */
import type { BlockView, GufoApi, Histogram, JobState, RequantError } from '../../src-preload/api';
import { messageOf } from './format';
import { Loadable } from './inspector-loadable.svelte';
import { jobResult, type JobsStore } from './jobs.svelte';

export const HISTOGRAM_BINS = 64;

export class TensorDetailStore {
  readonly histogram = new Loadable<Histogram>();
  readonly block = new Loadable<BlockView>();
  /** The block index typed or stepped to. */
  blockIndex = $state(0);
  requantJobId: string | null = $state(null);
  /** Why the job could not be started. */
  requantStartError: string | null = $state(null);

  constructor(
    private readonly gufo: GufoApi,
    private readonly jobs: JobsStore,
    private readonly modelId: number,
    readonly tensor: string,
  ) {}

  /** The job, kept live from 'job' events. */
  get requantJob(): JobState | undefined {
    return this.jobs.get(this.requantJobId);
  }

  get requantResult(): RequantError | null {
    return jobResult(this.requantJob, 'requant-error');
  }

  async load(): Promise<void> {
    await Promise.all([
      this.histogram.load(() => this.gufo.tensorHistogram(this.modelId, this.tensor, HISTOGRAM_BINS)),
      this.goToBlock(0),
    ]);
  }

  /** Shows block `index`, kept inside the tensor once its block count is known. */
  goToBlock(index: number): Promise<void> {
    const count = this.block.value?.blockCount;
    const block = Math.max(0, count === undefined ? Math.trunc(index) : Math.min(count - 1, Math.trunc(index)));
    this.blockIndex = block;
    return this.block.load(() => this.gufo.tensorBlock(this.modelId, this.tensor, block));
  }

  async startRequant(): Promise<void> {
    this.requantStartError = null;
    try {
      this.requantJobId = await this.gufo.startRequantError(this.modelId, this.tensor);
    } catch (err) {
      this.requantStartError = messageOf(err);
    }
  }

  cancelRequant(): Promise<void> {
    return this.requantJobId === null ? Promise.resolve() : this.jobs.cancel(this.requantJobId);
  }
}
