/**
 * The engine: one GPU, at most one loaded model, and the decode loop. Runs inside the engine
 * process (handler.ts drives it from protocol messages); tests use it directly.
 *
 * A generation is: prefill the prompt in chunks of up to maxBatch tokens (the KV cache keeps the
 * previous sequence, so a prompt that extends it, as a chat does, only evaluates the new part),
 * then one submission per generated token: layers, output head and sampler on the GPU, and only
 * the sampled id read back. The next step copies that id from the sampler's buffer into the id
 * buffer on the GPU. Generations in several slots share each step: one submission for all of them
 * (DecoderModel.setRows), each slot's sampler drawing from its row's logits.
 *
 * A constrained generation (JSON mode) also holds the matcher: the next step's mask depends on the
 * token just read, so the CPU works it out (and writes it) between reading a token and submitting
 * the next step; an unconstrained generation submits at once and pays nothing for the mask.
 */
import { basename } from 'node:path';
import { readPoolingType } from '../core/embedding-pooling';
import { DEFAULT_KV_CACHE_TYPES, type KvCacheTypes } from '../../src-preload/api/kv-cache';
import { ConstrainedTokens, constraintLeads, type JsonConstraint } from '../core/constrained/token-constraint';
import { TokenTrie } from '../core/constrained/token-trie';
import type { GgufFile } from '../core/gguf/gguf-file';
import type { CollectedWeight } from '../core/imatrix';
import { createTokenizer } from '../core/tokenizer/index';
import { readVocab } from '../core/tokenizer/vocab';
import { openGguf } from '../node/gguf-io';
import { measureCopyBandwidth } from './gpu/bandwidth';
import { openGpu, type GpuContext } from './gpu/device';
import { popScopes, pushScopes, scoped } from './gpu/error-scope';
import { checkMemoryFit, parseMemoryBudget, type MemoryBudget } from './model/memory-plan';
import { StepMeter, StepProfiler } from './gpu/dispatch-profile';
import { KernelWarmUp } from './gpu/kernel-warm-up';
import { PacedWait } from './gpu/paced-wait';
import { GREEDY } from './gpu/ops';
import { BertModel } from './model/bert';
import { readHParams, type HParams } from './model/hparams';
import { DecoderModel, type TokenSource } from './model/decoder';
import { prefillLayerGroups, SUBMIT_FLOPS } from './prefill-split';
import type {
  BenchResult,
  EngineInfo,
  GenerateResult,
  ModelInfo,
  ModelUse,
  SamplingParams,
  StepProfile,
  StopReason,
  Timings,
} from '../engine-wire/protocol';
import { GpuSampler, type SampledToken } from './sampler';

export interface LoadOptions {
  /** Context length (default: the model's, at most 4096). */
  ctx?: number;
  /** Tokens per prefill submission (default 64). */
  maxBatch?: number;
  /** The K and V caches' types (default f16 each, as llama.cpp's). */
  kvTypes?: Partial<KvCacheTypes>;
  /**
   * Sequences kept, each in a KV cache of the whole context (default 1; llama.cpp's --parallel): a
   * generation continues the one whose tokens share the longest prefix with its prompt, else
   * replaces the least recently used.
   */
  slots?: number;
  /**
   * FLOPs one prefill submission may hold, its layers split into groups to fit (prefill-split.ts;
   * default: a second of a slow GPU on a GPU, no bound on a CPU adapter, which no watchdog resets).
   */
  submitFlops?: number;
  /** ModelOptions.kvBindingLimit: tests split the KV cache with it. */
  kvBindingLimit?: number;
  /** ModelOptions.gluPairs: tests compare the GLU computed once with it computed in ffn_down. */
  gluPairs?: boolean;
  /**
   * Bytes the model may take on the GPU in all (default: GUFO_MEMORY_BUDGET, else no cap, as
   * WebGPU does not say how much memory a GPU has): a load that needs more fails before it
   * allocates, naming the largest context that fits (model/memory-plan.ts).
   */
  memoryBudget?: number;
  onProgress?: (done: number, total: number) => void;
  /** After each kernel's first run at load (kernel-warm-up.ts): kernels run, of how many. */
  onKernels?: (done: number, total: number) => void;
  /** What the model is loaded for (default 'generate'): 'evaluate' runs no kernel at load. */
  use?: ModelUse;
}

export interface GenerateOptions {
  /** Tokens to generate at most. */
  maxTokens: number;
  sampling?: Partial<SamplingParams>;
  /** Top log-probabilities of the raw distribution to return with each token (0: none). */
  topLogprobs?: number;
  /** Ids that end the generation (default: the vocabulary's end-of-generation tokens). */
  stop?: readonly number[];
  /** Output held to JSON: only tokens that continue a valid document, and a stop id only once it is whole. */
  constraint?: JsonConstraint;
  signal?: AbortSignal;
  onToken?: (token: SampledToken, index: number) => void;
}

export interface BenchOptions {
  /** Also time every kernel of a few decode steps on the GPU (needs timestamp-query). */
  profile?: boolean;
  /** Tokens put in the context first, untimed (llama-bench's -d): the prompt and decode run after them. */
  depth?: number;
  /** Tokens done of depth + prompt + generated: after the depth, after the prompt, then each generated one. */
  onProgress?: (done: number, total: number) => void;
}

