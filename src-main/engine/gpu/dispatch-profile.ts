/**
 * What a decode step costs, for `gufo bench`: on the host, a wrapper around the step's compute
 * pass counts its dispatches; on the GPU, a profiling pass gives every dispatch its own compute
 * pass with timestamp writes, so each kernel's GPU time is measured apart (the extra pass
 * boundaries cost a little, so the profile's total reads slightly above the fused step's time).
 *
 * Kernels are named by their pipeline's label. Weight kernels register the bytes their bind
 * group reads (noteReadBytes), and decode attention the KV cache bytes it reads at the step's
 * position, which gives their achieved bandwidth; other kernels have none.
 */

import type { KernelTime, StepProfile } from '../../engine-wire/protocol';
import { PacedWait } from './paced-wait';

/** Bytes one dispatch reads, by the bind group at index 0 (a WeakMap: bind groups come and go with models). */
const readBytes = new WeakMap<GPUBindGroup, number | (() => number)>();

/**
 * Records that a dispatch with `group` bound at index 0 reads `bytes` (e.g. a weight part's), or
 * what `bytes()` answers when the dispatch is encoded (e.g. a KV cache up to the step's position).
 */
export function noteReadBytes(group: GPUBindGroup, bytes: number | (() => number)): void {
  readBytes.set(group, bytes);
}

