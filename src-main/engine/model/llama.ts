/**
 * The llama-family forward pass on the GPU: llama (Llama 2/3.x, Mistral, TinyLlama, SmolLM, and
 * Mixtral's experts), qwen2 (Q/K/V biases), qwen3 (per-head Q/K RMSNorm), and their
 * mixture-of-experts kin qwen2moe (biases, a gated shared expert) and qwen3moe (Q/K norms). One
 * function per step of the architecture, as llama2.c names them; each returns the Dispatches of
 * that step, built once at load (buffers, uniforms, bind groups), so a decode step only writes
 * the Step uniform and encodes.
 *
 *   x = embed(tokens)
 *   for each layer:  x += attention(rmsnorm(x))     (GQA over the layer's KV cache, RoPE)
 *                    x += ffn(rmsnorm(x))           (SwiGLU; MoE: moe-ffn.ts)
 *
 * The residual adds ride on the output projections (matmul with accumulate), and RoPE on the KV
 * store and the attention kernel, so a layer is 12 dispatches (qwen2's biases add 3, qwen3's Q/K
 * norms 2; an MoE FFN is 9 dispatches instead of 5, 14 with a shared expert).
 *   logits = output(rmsnorm(x of the last token))
 */
import { dequantizeTensor } from '../../core/dequantize';
import type { GgufFile } from '../../core/gguf/gguf-file';
import type { GpuContext } from '../gpu/device';
import { MatmulKernels, type TokenDispatch } from '../gpu/matmul';
import { OpKernels, Step, type Dispatch } from '../gpu/ops';
import { uploadWeights, type GpuWeight } from '../gpu/weights';
import { UnsupportedModelError, type HParams } from './hparams';
import { checkMoeShapes, moeFfn, moeLayerWeights, moeScratch, moeTensorNames, type MoeLayerWeights, type MoeScratch } from './moe-ffn';
import { ropeTable } from './rope-table';

export interface ModelOptions {
  /** Context length: positions the KV cache holds. */
  ctx: number;
  /** Most tokens one prefill submission evaluates (activation buffers are sized for it). */
  maxBatch: number;
  /** KV cache in halves (llama.cpp's default) rather than f32. */
  kvF16: boolean;
  onProgress?(done: number, total: number): void;
}

/** Where the embedding of a submission reads its token ids from. */
export type TokenSource = 'ids' | 'sampled';

interface Layer {
  attnNorm: GPUBuffer;
  ffnNorm: GPUBuffer;
  wq: GpuWeight;
  wk: GpuWeight;
  wv: GpuWeight;
  wo: GpuWeight;
  ffn: { gate: GpuWeight; up: GpuWeight; down: GpuWeight } | { moe: MoeLayerWeights };
  /** qwen2 */
  bq?: GPUBuffer;
  bk?: GPUBuffer;
  bv?: GPUBuffer;
  /** qwen3 */
  qNorm?: GPUBuffer;
  kNorm?: GPUBuffer;
  kCache: GPUBuffer;
  vCache: GPUBuffer;
}

/** Activations of one batch, f32, [token][...]; sized for maxBatch tokens. */
interface Activations {
  x: GPUBuffer; // residual stream
  xb: GPUBuffer; // normed input of a block
  q: GPUBuffer;
  k: GPUBuffer;
  v: GPUBuffer;
  att: GPUBuffer;
  gate: GPUBuffer;
  up: GPUBuffer;
  xLast: GPUBuffer; // the last token, normed, for the output head
  logits: GPUBuffer;
  moe?: MoeScratch;
}

function vectorBytes(vectors: Map<string, GPUBuffer>): number {
  let sum = 0;
  for (const b of vectors.values()) sum += b.size;
  return sum;
}

const STORAGE = () => GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST;