/** The budget a load is checked against: the option's, else GUFO_MEMORY_BUDGET's, else none. */
function memoryBudget(options: LoadOptions): MemoryBudget | undefined {
  if (options.memoryBudget !== undefined) {
    if (!(options.memoryBudget > 0)) throw new EngineError(`memoryBudget must be a positive number of bytes`);
    return { bytes: options.memoryBudget, source: 'memoryBudget' };
  }
  const env = process.env.GUFO_MEMORY_BUDGET;
  return env ? parseMemoryBudget(env, 'GUFO_MEMORY_BUDGET') : undefined;
}

/** Decode steps the profile times, after the measured run. */
const PROFILED_STEPS = 4;

/** The bench's untimed warm-up: a prefill of two tokens (the prefill kernels) and one decode step. */
const WARM_UP_TOKENS = 2;

export class EngineError extends Error {
  override readonly name = 'EngineError';
}

interface SlotState {
  /** Tokens whose keys and values are in this slot's KV cache, in order. */
  cached: number[];
  /** When a request last used it (a counter): the least recent one is replaced first. */
  used: number;
}

/** A generation under way in one slot, between the engine's steps. */
class Sequence {
  slot?: SlotState;
  /** The slot's index, and its sampler. */
  index = 0;
  sampler?: GpuSampler;
  /** Position of the next token in the slot's sequence. */
  pos = 0;
  readonly ids: number[] = [];
  readonly logprobs: [number, number][][] = [];
  /** Drawn and read back, not yet handed out. */
  token?: SampledToken;
  /** A constrained document that nothing may follow. */
  ended = false;
  /** Set once it ends; it is answered once its last step is read. */
  done?: StopReason;
  readonly stop: Set<number>;
  started = 0;
  firstAt = 0;
  evaluated = 0;
  cached = 0;

  constructor(
    readonly prompt: readonly number[],
    readonly options: GenerateOptions,
    stop: readonly number[],
    readonly constraint: ConstrainedTokens | undefined,
    readonly resolve: (result: GenerateResult) => void,
    readonly reject: (err: unknown) => void,
  ) {
    this.stop = new Set(stop);
  }
}

interface Loaded {
  path: string;
  hp: HParams;
  model: DecoderModel;
  /** Per slot, its sampler; slot 0's is the one 'sampled' submissions embed from (bench, warm-up). */
  samplers: GpuSampler[];
  info: ModelInfo;
  loadMs: number;
  /** Per slot of the model, the tokens whose keys and values are in its KV cache. */
  slots: SlotState[];
  /** LoadOptions.submitFlops, resolved. */
  submitFlops: number;
  /** The waits for a prompt's chunks (paced-wait.ts). */
  chunkWaits: PacedWait;
  /** The vocabulary's token bytes, read at the first constrained generation. */
  tokens?: TokenTrie;
  /** Settles once every kernel a generation runs has run once: at load, or at the first generation after a load to evaluate. */
  generationKernels: Promise<void> | null;
}

/** An encoder (bert): it only embeds. */
interface LoadedEncoder {
  path: string;
  model: BertModel;
  info: ModelInfo;
  loadMs: number;
}

export class Engine {
  private loaded: Loaded | null = null;
  private encoder: LoadedEncoder | null = null;
  private busy = false;
  /** Set while bench() measures: counts what each decode step submits. */
  private meter: StepMeter | null = null;
  /** Counts slot uses, for least-recently-used. */
  private uses = 0;
  /** Generations waiting for a slot, and those in one. */
  private readonly joining: Sequence[] = [];
  private running: Sequence[] = [];
  /** Whether loop() runs. */
  private looping = false;

  private constructor(readonly gpu: GpuContext) {}

  static async open(adapter?: string): Promise<Engine> {
    return new Engine(await openGpu(adapter));
  }

  get info(): EngineInfo {
    const l = this.loaded ?? this.encoder;
    return {
      adapter: this.gpu.info,
      model: l?.info ?? null,
      memory: l?.model.memory ?? null,
      loadMs: l?.loadMs ?? null,
    };
  }

  get model(): ModelInfo | null {
    return (this.loaded ?? this.encoder)?.info ?? null;
  }

  async load(path: string, options: LoadOptions = {}): Promise<EngineInfo> {
    this.unload();
    const started = performance.now();
    const { gguf, file } = openGguf(path);
    try {
      const hp = readHParams(gguf);
      if (hp.encoder) return await this.loadEncoder(path, gguf, hp, options, started);
      const ctx = Math.max(1, Math.floor(options.ctx ?? Math.min(hp.nCtxTrain, 4096)));
      const modelOptions = {
        ctx,
        maxBatch: Math.max(1, Math.min(options.maxBatch ?? 64, ctx)),
        kvTypes: {
          k: options.kvTypes?.k ?? DEFAULT_KV_CACHE_TYPES.k,
          v: options.kvTypes?.v ?? DEFAULT_KV_CACHE_TYPES.v,
        },
        kvBindingLimit: options.kvBindingLimit,
        gluPairs: options.gluPairs,
        slots: Math.max(1, Math.floor(options.slots ?? 1)),
      };
      checkMemoryFit(this.gpu, gguf, hp, modelOptions, memoryBudget(options));
      const device = this.gpu.device;
      const samplers: GpuSampler[] = [];
      let model: DecoderModel | undefined;
      try {
        model = await scoped(device, `loading ${basename(path)}`, async () => {
          const sampler = new GpuSampler(device, hp.nVocab, this.gpu.pacesWaits);
          samplers.push(sampler);
          const m = await DecoderModel.load(this.gpu, gguf, hp, sampler.out, {
            ...modelOptions,
            onProgress: options.onProgress,
          });
          model = m;
          const rows = (r: number) => ({ logits: m.rowLogits(r), step: m.rowStep(r) });
          sampler.bind(m.ops, m.act.logits, m.step, rows);
          if (options.use !== 'evaluate') await warmUpKernels(device, m, sampler, options.onKernels);
          for (let i = 1; i < m.slots; i++) {
            const own = new GpuSampler(device, hp.nVocab, this.gpu.pacesWaits);
            samplers.push(own);
            own.bind(m.ops, m.act.logits, m.step, rows);
          }
          return m;
        });
      } catch (err) {
        model?.destroy();
        for (const s of samplers) s.destroy();
        throw err;
      }
      await this.gpu.device.queue.onSubmittedWorkDone();
      const submitFlops = options.submitFlops ?? (this.gpu.info.isFallbackAdapter ? Infinity : SUBMIT_FLOPS);
      this.loaded = {
        path,
        hp,
        model,
        samplers,
        info: modelInfo(path, gguf, hp, ctx),
        loadMs: performance.now() - started,
        slots: Array.from({ length: model.slots }, () => ({ cached: [], used: 0 })),
        submitFlops,
        chunkWaits: new PacedWait(this.gpu.pacesWaits),
        generationKernels: options.use === 'evaluate' ? null : Promise.resolve(),
      };
      return this.info;
    } finally {
      file.close();
    }
  }

