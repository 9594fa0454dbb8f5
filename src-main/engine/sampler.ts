/**
 * The GPU sampler of one loaded model: its buffers (scratch, penalty ring, output, token mask), the
 * sample and top_logprobs dispatches, and the small staging buffers through which the chosen id
 * (and, when asked, its log-probability and the top log-probabilities) come back: 4 bytes per step otherwise. Two staging
 * buffers alternate, so the next step can be submitted while the previous one's result is read.
 * A constrained generation draws through the masked entry points (built on first use), with the
 * mask rewritten before each step; an unconstrained one never touches the mask.
 *
 * Each slot of a model has a sampler of its own (its settings, penalty ring, result): besides the
 * model's head (a prefill's last token, a decode step alone) it reads any row of a batched step
 * (rowSource), through dispatches made on first use.
 */
import { maskWords } from '../core/constrained/token-trie';
import {
  MAX_TOP_LOGPROBS,
  PENALTY_RING,
  SAMPLER_OUT_WORDS,
  SAMPLER_STATE_WORDS,
  samplerPath,
  samplingParamsBytes,
  type BufferArg,
  type Dispatch,
  type SampleArgs,
  type SamplerPath,
  type OpKernels,
  type Step,
} from './gpu/ops';
import { SampleUniform } from './gpu/kernel-uniforms';
import { PacedWait } from './gpu/paced-wait';
import type { SamplingParams } from '../engine-wire/protocol';

export interface SampledToken {
  id: number;
  /** The chosen token's natural-log probability in the raw distribution (when top log-probabilities are asked). */
  logprob?: number;
  /** [id, natural-log probability] of the raw distribution, most likely first (when asked). */
  top?: [number, number][];
}

/** Each of a sampler's buffers' sizes for a vocabulary of `vocab` (two readback buffers). */
export function samplerBufferSizes(vocab: number) {
  return {
    out: SAMPLER_OUT_WORDS * 4,
    work: Math.max(16, vocab * 4),
    state: SAMPLER_STATE_WORDS * 4,
    params: SampleUniform.byteSize,
    mask: Math.max(16, maskWords(vocab) * 4),
    readback: SAMPLER_OUT_WORDS * 4,
  };
}

/** All of a sampler's buffers together. */
export function samplerBytes(vocab: number): number {
  const s = samplerBufferSizes(vocab);
  return s.out + s.work + s.state + s.params + s.mask + 2 * s.readback;
}

export class GpuSampler {
  /** out[0]: the chosen id; the next 'sampled' submission embeds it from here. */
  readonly out: GPUBuffer;
  private readonly params: GPUBuffer;
  private readonly work: GPUBuffer;
  private readonly state: GPUBuffer;
  /** One bit per token: those a constrained draw may pick. */
  private readonly mask: GPUBuffer;
  private readonly staging: GPUBuffer[];
  /** Staging buffers with a copy submitted and not read yet, oldest first. */
  /** Steps in flight, oldest first, each with the kind of wait it paces (none: the caller paces it). */
  private readonly pending: { staging: GPUBuffer; pace?: string }[] = [];
  private nextStaging = 0;
  private bound?: { ops: OpKernels; args: SampleArgs };
  /** Where row r of a batched step has its logits and its position (set with bind). */
  private rowSource?: (row: number) => { logits: BufferArg; step: Step };
  /** The draws over the model's head, then over each row of a batched step (1 + row). */
  private readonly views: SamplerView[] = [];
  private sampleDispatches?: Record<SamplerPath, Dispatch>;
  private maskedDispatches?: Record<SamplerPath, Dispatch>;
  private path: SamplerPath = 'greedy';
  private masked = false;
  private logprobsDispatch?: Dispatch;
  private nLogprobs = 0;
  private readonly stateInit = new Uint32Array(SAMPLER_STATE_WORDS);

  private readonly waits: PacedWait;