/** The tensors the forward pass reads, by role: matrices go through the weight kernels, vectors are f32. */
export function modelTensorNames(hp: HParams): { matrices: string[]; vectors: string[] } {
  const matrices = ['token_embd.weight'];
  if (!hp.tiedEmbeddings) matrices.push('output.weight');
  const vectors = ['output_norm.weight'];
  if (hp.ropeFreqs) vectors.push('rope_freqs.weight');
  for (let l = 0; l < hp.nLayer; l++) {
    const blk = (name: string) => `blk.${l}.${name}`;
    for (const m of ['attn_q', 'attn_k', 'attn_v', 'attn_output']) matrices.push(blk(`${m}.weight`));
    if (hp.moe) matrices.push(...moeTensorNames(hp.moe, l));
    else for (const m of ['ffn_gate', 'ffn_up', 'ffn_down']) matrices.push(blk(`${m}.weight`));
    vectors.push(blk('attn_norm.weight'), blk('ffn_norm.weight'));
    if (hp.qkvBias) vectors.push(blk('attn_q.bias'), blk('attn_k.bias'), blk('attn_v.bias'));
    if (hp.qkNorm) vectors.push(blk('attn_q_norm.weight'), blk('attn_k_norm.weight'));
  }
  return { matrices, vectors };
}

export interface ModelMemory {
  /** Bytes of the file's tensors the model uses. */
  fileTensorBytes: number;
  /** Bytes of those tensors on the GPU (quantized blocks, repacked; f32 vectors). */
  residentWeightBytes: number;
  kvBytes: number;
  /** Activations, RoPE table, ids. */
  scratchBytes: number;
}

export class LlamaModel {
  readonly step: Step;
  readonly ops: OpKernels;
  readonly matmul: MatmulKernels;
  readonly act: Activations;
  /** Token ids of a prefill submission (u32). */
  readonly ids: GPUBuffer;
  readonly memory: ModelMemory;
  /**
   * Weight bytes one decoded token reads: every matrix but the embedding table (one row of it) and
   * the unchosen experts (used / experts of each stacked tensor), and the vectors.
   */
  readonly weightBytesPerToken: number;
  /** KV cache bytes per position, over all layers, K and V. */
  readonly kvBytesPerPosition: number;
  private readonly layers: Layer[] = [];
  private readonly owned: GPUBuffer[] = [];
  private readonly weights: Map<string, GpuWeight>;
  private readonly vectors = new Map<string, GPUBuffer>();
  private readonly ropeTable: GPUBuffer;
  /** Every matmul/embedding whose token count follows the batch. */
  private readonly batched: TokenDispatch[] = [];
  private batchTokens = 0;
  private body: Dispatch[] = [];
  private embedIds!: Dispatch;
  private embedSampled!: Dispatch;
  private headDispatches: Dispatch[] = [];
  private allLogitsHead?: { dispatches: Dispatch[]; logits: GPUBuffer };

  private constructor(
    readonly ctx: GpuContext,
    readonly hp: HParams,
    readonly options: ModelOptions,
    weights: Map<string, GpuWeight>,
    vectorData: Map<string, Float32Array>,
    vectorFileBytes: number,
    /** Where the next-token id is read from in 'sampled' submissions (the sampler's output). */
    readonly sampledIds: GPUBuffer,
  ) {
    const { device } = ctx;
    this.weights = weights;
    this.step = new Step(device);
    this.ops = new OpKernels(device, options.kvF16);
    this.matmul = new MatmulKernels(ctx);
    for (const [name, data] of vectorData) this.vectors.set(name, this.upload(name, data));
    const table = ropeTable(hp.rope, options.ctx, vectorData.get('rope_freqs.weight'));
    this.ropeTable = this.upload('rope table', table);
    this.ids = this.buffer('ids', options.maxBatch * 4);
    this.act = this.activations();
    const kvRowBytes = hp.nHeadKv * hp.headDim * this.ops.kvElementBytes;
    for (let l = 0; l < hp.nLayer; l++) this.layers.push(this.layer(l, options.ctx * kvRowBytes));

    let residentWeightBytes = 0;
    let fileTensorBytes = vectorFileBytes;
    for (const w of weights.values()) {
      residentWeightBytes += w.residentBytes;
      fileTensorBytes += w.fileBytes;
    }
    for (const data of vectorData.values()) residentWeightBytes += data.byteLength;
    const kvBytes = 2 * hp.nLayer * options.ctx * kvRowBytes;
    const ownedBytes = this.owned.reduce((sum, b) => sum + b.size, 0);
    const embd = weights.get('token_embd.weight')!;
    let unchosen = 0;
    for (const w of weights.values()) {
      if (w.experts > 1) unchosen += w.residentBytes * (1 - Math.min(hp.moe?.nExpertUsed ?? 1, w.experts) / w.experts);
    }
    this.weightBytesPerToken =
      residentWeightBytes - unchosen - (hp.tiedEmbeddings ? 0 : embd.residentBytes - Math.ceil(embd.residentBytes / embd.rows));
    this.kvBytesPerPosition = 2 * hp.nLayer * kvRowBytes;
    this.memory = { fileTensorBytes, residentWeightBytes, kvBytes, scratchBytes: ownedBytes - kvBytes - vectorBytes(this.vectors) };
    this.build();
  }