  /** An encoder's context is one input: at most its trained length (its position table). */
  private async loadEncoder(
    path: string,
    gguf: GgufFile,
    hp: HParams,
    options: LoadOptions,
    started: number,
  ): Promise<EngineInfo> {
    const ctx = Math.max(1, Math.min(Math.floor(options.ctx ?? 4096), hp.nCtxTrain));
    const model = await scoped(this.gpu.device, `loading ${basename(path)}`, () =>
      BertModel.load(this.gpu, gguf, hp, { ctx, onProgress: options.onProgress }),
    );
    await this.gpu.device.queue.onSubmittedWorkDone();
    this.encoder = { path, model, info: modelInfo(path, gguf, hp, ctx), loadMs: performance.now() - started };
    return this.info;
  }

  unload(): void {
    this.encoder?.model.destroy();
    this.encoder = null;
    if (!this.loaded) return;
    this.loaded.model.destroy();
    for (const s of this.loaded.samplers) s.destroy();
    this.loaded = null;
  }

  destroy(): void {
    this.unload();
    this.gpu.destroy();
  }

  /**
   * Generates up to maxTokens after `prompt` (token ids, BOS included if wanted). Generations
   * asked while others run share their decode steps: each takes a slot of its own (takeSlot; it
   * waits for one when all are taken), prefills between two steps, then joins the batch.
   */
  async generate(prompt: readonly number[], options: GenerateOptions): Promise<GenerateResult> {
    const l = this.require();
    if (prompt.length === 0) throw new EngineError('the prompt has no tokens');
    if (prompt.length > l.model.options.ctx) {
      throw new EngineError(`the prompt (${prompt.length} tokens) does not fit the context of ${l.model.options.ctx}`);
    }
    if (this.busy) throw new EngineError('the engine is busy with another request');
    await this.generationKernels(l);
    const stop = options.stop ?? l.info.eog;
    const constraint = options.constraint
      ? new ConstrainedTokens(constraintLeads(options.constraint), this.tokenTrie(l), stop)
      : undefined;
    return new Promise<GenerateResult>((resolve, reject) => {
      this.joining.push(new Sequence(prompt, options, stop, constraint, resolve, reject));
      if (!this.looping) {
        this.looping = true;
        void this.loop(l);
      }
    });
  }

  /**
   * A model loaded to evaluate has run none of its decode kernels: the first generation runs them
   * once before any sequence starts (the warm-up's garbage in the caches is then forgotten).
   */
  private generationKernels(l: Loaded): Promise<void> {
    if (l.generationKernels) return l.generationKernels;
    this.enter();
    const ran = scoped(this.gpu.device, 'preparing the kernels of a generation', async () => {
      await warmUpKernels(this.gpu.device, l.model, l.samplers[0]!);
      for (const slot of l.slots) slot.cached.length = 0;
    });
    l.generationKernels = ran.finally(() => (this.busy = false));
    // A failed warm-up is tried again by the next generation.
    ran.catch(() => (l.generationKernels = null));
    return l.generationKernels;
  }

  /** Admits waiting generations and steps the running ones together until none is left. */
  private async loop(l: Loaded): Promise<void> {
    for (;;) {
      if (this.joining.length === 0 && this.running.length === 0) {
        this.looping = false;
        return;
      }
      try {
        await this.admit(l);
        await this.step(l);
      } catch (err) {
        // The caches may hold a partial step: forget them rather than trust them.
        for (const seq of this.running.splice(0)) {
          seq.slot!.cached.length = 0;
          await seq.sampler!.drain().catch(() => {});
          seq.reject(err);
        }
      }
    }
  }

