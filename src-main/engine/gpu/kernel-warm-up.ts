/**
 * Runs each kernel a model uses once, at load, so that its compilation is paid there (and counted
 * for the user) rather than inside the first answer's time to first token. Drivers differ in when
 * they compile: lavapipe returns from pipeline creation at once and compiles at the first dispatch
 * (minutes for a K-quant model with an empty shader cache), so creating the pipelines is not enough;
 * each must run.
 *
 * Steps are encoded through pass(), a stand-in that records each dispatch of a pipeline not seen
 * before (with its bind groups and grid); run() then submits those one at a time and waits for
 * each, which is what gives "N of M".
 */

import { recordingPass } from './dispatch-profile';

interface RecordedDispatch {
  pipeline: GPUComputePipeline;
  groups: [number, GPUBindGroup][];
  grid: [number, number, number];
}

export class KernelWarmUp {
  private readonly seen = new Set<GPUComputePipeline>();
  private recorded: RecordedDispatch[] = [];

  constructor(private readonly device: GPUDevice) {}

  /** A stand-in compute pass that records the first dispatch of every new pipeline; end() ends nothing. */
  pass(): GPUComputePassEncoder {
    return recordingPass((pipeline, groups, grid) => {
      if (this.seen.has(pipeline)) return;
      this.seen.add(pipeline);
      this.recorded.push({ pipeline, groups: [...groups], grid });
    });
  }

  /**
   * Runs the dispatches recorded since the last run, one submission each, calling `onKernel`
   * after each with the kernels run so far and the total seen so far.
   */
  async run(onKernel?: (done: number, total: number) => void): Promise<void> {
    const batch = this.recorded;
    this.recorded = [];
    let done = this.seen.size - batch.length;
    for (const { pipeline, groups, grid } of batch) {
      const encoder = this.device.createCommandEncoder({ label: 'kernel warm-up' });
      const pass = encoder.beginComputePass();
      pass.setPipeline(pipeline);
      for (const [index, group] of groups) pass.setBindGroup(index, group);
      pass.dispatchWorkgroups(...grid);
      pass.end();
      this.device.queue.submit([encoder.finish()]);
      await this.device.queue.onSubmittedWorkDone();
      onKernel?.(++done, this.seen.size);
    }
  }
}