  /** Uploads the model's tensors and builds its forward pass. */
  static async load(ctx: GpuContext, gguf: GgufFile, hp: HParams, sampledIds: GPUBuffer, options: ModelOptions): Promise<LlamaModel> {
    if (hp.moe) checkMoeShapes(gguf, hp, hp.moe);
    const { matrices, vectors } = modelTensorNames(hp);
    for (const name of vectors) {
      if (!gguf.tensor(name)) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
    }
    const vectorData = new Map(vectors.map((name) => [name, dequantizeTensor(gguf, gguf.tensor(name)!)]));
    const weights = await uploadWeights(ctx, gguf, matrices, { onProgress: options.onProgress });
    const vectorFileBytes = vectors.reduce((sum, name) => sum + gguf.tensor(name)!.bytes, 0);
    try {
      return new LlamaModel(ctx, hp, options, weights, vectorData, vectorFileBytes, sampledIds);
    } catch (err) {
      for (const w of weights.values()) w.destroy();
      throw err;
    }
  }

  /**
   * Prepares the next submission: tokens [pos0, pos0 + tokens) of the sequence. For 'ids', write
   * the ids into `ids` first (queue.writeBuffer).
   */
  setBatch(pos0: number, tokens: number): void {
    if (tokens < 1 || tokens > this.options.maxBatch) throw new Error(`batch of ${tokens} tokens (1..${this.options.maxBatch})`);
    if (pos0 + tokens > this.options.ctx) throw new Error(`context full: ${pos0 + tokens} tokens do not fit in ${this.options.ctx}`);
    this.step.set(pos0, tokens);
    if (tokens !== this.batchTokens) {
      for (const d of this.batched) d.setTokens(tokens);
      this.batchTokens = tokens;
    }
  }

  /** The layers: embedding of the batch's tokens through the last block (KV cache updated). */
  encodeBody(pass: GPUComputePassEncoder, source: TokenSource): void {
    (source === 'ids' ? this.embedIds : this.embedSampled).encode(pass);
    for (const d of this.body) d.encode(pass);
  }

  /** Final norm and output projection of the batch's last token into act.logits. */
  encodeHead(pass: GPUComputePassEncoder): void {
    for (const d of this.headDispatches) d.encode(pass);
  }

  /**
   * Evaluation (teacher forcing): final norm and output projection of every token of the batch,
   * into a [maxBatch × vocab] buffer made on first use. Not part of the decode loop.
   */
  encodeAllLogits(pass: GPUComputePassEncoder): GPUBuffer {
    if (!this.allLogitsHead) {
      const { hp, act } = this;
      const logits = this.buffer('all logits', this.options.maxBatch * hp.nVocab * 4);
      const wOut = this.weights.get(hp.tiedEmbeddings ? 'token_embd.weight' : 'output.weight')!;
      const dispatches = [this.rmsnorm(act.x, this.vector('output_norm.weight'), act.xb), this.linear(wOut, act.xb, logits)];
      (dispatches[1] as TokenDispatch).setTokens(this.batchTokens || 1);
      this.allLogitsHead = { dispatches, logits };
    }
    for (const d of this.allLogitsHead.dispatches) d.encode(pass);
    return this.allLogitsHead.logits;
  }