/** `pass` with dispatchWorkgroups replaced by `dispatch`; every other member passes through. */
function interceptDispatch(
  pass: GPUComputePassEncoder,
  dispatch: (x: number, y?: number, z?: number) => void,
): GPUComputePassEncoder {
  return new Proxy(pass, {
    get(target, key) {
      if (key === 'dispatchWorkgroups') return dispatch;
      const value: unknown = Reflect.get(target, key);
      // Dawn's methods need the real encoder as `this`.
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/**
 * A stand-in compute pass that hands each dispatch, with the pipeline and bind groups set before
 * it, to `dispatch` (the profiler's timed passes, the load's kernel warm-up); end() ends nothing.
 */
export function recordingPass(
  dispatch: (
    pipeline: GPUComputePipeline,
    groups: ReadonlyMap<number, GPUBindGroup>,
    grid: [x: number, y: number, z: number],
  ) => void,
): GPUComputePassEncoder {
  let pipeline: GPUComputePipeline | undefined;
  const groups = new Map<number, GPUBindGroup>();
  const stand: Partial<GPUComputePassEncoder> = {
    setPipeline: (p) => void (pipeline = p),
    setBindGroup: ((index: number, group: GPUBindGroup | null) => {
      if (group) groups.set(index, group);
      else groups.delete(index);
    }) as GPUComputePassEncoder['setBindGroup'],
    dispatchWorkgroups: (x, y = 1, z = 1) => {
      if (!pipeline) throw new Error('a dispatch without a pipeline');
      dispatch(pipeline, groups, [x, y, z]);
    },
    end: () => {},
  };
  return stand as GPUComputePassEncoder;
}

/** Counts the decode steps' submissions and dispatches, and the host time spent encoding and submitting them. */
export class StepMeter {
  private dispatches = 0;
  private counted = 0;
  private submits = 0;
  private hostMs = 0;

  /** `pass`, counting its dispatches towards the submission being encoded. */
  wrap(pass: GPUComputePassEncoder): GPUComputePassEncoder {
    this.dispatches = 0;
    return interceptDispatch(pass, (x, y, z) => {
      this.dispatches++;
      pass.dispatchWorkgroups(x, y, z);
    });
  }

  /** The submission just made was part of decoding and took `hostMs` to encode and submit. */
  decodeSubmit(hostMs: number): void {
    this.submits++;
    this.counted += this.dispatches;
    this.hostMs += hostMs;
  }

  /** Averages over `tokens` decoded tokens (zeros when there were none). */
  perToken(tokens: number): { dispatchesPerToken: number; submitsPerToken: number; hostMsPerToken: number } {
    const per = (total: number) => (tokens > 0 ? total / tokens : 0);
    return {
      dispatchesPerToken: per(this.counted),
      submitsPerToken: per(this.submits),
      hostMsPerToken: per(this.hostMs),
    };
  }
}

/** Timestamp queries per query set (WebGPU's limit). */
const QUERIES_PER_SET = 4096;
const DISPATCHES_PER_SET = QUERIES_PER_SET / 2;

/**
 * Times every dispatch of the steps encoded through pass(): begin() per step, pass() for its
 * encoder, finish() before submitting it, collect() once it is submitted.
 */
export class StepProfiler {
  private readonly sets: GPUQuerySet[] = [];
  private readonly resolve: GPUBuffer;
  private readonly readback: GPUBuffer;
  /** Kernel and bytes of each dispatch of the step being encoded, in order. */
  private step: { kernel: string; bytes: number | null }[] = [];
  private readonly totals = new Map<string, { dispatches: number; ns: number; bytes: number | null }>();
  private tokens = 0;
  private readonly waits: PacedWait;

  /** `maxDispatches`: the most dispatches one step encodes; `pacesWaits`: GpuContext's. */
  constructor(
    device: GPUDevice,
    private readonly maxDispatches: number,
    pacesWaits = false,
  ) {
    // Paced as the engine's own steps are, so that on a CPU adapter the kernels' times are not those of a contended core.
    this.waits = new PacedWait(pacesWaits);
    const sets = Math.max(1, Math.ceil(maxDispatches / DISPATCHES_PER_SET));
    for (let i = 0; i < sets; i++) {
      this.sets.push(device.createQuerySet({ label: `profile ${i}`, type: 'timestamp', count: QUERIES_PER_SET }));
    }
    const bytes = sets * QUERIES_PER_SET * 8;
    this.resolve = device.createBuffer({
      label: 'profile resolve',
      size: bytes,
      usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
    });
    this.readback = device.createBuffer({
      label: 'profile readback',
      size: bytes,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
  }

  /**
   * A stand-in for the step's compute pass: each dispatch becomes its own timed pass on
   * `encoder`, with the pipeline and bind groups set so far. end() ends nothing (no pass is open).
   */
  pass(encoder: GPUCommandEncoder): GPUComputePassEncoder {
    this.step = [];
    return recordingPass((pipeline, groups, grid) => {
      const i = this.step.length;
      if (i >= this.maxDispatches)
        throw new Error(`profile: a step encodes more than the ${this.maxDispatches} dispatches counted`);
      const querySet = this.sets[Math.floor(i / DISPATCHES_PER_SET)]!;
      const slot = 2 * (i % DISPATCHES_PER_SET);
      const timed = encoder.beginComputePass({
        timestampWrites: { querySet, beginningOfPassWriteIndex: slot, endOfPassWriteIndex: slot + 1 },
      });
      timed.setPipeline(pipeline);
      for (const [index, group] of groups) timed.setBindGroup(index, group);
      timed.dispatchWorkgroups(...grid);
      timed.end();
      const noted = groups.has(0) ? readBytes.get(groups.get(0)!) : undefined;
      this.step.push({
        kernel: pipeline.label || 'unlabelled',
        bytes: typeof noted === 'function' ? noted() : (noted ?? null),
      });
    });
  }

  /** Copies the step's timestamps for collect(); call before finishing the encoder. */
  finish(encoder: GPUCommandEncoder): void {
    const n = this.step.length;
    this.sets.forEach((set, s) => {
      const count = Math.min(DISPATCHES_PER_SET, n - s * DISPATCHES_PER_SET);
      if (count > 0) encoder.resolveQuerySet(set, 0, 2 * count, this.resolve, s * QUERIES_PER_SET * 8);
    });
    encoder.copyBufferToBuffer(this.resolve, 0, this.readback, 0, this.readback.size);
  }

  /** Waits for the submitted step and adds its dispatches' times to the totals. */
  async collect(): Promise<void> {
    await this.waits.wait('profiled step', () => this.readback.mapAsync(GPUMapMode.READ));
    const t = new BigUint64Array(this.readback.getMappedRange().slice(0));
    this.readback.unmap();
    this.step.forEach(({ kernel, bytes }, i) => {
      const at = Math.floor(i / DISPATCHES_PER_SET) * QUERIES_PER_SET + 2 * (i % DISPATCHES_PER_SET);
      const ns = Math.max(0, Number(t[at + 1]! - t[at]!));
      const total = this.totals.get(kernel) ?? { dispatches: 0, ns: 0, bytes: bytes === null ? null : 0 };
      total.dispatches++;
      total.ns += ns;
      if (total.bytes !== null) total.bytes = bytes === null ? null : total.bytes + bytes;
      this.totals.set(kernel, total);
    });
    this.tokens++;
  }

  /** Per-token figures over the collected steps; `copyBytesPerSecond` is the roofline. */
  summary(copyBytesPerSecond: number): StepProfile {
    const per = Math.max(1, this.tokens);
    const kernels = [...this.totals].map(([kernel, t]): KernelTime => {
      const gpuMsPerToken = t.ns / 1e6 / per;
      const bytesPerToken = t.bytes === null ? null : t.bytes / per;
      const bytesPerSecond =
        bytesPerToken !== null && gpuMsPerToken > 0 ? bytesPerToken / (gpuMsPerToken / 1000) : null;
      return {
        kernel,
        dispatchesPerToken: t.dispatches / per,
        gpuMsPerToken,
        bytesPerToken,
        bytesPerSecond,
        rooflineFraction: bytesPerSecond === null ? null : bytesPerSecond / copyBytesPerSecond,
      };
    });
    kernels.sort((a, b) => b.gpuMsPerToken - a.gpuMsPerToken);
    return { tokens: this.tokens, gpuMsPerToken: kernels.reduce((s, k) => s + k.gpuMsPerToken, 0), kernels };
  }

  destroy(): void {
    for (const set of this.sets) set.destroy();
    this.resolve.destroy();
    this.readback.destroy();
  }
}