  /** Prefills waiting generations into free slots, one after the other; each gets its first token. */
  private async admit(l: Loaded): Promise<void> {
    while (this.joining.length > 0 && this.running.length < l.slots.length) {
      const seq = this.joining.shift()!;
      const o = seq.options;
      seq.started = performance.now();
      const slot = this.takeSlot(l, seq.prompt, new Set(this.running.map((r) => r.slot!)));
      seq.slot = slot;
      seq.index = l.slots.indexOf(slot);
      seq.sampler = l.samplers[seq.index]!;
      this.running.push(seq);
      try {
        seq.sampler.configure({ ...GREEDY, ...o.sampling }, o.topLogprobs ?? 0, seq.prompt, !!seq.constraint);
        if (seq.constraint) seq.sampler.setMask(allowedNext(seq.constraint));
        const { first, evaluated, cached } = await this.prefill(l, seq);
        seq.firstAt = performance.now();
        seq.evaluated = evaluated;
        seq.cached = cached;
        seq.pos = seq.prompt.length;
        if (!first) seq.done = 'cancelled';
        else if (o.maxTokens === 0) seq.done = 'length';
        else seq.token = first;
      } catch (err) {
        slot.cached.length = 0;
        await seq.sampler.drain().catch(() => {});
        this.running.splice(this.running.indexOf(seq), 1);
        seq.reject(err);
        continue;
      }
      if (seq.done) this.finish(seq);
    }
  }

  /**
   * Evaluates the part of the prompt the slot's KV cache lacks (at least its last token, whose
   * logits give the first generated token), in chunks of up to maxBatch tokens. No first token
   * when cancelled between chunks.
   */
  private async prefill(
    l: Loaded,
    seq: Sequence,
  ): Promise<{ first?: SampledToken; evaluated: number; cached: number }> {
    const { model } = l;
    const { prompt, slot } = seq;
    const cached = Math.min(commonPrefix(slot!.cached, prompt), prompt.length - 1);
    slot!.cached.length = cached;
    let pos = cached;
    while (pos < prompt.length) {
      const n = Math.min(model.options.maxBatch, prompt.length - pos);
      this.gpu.device.queue.writeBuffer(model.ids, 0, Uint32Array.from(prompt.slice(pos, pos + n)));
      const last = pos + n === prompt.length;
      model.setSlot(seq.index);
      const taken = this.checked('evaluating the prompt', () => this.submit(pos, n, last ? seq.sampler : undefined));
      slot!.cached.push(...prompt.slice(pos, pos + n));
      pos += n;
      if (last) {
        const [, first] = await Promise.all([
          taken,
          l.chunkWaits.wait(`prompt chunk of ${n}`, () => seq.sampler!.read()),
        ]);
        return { first, evaluated: pos - cached, cached };
      }
      await Promise.all([
        taken,
        l.chunkWaits.wait(`prompt chunk of ${n}`, () => this.gpu.device.queue.onSubmittedWorkDone()),
      ]);
      if (seq.options.signal?.aborted) {
        slot!.cached.length = 0;
        // Cancelled mid-prompt: what was read, not the whole prompt.
        return { evaluated: pos - cached, cached };
      }
    }
    throw new Error('unreachable: the prompt has at least one token');
  }

  /**
   * One decode step of every running generation: the steps of those going on are submitted before
   * the tokens just read are handed out (onToken), so the GPU works meanwhile; then their tokens
   * are read. A generation ends at a stop token, maxTokens, a cancel, a full context, or a
   * constrained document that nothing may follow (with no stop ids to end it).
   */
  private async step(l: Loaded): Promise<void> {
    const ready = this.running.filter((seq) => seq.token);
    const next: Sequence[] = [];
    for (const seq of ready) {
      const { token, options: o } = seq;
      let more =
        seq.ids.length + 1 < o.maxTokens &&
        !seq.stop.has(token!.id) &&
        !o.signal?.aborted &&
        seq.pos < l.model.options.ctx;
      // Constrained: nothing may follow a whole document when no stop id is allowed to end it.
      if (more && seq.constraint) {
        seq.constraint.accept(token!.id);
        const mask = seq.constraint.mask();
        if (mask) seq.sampler!.setMask(mask);
        else seq.ended = true;
        more = !seq.ended;
      }
      if (more) next.push(seq);
    }
    const taken = next.length > 0 ? this.checked('in a decode step', () => this.submitStep(l, next)) : undefined;
    for (const seq of ready) {
      const token = seq.token!;
      seq.token = undefined;
      seq.ids.push(token.id);
      if (token.top) seq.logprobs.push(token.top);
      seq.options.onToken?.(token, seq.ids.length - 1);
      if (seq.stop.has(token.id) || seq.ended) seq.done = 'stop';
      else if (seq.ids.length >= seq.options.maxTokens) seq.done = 'length';
      else if (seq.options.signal?.aborted) seq.done = 'cancelled';
      else if (!next.includes(seq)) seq.done = 'context';
    }
    // A step started for a token that ended up not wanted (onToken cancelled): it finishes unread.
    // Only tokens of a step the GPU took are handed out.
    const [tokens] = await Promise.all([Promise.all(next.map((seq) => seq.sampler!.read())), taken]);
    next.forEach((seq, i) => {
      if (!seq.done) seq.token = tokens[i];
    });
    for (const seq of [...this.running]) if (seq.done) this.finish(seq);
  }