  destroy(): void {
    for (const w of this.weights.values()) w.destroy();
    for (const b of this.owned) b.destroy();
    this.ops.destroy();
    this.step.destroy();
  }

  // ---- the architecture, step by step ----

  private build(): void {
    const embd = this.weights.get('token_embd.weight')!;
    this.embedIds = this.track(this.matmul.embedding(embd, this.ids, this.act.x, 1));
    this.embedSampled = this.matmul.embedding(embd, this.sampledIds, this.act.x, 1);
    this.body = this.layers.flatMap((layer) => [...this.attention(layer), ...this.ffn(layer)]);
    this.headDispatches = this.output();
  }

  private rmsnorm(x: GPUBuffer, w: GPUBuffer, y: GPUBuffer): Dispatch {
    return this.ops.rmsNorm({ x, w, y, n: this.hp.nEmbd, eps: this.hp.eps, step: this.step });
  }

  /** y = W·x for every token of the batch. */
  private linear(w: GpuWeight, x: GPUBuffer, y: GPUBuffer): Dispatch {
    return this.track(this.matmul.matmul(w, x, y, 1));
  }

  /** x += W·input: a block's output projection with the residual add folded in. */
  private residual(w: GpuWeight, input: GPUBuffer): Dispatch {
    return this.track(this.matmul.matmul(w, input, this.act.x, 1, { accumulate: true }));
  }

  private attention(l: Layer): Dispatch[] {
    const { hp, act, ops, step } = this;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    const out: Dispatch[] = [
      this.rmsnorm(act.x, l.attnNorm, act.xb),
      this.linear(l.wq, act.xb, act.q),
      this.linear(l.wk, act.xb, act.k),
      this.linear(l.wv, act.xb, act.v),
    ];
    if (l.bq && l.bk && l.bv) {
      out.push(ops.addBias(act.q, l.bq, qDim, step), ops.addBias(act.k, l.bk, kvDim, step), ops.addBias(act.v, l.bv, kvDim, step));
    }
    if (l.qNorm && l.kNorm) {
      const norm = (x: GPUBuffer, w: GPUBuffer, heads: number) =>
        ops.rmsNorm({ x, w, n: hp.headDim, rowsPerToken: heads, eps: hp.eps, step });
      out.push(norm(act.q, l.qNorm, hp.nHead), norm(act.k, l.kNorm, hp.nHeadKv));
    }
    // RoPE happens inside: K on its way into the cache, Q as attention loads it.
    const rope = { table: this.ropeTable, nRot: hp.rope.nRot, neox: hp.rope.neox };
    out.push(
      ops.storeKv({ k: act.k, v: act.v, kCache: l.kCache, vCache: l.vCache, step, kvStride: kvDim, headDim: hp.headDim, rope }),
      ops.attention({
        q: act.q,
        kCache: l.kCache,
        vCache: l.vCache,
        out: act.att,
        step,
        nHead: hp.nHead,
        nKvHead: hp.nHeadKv,
        headDim: hp.headDim,
        scale: hp.attnScale,
        rope,
      }),
      this.residual(l.wo, act.att),
    );
    return out;
  }

  private ffn(l: Layer): Dispatch[] {
    const { hp, act, ops, step } = this;
    const norm = this.rmsnorm(act.x, l.ffnNorm, act.xb);
    if ('moe' in l.ffn) {
      const build = {
        hp, moe: hp.moe!, ops, matmul: this.matmul, step, maxBatch: this.options.maxBatch, track: (d: TokenDispatch) => this.track(d),
        x: act.x, xb: act.xb, denseGate: act.gate, denseUp: act.up, scratch: act.moe!,
      };
      return [norm, ...moeFfn(build, l.ffn.moe)];
    }
    return [
      norm,
      this.linear(l.ffn.gate, act.xb, act.gate),
      this.linear(l.ffn.up, act.xb, act.up),
      ops.swiglu(act.gate, act.up, hp.nFf, step),
      this.residual(l.ffn.down, act.gate),
    ];
  }