  constructor(
    private readonly device: GPUDevice,
    readonly vocab: number,
    pacesWaits = false,
  ) {
    this.waits = new PacedWait(pacesWaits);
    const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;
    const size = samplerBufferSizes(vocab);
    this.out = device.createBuffer({ label: 'sampler out', size: size.out, usage: storage });
    this.work = device.createBuffer({ label: 'sampler work', size: size.work, usage: storage });
    this.state = device.createBuffer({ label: 'sampler state', size: size.state, usage: storage });
    this.params = device.createBuffer({
      label: 'sampler params',
      size: size.params,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    this.mask = device.createBuffer({
      label: 'sampler mask',
      size: size.mask,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    });
    this.staging = [0, 1].map((i) =>
      device.createBuffer({
        label: `sampler readback ${i}`,
        size: size.readback,
        usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
      }),
    );
  }

  get bytes(): number {
    return samplerBytes(this.vocab);
  }

  /** Builds the dispatches over the model's logits (once, at load); `rows`: a batched step's rows' logits and steps. */
  bind(ops: OpKernels, logits: GPUBuffer, step: Step, rows?: (row: number) => { logits: BufferArg; step: Step }): void {
    this.rowSource = rows;
    const args = {
      params: this.params,
      logits,
      work: this.work,
      state: this.state,
      out: this.out,
      step,
      mask: this.mask,
    };
    this.bound = { ops, args };
    this.sampleDispatches = dispatches(ops, args, false);
    this.logprobsDispatch = ops.topLogprobs(args);
    this.views.length = 0;
  }

  /**
   * Settings for the next generation: sampling parameters, how many top log-probabilities to
   * return per token, the tokens so far (the penalty window starts with the prompt's tail), and
   * whether draws go through the mask (setMask before each step).
   */
  configure(sampling: SamplingParams, nLogprobs: number, history: readonly number[], masked = false): void {
    if (this.pending.length > 0) throw new Error('sampler: reconfigured with steps in flight');
    if (!this.bound) throw new Error('sampler used before bind()');
    this.masked = masked;
    if (masked) this.maskedDispatches ??= dispatches(this.bound.ops, this.bound.args, true);
    this.nLogprobs = Math.max(0, Math.min(MAX_TOP_LOGPROBS, this.vocab, Math.floor(nLogprobs)));
    this.path = samplerPath(sampling, this.vocab);
    this.device.queue.writeBuffer(this.params, 0, samplingParamsBytes(this.vocab, sampling, this.nLogprobs));
    const tail = history.slice(-PENALTY_RING);
    this.stateInit.fill(0);
    this.stateInit[0] = tail.length;
    this.stateInit[1] = tail.length % PENALTY_RING;
    this.stateInit.set(tail, 2);
    this.device.queue.writeBuffer(this.state, 0, this.stateInit);
  }

  /** The tokens the next draw may pick (one bit each); written before the step is submitted. */
  setMask(words: Uint32Array<ArrayBuffer>): void {
    this.device.queue.writeBuffer(this.mask, 0, words);
  }

  /** Every unmasked draw and the top log-probabilities, for the load's kernel warm-up (kernel-warm-up.ts). */
  encodeEveryPath(pass: GPUComputePassEncoder): void {
    if (!this.sampleDispatches || !this.logprobsDispatch) throw new Error('sampler used before bind()');
    this.logprobsDispatch.encode(pass);
    for (const d of Object.values(this.sampleDispatches)) d.encode(pass);
  }

  /** Top log-probabilities (if configured), then the draw, after the model's head; `row`: of a batched step's logits instead. */
  encode(pass: GPUComputePassEncoder, row?: number): void {
    if (!this.sampleDispatches || !this.logprobsDispatch) throw new Error('sampler used before bind()');
    if (row === undefined) {
      if (this.nLogprobs > 0) this.logprobsDispatch.encode(pass);
      (this.masked ? this.maskedDispatches! : this.sampleDispatches)[this.path].encode(pass);
      return;
    }
    const view = this.rowView(row);
    if (this.nLogprobs > 0) view.logprobs.encode(pass);
    if (this.masked) view.masked ??= dispatches(this.bound!.ops, view.args, true);
    (this.masked ? view.masked! : view.sample)[this.path].encode(pass);
  }

  private rowView(row: number): SamplerView {
    let view = this.views[row];
    if (!view) {
      if (!this.rowSource || !this.bound) throw new Error("sampler: bound without a batched step's rows");
      const { ops, args: head } = this.bound;
      const args = { ...head, ...this.rowSource(row) };
      view = { args, sample: dispatches(ops, args, false), logprobs: ops.topLogprobs(args) };
      this.views[row] = view;
    }
    return view;
  }

  /**
   * After the compute pass: copies the result to a staging buffer (at most two steps in flight).
   * `rows`: the decode step's rows, whose wait this sampler paces by them (paced-wait.ts); none for
   * a prompt's last chunk, whose caller paces the read.
   */
  encodeReadback(encoder: GPUCommandEncoder, rows?: number): void {
    if (this.pending.length === this.staging.length) throw new Error('sampler: more than two steps in flight');
    const staging = this.staging[this.nextStaging]!;
    this.nextStaging = (this.nextStaging + 1) % this.staging.length;
    encoder.copyBufferToBuffer(this.out, 0, staging, 0, this.readBytes());
    this.pending.push({ staging, pace: rows === undefined ? undefined : `step of ${rows}` });
  }

  /** Waits for the oldest submitted step and returns its token. */
  async read(): Promise<SampledToken> {
    const step = this.pending.shift();
    if (!step) throw new Error('sampler: no step in flight');
    const { staging } = step;
    const bytes = this.readBytes();
    const settle = () => staging.mapAsync(GPUMapMode.READ, 0, bytes);
    await (step.pace ? this.waits.wait(step.pace, settle) : settle());
    const words = new Uint32Array(staging.getMappedRange(0, bytes));
    const id = words[0]!;
    let chosen: { logprob: number; top: [number, number][] } | undefined;
    if (this.nLogprobs > 0) {
      const floats = new Float32Array(words.buffer, words.byteOffset, words.length);
      chosen = { logprob: floats[1]!, top: [] };
      for (let r = 0; r < this.nLogprobs; r++) chosen.top.push([words[2 + 2 * r]!, floats[3 + 2 * r]!]);
    }
    staging.unmap();
    return chosen ? { id, ...chosen } : { id };
  }

  /** Waits out every step in flight, dropping their results (after an error mid-generation). */
  async drain(): Promise<void> {
    while (this.pending.length > 0) await this.read();
  }

  destroy(): void {
    for (const b of [this.out, this.work, this.state, this.params, this.mask, ...this.staging]) b.destroy();
  }

  private readBytes(): number {
    return (this.nLogprobs > 0 ? 2 + 2 * this.nLogprobs : 1) * 4;
  }
}

interface SamplerView {
  args: SampleArgs;
  sample: Record<SamplerPath, Dispatch>;
  masked?: Record<SamplerPath, Dispatch>;
  logprobs: Dispatch;
}

function dispatches(ops: OpKernels, args: SampleArgs, masked: boolean): Record<SamplerPath, Dispatch> {
  return {
    greedy: ops.sample(args, 'greedy', masked),
    top_k: ops.sample(args, 'top_k', masked),
    vocab: ops.sample(args, 'vocab', masked),
  };
}