  /**
   * The decode step of `seqs`, each embedding the token its sampler drew last: one submission of
   * all their rows (the matmuls over all of them), or one per group of model.maxRows; a row alone
   * runs as a plain decode step.
   */
  private submitStep(l: Loaded, seqs: Sequence[]): void {
    const { model } = l;
    const device = this.gpu.device;
    for (let i = 0; i < seqs.length; i += model.maxRows) {
      const started = performance.now();
      const group = seqs.slice(i, i + model.maxRows);
      const encoder = device.createCommandEncoder();
      group.forEach((seq, r) => encoder.copyBufferToBuffer(seq.sampler!.out, 0, model.ids, 4 * r, 4));
      if (group.length === 1) {
        model.setSlot(group[0]!.index);
        model.setBatch(group[0]!.pos, 1);
      } else model.setRows(group.map((seq) => ({ slot: seq.index, pos: seq.pos })));
      const pass = this.meter ? this.meter.wrap(encoder.beginComputePass()) : encoder.beginComputePass();
      model.encodeBody(pass, 'ids');
      if (group.length === 1) {
        model.encodeHead(pass);
        group[0]!.sampler!.encode(pass);
      } else {
        model.encodeAllLogits(pass);
        group.forEach((seq, r) => seq.sampler!.encode(pass, r));
      }
      pass.end();
      for (const seq of group) seq.sampler!.encodeReadback(encoder, group.length);
      device.queue.submit([encoder.finish()]);
      this.meter?.decodeSubmit(performance.now() - started);
    }
    for (const seq of seqs) {
      seq.slot!.cached.push(seq.token!.id);
      seq.pos += 1;
    }
  }

  private finish(seq: Sequence): void {
    this.running.splice(this.running.indexOf(seq), 1);
    const { ids, logprobs, evaluated, cached, started, firstAt } = seq;
    const decodeMs = performance.now() - firstAt;
    const n = ids.length;
    const timings: Timings = {
      promptTokens: evaluated,
      cachedTokens: cached,
      ttftMs: firstAt - started,
      prefillTokS: evaluated / ((firstAt - started) / 1000),
      decodeTokS: n > 1 ? (n - 1) / (decodeMs / 1000) : 0,
      generated: n,
      decodeMs,
    };
    seq.resolve({
      ids,
      ...(seq.options.topLogprobs ? { logprobs } : {}),
      stopReason: seq.done ?? 'length',
      timings,
    });
  }

  /**
   * Importance-matrix collection: evaluates `ids` from position 0 (the prefill path, no logits),
   * adding the squares of every weight matrix's inputs to the model's sums; takeActivations()
   * reads them back.
   */
  async collectActivations(ids: readonly number[]): Promise<void> {
    const l = this.require();
    if (ids.length > l.model.options.ctx)
      throw new EngineError(`${ids.length} tokens do not fit the context of ${l.model.options.ctx}`);
    this.enter();
    const { model } = l;
    const device = this.gpu.device;
    this.takeSlot(l, []);
    model.collector.active = true;
    try {
      await scoped(device, `collecting activations over ${ids.length} tokens`, async () => {
        for (let pos = 0; pos < ids.length;) {
          const { n, encoder, pass } = this.prefillBatch(model, ids, pos);
          pass.end();
          device.queue.submit([encoder.finish()]);
          pos += n;
        }
        await device.queue.onSubmittedWorkDone();
      });
    } finally {
      model.collector.active = false;
      this.busy = false;
    }
  }

  /** The activation sums collected so far, per weight matrix (then zeroed). */
  takeActivations(): Promise<CollectedWeight[]> {
    return this.require().model.takeActivations();
  }

  /**
   * Teacher forcing, for tests and evaluation: the logits after each token of `ids`, evaluated from
   * position 0 in batches of up to maxBatch tokens (the prefill path).
   */
  async logits(ids: readonly number[], onLogits: (logits: Float32Array, index: number) => void): Promise<void> {
    const l = this.require();
    const vocab = l.hp.nVocab;
    await this.forward(
      ids,
      vocab,
      (pass) => l.model.encodeAllLogits(pass),
      (rows, pos, n) => {
        for (let t = 0; t < n; t++) onLogits(rows.subarray(t * vocab, (t + 1) * vocab), pos + t);
      },
    );
  }

  /** Embeddings: the final hidden state (after output_norm, no head) of each token of `ids`, tokens × embedding, from position 0. */
  async hiddenStates(ids: readonly number[]): Promise<Float32Array> {
    if (ids.length === 0) throw new EngineError('an input to embed has no tokens');
    if (this.encoder) return (await this.encoderHiddenStates(this.encoder.model, [ids]))[0]!;
    const l = this.require();
    const width = l.hp.nEmbd;
    const out = new Float32Array(ids.length * width);
    await this.forward(
      ids,
      width,
      (pass) => l.model.encodeHiddenStates(pass),
      (rows, pos) => out.set(rows, pos * width),
    );
    return out;
  }

  /** hiddenStates of each input; an encoder evaluates as many at once as its context holds. */
  async hiddenStatesOfEach(inputs: readonly (readonly number[])[]): Promise<Float32Array[]> {
    if (inputs.some((ids) => ids.length === 0)) throw new EngineError('an input to embed has no tokens');
    if (!this.encoder) {
      const out: Float32Array[] = [];
      for (const ids of inputs) out.push(await this.hiddenStates(ids));
      return out;
    }
    return this.encoderHiddenStates(this.encoder.model, inputs);
  }

  /**
   * An encoder attends over each whole input at once: each must fit the context; consecutive
   * inputs share a pass while their tokens together fit it.
   */
  private async encoderHiddenStates(model: BertModel, inputs: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const { ctx } = model.options;
    const long = inputs.find((ids) => ids.length > ctx);
    if (long) throw new EngineError(`${long.length} tokens do not fit the context of ${ctx}`);
    this.enter();
    try {
      const out: Float32Array[] = [];
      for (let i = 0; i < inputs.length;) {
        let end = i + 1;
        for (let tokens = inputs[i]!.length; end < inputs.length && tokens + inputs[end]!.length <= ctx; end++)
          tokens += inputs[end]!.length;
        const batch = inputs.slice(i, end);
        out.push(...(await scoped(this.gpu.device, 'embedding', () => model.hiddenStates(batch))));
        i = end;
      }
      return out;
    } finally {
      this.busy = false;
    }
  }