  private output(): Dispatch[] {
    const { hp, act } = this;
    const wOut = this.weights.get(hp.tiedEmbeddings ? 'token_embd.weight' : 'output.weight')!;
    return [
      this.ops.rmsNorm({ x: act.x, w: this.vector('output_norm.weight'), y: act.xLast, n: hp.nEmbd, eps: hp.eps, step: this.step, lastOnly: true }),
      this.matmul.matmul(wOut, act.xLast, act.logits, 1),
    ];
  }

  // ---- buffers ----

  private layer(l: number, kvBytes: number): Layer {
    const blk = (name: string) => `blk.${l}.${name}`;
    const w = (name: string) => this.weights.get(blk(name))!;
    const optional = (name: string) => (this.vectors.has(blk(name)) ? this.vector(blk(name)) : undefined);
    return {
      attnNorm: this.vector(blk('attn_norm.weight')),
      ffnNorm: this.vector(blk('ffn_norm.weight')),
      wq: w('attn_q.weight'),
      wk: w('attn_k.weight'),
      wv: w('attn_v.weight'),
      wo: w('attn_output.weight'),
      ffn: this.hp.moe
        ? { moe: moeLayerWeights(this.hp.moe, l, (name) => this.weights.get(name)!) }
        : { gate: w('ffn_gate.weight'), up: w('ffn_up.weight'), down: w('ffn_down.weight') },
      bq: optional('attn_q.bias'),
      bk: optional('attn_k.bias'),
      bv: optional('attn_v.bias'),
      qNorm: optional('attn_q_norm.weight'),
      kNorm: optional('attn_k_norm.weight'),
      kCache: this.buffer(`${blk('k_cache')}`, kvBytes),
      vCache: this.buffer(`${blk('v_cache')}`, kvBytes),
    };
  }

  private activations(): Activations {
    const { hp } = this;
    const b = this.options.maxBatch * 4;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    // An MoE model's dense FFN is its shared expert, if any.
    const ffWidth = hp.moe ? hp.moe.nFfShexp : hp.nFf;
    return {
      x: this.buffer('x', b * hp.nEmbd),
      xb: this.buffer('xb', b * hp.nEmbd),
      q: this.buffer('q', b * qDim),
      k: this.buffer('k', b * kvDim),
      v: this.buffer('v', b * kvDim),
      att: this.buffer('att', b * qDim),
      gate: this.buffer('gate', b * ffWidth),
      up: this.buffer('up', b * ffWidth),
      xLast: this.buffer('x_last', hp.nEmbd * 4),
      logits: this.buffer('logits', hp.nVocab * 4),
      moe: hp.moe ? moeScratch(hp, hp.moe, this.options.maxBatch, (label, bytes) => this.buffer(label, bytes)) : undefined,
    };
  }

  private vector(name: string): GPUBuffer {
    const b = this.vectors.get(name);
    if (!b) throw new Error(`tensor ${name} was not loaded`);
    return b;
  }

  private buffer(label: string, bytes: number): GPUBuffer {
    const b = this.ctx.device.createBuffer({ label, size: Math.max(16, Math.ceil(bytes / 4) * 4), usage: STORAGE() });
    this.owned.push(b);
    return b;
  }

  private upload(label: string, data: Float32Array): GPUBuffer {
    const b = this.buffer(label, data.byteLength);
    this.ctx.device.queue.writeBuffer(b, 0, data as Float32Array<ArrayBuffer>);
    return b;
  }

  private track(d: TokenDispatch): TokenDispatch {
    this.batched.push(d);
    return d;
  }
}