  /**
   * `ids` from position 0 with an empty cache, in batches of up to maxBatch tokens: each batch's
   * `head` output (`width` values per token) read back and handed to `onBatch`.
   */
  private async forward(
    ids: readonly number[],
    width: number,
    head: (pass: GPUComputePassEncoder) => GPUBuffer,
    onBatch: (rows: Float32Array, pos: number, n: number) => void,
  ): Promise<void> {
    const l = this.require();
    if (ids.length > l.model.options.ctx)
      throw new EngineError(`${ids.length} tokens do not fit the context of ${l.model.options.ctx}`);
    this.enter();
    const { model } = l;
    const device = this.gpu.device;
    let staging: GPUBuffer | undefined;
    const slot = this.takeSlot(l, []);
    try {
      const readback = await scoped(device, 'allocating the readback buffer', () =>
        Promise.resolve(
          device.createBuffer({
            size: model.options.maxBatch * width * 4,
            usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
          }),
        ),
      );
      staging = readback;
      for (let pos = 0; pos < ids.length;) {
        const n = Math.min(model.options.maxBatch, ids.length - pos);
        const bytes = n * width * 4;
        const taken = this.checked(`evaluating ${ids.length} tokens`, () => {
          const { encoder, pass } = this.prefillBatch(model, ids, pos);
          const out = head(pass);
          pass.end();
          encoder.copyBufferToBuffer(out, 0, readback, 0, bytes);
          device.queue.submit([encoder.finish()]);
        });
        await Promise.all([
          taken,
          l.chunkWaits.wait(`evaluated chunk of ${n}`, () => readback.mapAsync(GPUMapMode.READ, 0, bytes)),
        ]);
        const rows = new Float32Array(readback.getMappedRange(0, bytes).slice(0));
        readback.unmap();
        onBatch(rows, pos, n);
        slot.cached.push(...ids.slice(pos, pos + n));
        pos += n;
      }
    } catch (err) {
      slot.cached.length = 0;
      throw err;
    } finally {
      staging?.destroy();
      this.busy = false;
    }
  }

  /** The batch of `ids` from `pos` (up to maxBatch tokens) written and encoded through the prefill body; the caller adds to the pass and ends it. */
  private prefillBatch(
    model: DecoderModel,
    ids: readonly number[],
    pos: number,
  ): { n: number; encoder: GPUCommandEncoder; pass: GPUComputePassEncoder } {
    const device = this.gpu.device;
    const n = Math.min(model.options.maxBatch, ids.length - pos);
    device.queue.writeBuffer(model.ids, 0, Uint32Array.from(ids.slice(pos, pos + n)));
    return { n, ...this.encodeBody(model, pos, n, 'ids') };
  }

  /**
   * `tokens` tokens from pos0 encoded through the body. A prefill's layers split into groups of
   * at most submitFlops (prefill-split.ts; on a GPU, none runs past about a second on a slow one),
   * each submitted here but the last, which the returned pass holds for the caller to add to, end
   * and submit. A decode step (one token) stays one submission.
   */
  private encodeBody(
    model: DecoderModel,
    pos0: number,
    tokens: number,
    source: TokenSource,
  ): { encoder: GPUCommandEncoder; pass: GPUComputePassEncoder } {
    const device = this.gpu.device;
    model.setBatch(pos0, tokens);
    const groups =
      tokens > 1 ? prefillLayerGroups(model.layerWork, pos0, tokens, this.loaded!.submitFlops) : [undefined];
    for (let i = 0; ; i++) {
      const encoder = device.createCommandEncoder();
      const pass = this.meter ? this.meter.wrap(encoder.beginComputePass()) : encoder.beginComputePass();
      model.encodeBody(pass, source, groups[i]);
      if (i === groups.length - 1) return { encoder, pass };
      pass.end();
      device.queue.submit([encoder.finish()]);
    }
  }

  /**
   * llama-bench style: prefill `promptTokens` tokens, then decode `genTokens` greedily (end of
   * generation ignored), after `depth` tokens already in the cache (prefilled untimed; default
   * none). The roofline is this adapter's copy bandwidth, measured right after. With `profile`, a
   * few more decode steps have each kernel timed.
   */
  async bench(promptTokens: number, genTokens: number, options: BenchOptions = {}): Promise<BenchResult> {
    const l = this.require();
    const { vocab, bos } = l.info;
    const p = Math.max(1, Math.floor(promptTokens));
    const n = Math.max(1, Math.floor(genTokens));
    const depth = Math.max(0, Math.floor(options.depth ?? 0));
    const needed = depth + p + n;
    if (needed > l.model.options.ctx)
      throw new EngineError(
        `bench needs a context of ${needed} tokens; the model was loaded with ${l.model.options.ctx}`,
      );
    // Any ids will do; avoid the first few (control tokens in most vocabularies).
    const tokens = Array.from({ length: depth + p }, (_, i) =>
      i === 0 && bos !== null ? bos : 3 + ((i * 7919) % (vocab - 3)),
    );
    if (options.profile && !this.gpu.hasTimestamps) {
      throw new EngineError(`profiling needs the timestamp-query feature, which ${this.gpu.info.name} lacks`);
    }
    // Untimed first: load ran every kernel once (kernel-warm-up.ts), but at a grid of two tokens;
    // this run's sizes warm the rest (e.g. buffers touched the first time) before the timed one.
    // Its one decode step is also counted: it sizes the profile when the timed run decodes none (-n 1).
    this.resetCache();
    const warmUp = await this.metered(() =>
      this.generate(tokens.slice(0, WARM_UP_TOKENS), { maxTokens: WARM_UP_TOKENS, stop: [] }),
    );
    this.resetCache();
    const progress = (done: number) => options.onProgress?.(done, needed);
    progress(0);
    // The depth's tokens fill the cache untimed; the timed run then evaluates only the prompt after them.
    if (depth > 0) await this.generate(tokens.slice(0, depth), { maxTokens: 1, stop: [] });
    progress(depth);
    const timed = await this.metered(() =>
      this.generate(tokens, { maxTokens: n, stop: [], onToken: (_token, index) => progress(depth + p + index + 1) }),
    );
    const r = timed.result;
    const steps = timed.meter.perToken(r.ids.length - 1);
    const profiledDispatches = Math.max(
      steps.dispatchesPerToken,
      warmUp.meter.perToken(warmUp.result.ids.length - 1).dispatchesPerToken,
    );
    const avgPositions = depth + p + (r.ids.length - 1) / 2;
    const bytesPerToken = l.model.weightBytesPerToken + avgPositions * l.model.kvBytesPerPosition;
    const achieved = bytesPerToken * r.timings.decodeTokS;
    const copy = await scoped(this.gpu.device, 'measuring copy bandwidth', () =>
      measureCopyBandwidth(this.gpu, { bytes: 64 * 2 ** 20, iterations: 5 }),
    );
    const profile = options.profile
      ? await this.profileDecode(
          l,
          depth + p,
          Math.min(PROFILED_STEPS, n),
          Math.ceil(profiledDispatches),
          copy.bytesPerSecond,
        )
      : undefined;
    return {
      depth,
      promptTokens: p,
      genTokens: r.ids.length,
      prefillTokS: r.timings.prefillTokS,
      decodeTokS: r.timings.decodeTokS,
      bytesPerToken,
      achievedBytesPerSecond: achieved,
      copyBytesPerSecond: copy.bytesPerSecond,
      rooflineFraction: achieved / copy.bytesPerSecond,
      ...steps,
      ...(profile ? { profile } : {}),
      kernelShapes: l.model.matmul.shapes(),
    };
  }

  /** Runs `generate` with its decode steps' dispatches and submissions counted. */
  private async metered(
    generate: () => Promise<GenerateResult>,
  ): Promise<{ result: GenerateResult; meter: StepMeter }> {
    const meter = new StepMeter();
    this.meter = meter;
    try {
      return { result: await generate(), meter };
    } finally {
      this.meter = null;
    }
  }

  /**
   * Times each kernel of `steps` decode steps from position `pos` (one submission each, every
   * dispatch in its own timed pass), after a measured run: the cache it overwrites is forgotten.
   */
  private async profileDecode(
    l: Loaded,
    pos: number,
    steps: number,
    maxDispatches: number,
    copyBytesPerSecond: number,
  ): Promise<StepProfile> {
    const { model } = l;
    // Slot 0's sampler: the one 'sampled' submissions embed from (bench, warm-up).
    const sampler = l.samplers[0]!;
    const device = this.gpu.device;
    this.enter();
    const slot = this.takeSlot(l, []);
    let profiler: StepProfiler | undefined;
    try {
      return await scoped(device, 'profiling decode steps', async () => {
        const p = (profiler = new StepProfiler(device, Math.max(1, maxDispatches), this.gpu.pacesWaits));
        for (let i = 0; i < steps; i++) {
          model.setBatch(pos + i, 1);
          const encoder = device.createCommandEncoder();
          const pass = p.pass(encoder);
          model.encodeBody(pass, 'sampled');
          model.encodeHead(pass);
          sampler.encode(pass);
          pass.end();
          p.finish(encoder);
          device.queue.submit([encoder.finish()]);
          await p.collect();
        }
        return p.summary(copyBytesPerSecond);
      });
    } finally {
      profiler?.destroy();
      slot.cached.length = 0;
      this.busy = false;
    }
  }

  /** The loaded model's token bytes in a trie, read from its file once (a VocabError if its tokenizer is unsupported). */
  private tokenTrie(l: Loaded): TokenTrie {
    if (!l.tokens) {
      const { gguf, file } = openGguf(l.path);
      try {
        l.tokens = TokenTrie.fromTokenizer(createTokenizer(readVocab(gguf)), l.hp.nVocab);
      } finally {
        file.close();
      }
    }
    return l.tokens;
  }

  /** Forgets every slot's KV cache contents (the next generation evaluates its whole prompt). */
  resetCache(): void {
    for (const slot of this.loaded?.slots ?? []) slot.cached.length = 0;
  }

  /**
   * The slot a sequence starting with `ids` runs in, made the model's current one: of the slots
   * that keep at least half of their tokens for it, the one sharing the longest prefix with `ids`;
   * else (and between equals) the least recently used. So an unrelated prompt that shares a short
   * head (BOS, a system prompt) with a long cached one takes another slot rather than cutting it.
   * The slot's tokens are trimmed to the shared prefix.
   */
  private takeSlot(l: Loaded, ids: readonly number[], inUse?: ReadonlySet<SlotState>): SlotState {
    let best = -1;
    let bestShared = 0;
    let oldest = -1;
    for (const [i, s] of l.slots.entries()) {
      if (inUse?.has(s)) continue;
      if (oldest < 0 || s.used < l.slots[oldest]!.used) oldest = i;
      const shared = commonPrefix(s.cached, ids);
      if (2 * shared < s.cached.length) continue;
      if (best < 0 || shared > bestShared || (shared === bestShared && s.used < l.slots[best]!.used))
        [best, bestShared] = [i, shared];
    }
    // Replaced, it still keeps what it shares.
    if (best < 0) [best, bestShared] = [oldest, commonPrefix(l.slots[oldest]!.cached, ids)];
    const slot = l.slots[best]!;
    slot.cached.length = bestShared;
    slot.used = ++this.uses;
    l.model.setSlot(best);
    return slot;
  }

  /**
   * Runs `submit` (which encodes and submits) inside the error scopes (gpu/error-scope.ts): the
   * promise rejects with what went wrong if the GPU could not take it (its results are garbage).
   */
  private checked(what: string, submit: () => void): Promise<void> {
    const { device } = this.gpu;
    pushScopes(device);
    try {
      submit();
    } catch (err) {
      // The throw is the error to report; the scopes are only closed.
      void popScopes(device, what).catch(() => {});
      throw err;
    }
    return popScopes(device, what);
  }

  /** A prefill chunk: `tokens` tokens of the id buffer from `pos0`; with a sampler, the head and its draw too. */
  private submit(pos0: number, tokens: number, sampler?: GpuSampler): void {
    const { model } = this.loaded!;
    const { encoder, pass } = this.encodeBody(model, pos0, tokens, 'ids');
    if (sampler) {
      model.encodeHead(pass);
      sampler.encode(pass);
    }
    pass.end();
    sampler?.encodeReadback(encoder);
    this.gpu.device.queue.submit([encoder.finish()]);
  }

  private require(): Loaded {
    if (this.encoder)
      throw new EngineError(
        `${this.encoder.path} is an embedding model (${this.encoder.info.architecture}): it only embeds`,
      );
    if (!this.loaded) throw new EngineError('no model loaded');
    return this.loaded;
  }

  private enter(): void {
    // Not `looping`: a generation's caller resumes before the loop sees it has nothing left.
    if (this.busy || this.running.length > 0 || this.joining.length > 0)
      throw new EngineError('the engine is busy with another request');
    this.busy = true;
  }
}

/**
 * Runs every kernel of a two-token prefill batch and of a decode step once, each sampling path
 * included, and with several slots of a batched decode step, so that the first answer pays no
 * compilation (kernel-warm-up.ts). The cache positions and activations it writes are garbage that
 * the first prefill overwrites.
 */
async function warmUpKernels(
  device: GPUDevice,
  model: DecoderModel,
  sampler: GpuSampler,
  onKernels?: (done: number, total: number) => void,
): Promise<void> {
  const warmUp = new KernelWarmUp(device);
  sampler.configure(GREEDY, 0, []);
  // A prefill of each token count that picks a kernel of its own (the smallest first), then a decode step.
  const steps: [pos0: number, tokens: number, source: TokenSource][] = [];
  for (const count of model.matmul.tokenSteps().slice(1)) {
    const tokens = Math.min(count, model.options.maxBatch, model.options.ctx);
    if (!steps.some(([, t]) => t === tokens)) steps.push([0, tokens, 'ids']);
  }
  const prefillTokens = steps[0]?.[1] ?? 1;
  if (prefillTokens < model.options.ctx) steps.push([prefillTokens, 1, 'sampled']);
  for (const [pos0, tokens, source] of steps) {
    model.setBatch(pos0, tokens);
    const pass = warmUp.pass();
    model.encodeBody(pass, source);
    model.encodeHead(pass);
    sampler.encodeEveryPath(pass);
  }
  if (model.maxRows > 1) {
    // Several slots: a batched decode step, whose head computes every row's logits.
    model.setRows([
      { slot: 0, pos: 0 },
      { slot: 1, pos: 0 },
    ]);
    const pass = warmUp.pass();
    model.encodeBody(pass, 'ids');
    model.encodeAllLogits(pass);
    sampler.encode(pass, 0);
  }
  await warmUp.run(onKernels);
}

/** The mask of the first constrained token; a vocabulary that cannot even start the document is an error. */
function allowedNext(constraint: ConstrainedTokens): Uint32Array<ArrayBuffer> {
  const mask = constraint.mask();
  if (!mask) throw new EngineError('no token of the vocabulary can start the constrained output');
  return mask;
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

function modelInfo(path: string, gguf: GgufFile, hp: HParams, ctx: number): ModelInfo {
  let bos: number | null = null;
  let addBos = false;
  let eog: number[] = [];
  try {
    const vocab = readVocab(gguf);
    bos = vocab.bos;
    addBos = vocab.addBos;
    eog = [...vocab.eog];
  } catch {
    // A file without a tokenizer still runs on token ids.
  }
  return {
    path,
    architecture: hp.arch,
    name: hp.name,
    layers: hp.nLayer,
    embedding: hp.nEmbd,
    heads: hp.nHead,
    kvHeads: hp.nHeadKv,
    headSize: hp.headDim,
    vocab: hp.nVocab,
    pooling: readPoolingType(gguf, hp.arch),
    experts: hp.moe?.nExpert ?? 0,
    expertsUsed: hp.moe?.nExpertUsed ?? 0,
    ctx,
    ctxTrain: hp.nCtxTrain,
    bos,
    addBos,
    eog,
  };
}
