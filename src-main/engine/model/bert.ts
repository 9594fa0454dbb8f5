/**
 * The forward pass of an encoder (bert: all-MiniLM, bge, e5; nomic-bert: nomic-embed-text), as
 * llama.cpp's build_bert: it only embeds. Each input is a sequence from position 0 whose tokens
 * attend to every other token of it (nothing is cached between inputs); several inputs share one
 * pass, laid end to end: every step but the attention runs over all their tokens at once, and the
 * attention runs per input, on copies of its rows. The result is the last block's output, which
 * core/embedding-pooling.ts pools.
 *
 *   x = token_embd[id] + token_types[0] (+ position_embd[pos]: bert); x = layernorm(x)
 *   for each layer:  x = layernorm(x + attn_output(attention(q, k, v)))   (no causal mask; nomic-bert
 *                                                                          rotates q and k, RoPE)
 *                    x = layernorm(x + ffn_down(gelu(ffn_up(x))))         (bert)
 *                    x = layernorm(x + ffn_down(silu(ffn_gate(x))·ffn_up(x)))   (nomic-bert)
 *
 * LayerNorms carry a weight and a bias; projections carry a bias where the file has one (llama.cpp
 * reads none for nomic-bert's FFN). Q, K and V come from three projections or one fused attn_qkv.
 * The residual adds ride on the output projections (matmul with accumulate), their biases added
 * after. K and V pass through the attention kernel's cache in f32, as llama.cpp keeps them
 * unrounded (no KV cache for an encoder).
 */
import { dequantizeTensor } from '../../core/dequantize';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { tensorName, type BlockRole, type GlobalRole, type TensorKind } from '../../core/tensor-names';
import type { GpuContext } from '../gpu/device';
import { MatmulKernels, type TokenDispatch } from '../gpu/matmul';
import { StepUniform } from '../gpu/kernel-uniforms';
import { OpKernels, Step, type Dispatch, type RopeSpec } from '../gpu/ops';
import { uploadWeights, type GpuWeight } from '../gpu/weights';
import type { ModelMemory } from '../../engine-wire/protocol';
import { OwnedBuffers } from './owned-buffers';
import { UnsupportedModelError, type HParams } from './hparams';
import { ropeTable } from './rope-table';

export interface BertOptions {
  /** Most tokens of one pass (all its inputs together): the batch, the attention's span and the positions used. */
  ctx: number;
  onProgress?: (done: number, total: number) => void;
}

/** A LayerNorm's weight and bias. */
interface Norm {
  w: GPUBuffer;
  b: GPUBuffer;
}

/** A projection and its bias, if the file has one. */
interface Linear {
  w: GpuWeight;
  b?: GPUBuffer;
}

interface Layer {
  /** Separate Q, K, V projections, or one fused attn_qkv whose rows are Q, then K, then V. */
  qkv: { q: Linear; k: Linear; v: Linear } | { fused: Linear };
  out: Linear;
  attnNorm: Norm;
  /** bert: gelu(up); nomic-bert: silu(gate)·up. */
  ffn: { up: Linear; down: Linear; gate?: Linear };
  outNorm: Norm;
}

/** One layer's dispatches: up to Q, K and V of all tokens, the attention of one input, and the rest. */
interface LayerPass {
  before: Dispatch[];
  attend: Dispatch;
  after: Dispatch[];
}

/** Where an input's tokens lie in the batch. */
interface Segment {
  start: number;
  tokens: number;
}

const QKV_ROLES = ['attn_q', 'attn_k', 'attn_v'] as const;
const NORM_ROLES = ['attn_output_norm', 'layer_output_norm'] as const;

/** Layer l's projections: their roles, and whether their biases are read. */
function projectionRoles(hp: HParams): { role: BlockRole; biased: boolean }[] {
  const swiglu = hp.encoder?.ffn === 'swiglu';
  const qkv: BlockRole[] = hp.qkvFused ? ['attn_qkv'] : [...QKV_ROLES];
  return [
    ...[...qkv, 'attn_output' as const].map((role) => ({ role, biased: true })),
    ...(swiglu ? (['ffn_gate', 'ffn_up', 'ffn_down'] as const) : (['ffn_up', 'ffn_down'] as const)).map((role) => ({
      role,
      biased: !swiglu,
    })),
  ];
}

/**
 * The tensors the encoder reads: matrices go through the weight kernels, vectors (and the small
 * tables) are f32; the optional ones (biases, token_types) are read when present, as llama.cpp.
 */
function bertTensorNames(hp: HParams): { matrices: string[]; vectors: string[]; optional: string[] } {
  const matrices = [tensorName('token_embd')];
  const vectors = [tensorName('token_embd_norm'), tensorName('token_embd_norm', undefined, 'bias')];
  const optional = [tensorName('token_types')];
  if (hp.encoder?.positions === 'learned') vectors.push(tensorName('position_embd'));
  for (let l = 0; l < hp.nLayer; l++) {
    for (const { role, biased } of projectionRoles(hp)) {
      matrices.push(tensorName(role, l));
      if (biased) optional.push(tensorName(role, l, 'bias'));
    }
    for (const role of NORM_ROLES) vectors.push(tensorName(role, l), tensorName(role, l, 'bias'));
  }
  return { matrices, vectors, optional };
}

/** Checks the shapes the forward pass relies on before anything is uploaded. */
function checkShapes(gguf: GgufFile, hp: HParams, ctx: number): void {
  const { nEmbd, nFf } = hp;
  const qDim = hp.nHead * hp.headDim;
  const kvDim = hp.nHeadKv * hp.headDim;
  const expected = (name: string, ne: number[]) => {
    const tensor = gguf.tensor(name);
    if (!tensor) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
    if (ne.some((n, i) => tensor.ne[i] !== n)) {
      throw new UnsupportedModelError(
        `${gguf.file}: tensor ${name} has shape [${tensor.ne.join(', ')}], expected [${ne.join(', ')}, ...]`,
      );
    }
  };
  const shapes: Partial<Record<BlockRole, number[]>> = {
    attn_q: [nEmbd, qDim],
    attn_k: [nEmbd, kvDim],
    attn_v: [nEmbd, kvDim],
    attn_qkv: [nEmbd, qDim + 2 * kvDim],
    attn_output: [qDim, nEmbd],
    ffn_gate: [nEmbd, nFf],
    ffn_up: [nEmbd, nFf],
    ffn_down: [nFf, nEmbd],
  };
  for (let l = 0; l < hp.nLayer; l++) {
    for (const { role } of projectionRoles(hp)) expected(tensorName(role, l), shapes[role]!);
  }
  if (gguf.tensor(tensorName('token_types'))) expected(tensorName('token_types'), [nEmbd]);
  if (hp.encoder?.positions === 'learned') {
    const positions = gguf.tensor(tensorName('position_embd'));
    expected(tensorName('position_embd'), [nEmbd]);
    if ((positions?.ne[1] ?? 0) < ctx)
      throw new UnsupportedModelError(
        `${gguf.file}: ${tensorName('position_embd')} has ${positions?.ne[1]} positions, fewer than the context of ${ctx}`,
      );
  }
}

export class BertModel {
  /** The whole batch, from position 0. */
  readonly step: Step;
  /** One input's attention: its tokens, from position 0 (copied in from segmentSteps per input). */
  private readonly attnStep: Step;
  /** The attention step of each input of a pass, one StepUniform each. */
  private readonly segmentSteps: GPUBuffer;
  readonly ops: OpKernels;
  readonly matmul: MatmulKernels;
  /** Token ids of the pass's inputs, end to end (u32). */
  readonly ids: GPUBuffer;
  readonly memory: ModelMemory;
  /** The residual stream, [token][nEmbd]: the hidden states after the last block. */
  readonly x: GPUBuffer;
  private readonly q: GPUBuffer;
  private readonly k: GPUBuffer;
  private readonly v: GPUBuffer;
  private readonly att: GPUBuffer;
  /** One input's rows of q (k, v) and its attention output: what the attention reads and writes. */
  private readonly seg: { q: GPUBuffer; k: GPUBuffer; v: GPUBuffer; att: GPUBuffer };
  /**
   * The attention's K and V rows, one pair for every layer: each input's attention stores its rows
   * and reads them back before the next one runs.
   */
  private readonly kCache: GPUBuffer;
  private readonly vCache: GPUBuffer;
  /** Learned positions: each input's rows of position_embd, laid out as its tokens in the batch. */
  private readonly positions: GPUBuffer;
  private readonly ffn: GPUBuffer;
  /** SwiGLU's up half (the gate's goes to ffn); unused by a GELU FFN. */
  private readonly ffnUp: GPUBuffer;
  /** RoPE of Q and K (nomic-bert), or none: nRot 0, with a table only because the binding must exist. */
  private readonly rope: RopeSpec;
  private readonly owned: OwnedBuffers;
  private readonly vectors = new Map<string, GPUBuffer>();
  private readonly batched: TokenDispatch[] = [];
  private readonly head: Dispatch[];
  private readonly layerPasses: LayerPass[];

  private constructor(
    readonly ctx: GpuContext,
    readonly hp: HParams,
    readonly options: BertOptions,
    private readonly weights: Map<string, GpuWeight>,
    vectorData: Map<string, Float32Array>,
    fileTensorBytes: number,
  ) {
    this.owned = new OwnedBuffers(ctx.device);
    this.step = new Step(ctx.device);
    this.attnStep = new Step(ctx.device);
    // f32 K and V: llama.cpp attends over the unrounded rows.
    this.ops = new OpKernels(ctx.device, { k: 'f32', v: 'f32' });
    // x stays f32: a one-token text's mat-vec would otherwise round x to 8 bits, a longer text's
    // mat-mat not.
    this.matmul = new MatmulKernels(ctx, { intDot: false });
    for (const [name, data] of vectorData) this.vectors.set(name, this.owned.upload(name, data));
    const n = options.ctx * 4;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    this.ids = this.owned.create('ids', n);
    this.x = this.owned.create('x', n * hp.nEmbd);
    // Fused, q holds whole q|k|v rows and k, v are unused.
    this.q = this.owned.create('q', n * this.qStride);
    this.k = this.owned.create('k', hp.qkvFused ? 16 : n * kvDim);
    this.v = this.owned.create('v', hp.qkvFused ? 16 : n * kvDim);
    this.att = this.owned.create('att', n * qDim);
    this.seg = {
      q: this.owned.create('input q', n * this.qStride),
      k: this.owned.create('input k', hp.qkvFused ? 16 : n * kvDim),
      v: this.owned.create('input v', hp.qkvFused ? 16 : n * kvDim),
      att: this.owned.create('input att', n * qDim),
    };
    this.segmentSteps = this.owned.create('input steps', options.ctx * StepUniform.byteSize);
    this.positions = this.owned.create('positions', hp.encoder?.positions === 'learned' ? n * hp.nEmbd : 16);
    this.ffn = this.owned.create('ffn', n * hp.nFf);
    this.ffnUp = this.owned.create('ffn up', hp.encoder?.ffn === 'swiglu' ? n * hp.nFf : 16);
    this.rope =
      hp.encoder?.positions === 'rope'
        ? {
            table: this.owned.upload('rope table', ropeTable(hp.rope, options.ctx)),
            nRot: hp.rope.nRot,
            neox: hp.rope.neox,
          }
        : { table: this.owned.create('rope table (none)', 16), nRot: 0, neox: false };
    this.kCache = this.owned.create('k cache', n * kvDim);
    this.vCache = this.owned.create('v cache', n * kvDim);
    const layers = Array.from({ length: hp.nLayer }, (_, l) => this.layer(l));
    this.head = this.embeddings();
    this.layerPasses = layers.map((layer) => ({
      before: this.qkvProjection(layer),
      attend: this.attention(layer),
      after: [...this.attentionOutput(layer), ...this.feedForward(layer)],
    }));

    let residentWeightBytes = 0;
    for (const w of weights.values()) residentWeightBytes += w.residentBytes;
    let vectorBytes = 0;
    for (const data of vectorData.values()) vectorBytes += data.byteLength;
    const kvBytes = 2 * n * kvDim;
    const ownedBytes = this.owned.bytes();
    this.memory = {
      fileTensorBytes,
      residentWeightBytes: residentWeightBytes + vectorBytes,
      kvBytes,
      kvTypes: this.ops.kv,
      scratchBytes: ownedBytes - kvBytes - vectorBytes,
    };
  }

  /** Uploads the encoder's tensors and builds its forward pass. */
  static async load(ctx: GpuContext, gguf: GgufFile, hp: HParams, options: BertOptions): Promise<BertModel> {
    checkShapes(gguf, hp, options.ctx);
    const { matrices, vectors: required, optional } = bertTensorNames(hp);
    for (const name of required) {
      if (!gguf.tensor(name)) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
    }
    const vectors = [...required, ...optional.filter((name) => gguf.tensor(name))];
    const vectorData = new Map(vectors.map((name) => [name, dequantizeTensor(gguf, gguf.tensor(name)!)]));
    const weights = await uploadWeights(ctx, gguf, matrices, { onProgress: options.onProgress });
    let fileBytes = vectors.reduce((sum, name) => sum + gguf.tensor(name)!.bytes, 0);
    for (const w of weights.values()) fileBytes += w.fileBytes;
    try {
      return new BertModel(ctx, hp, options, weights, vectorData, fileBytes);
    } catch (err) {
      for (const w of weights.values()) w.destroy();
      throw err;
    }
  }

  /**
   * The last block's output for each input (tokens × nEmbd), all in one pass; each input is
   * evaluated from position 0 and attends only to itself.
   */
  async hiddenStates(inputs: readonly (readonly number[])[]): Promise<Float32Array[]> {
    const segments: Segment[] = [];
    let total = 0;
    for (const ids of inputs) {
      if (ids.length < 1) throw new Error('an input has no tokens');
      segments.push({ start: total, tokens: ids.length });
      total += ids.length;
    }
    if (total < 1 || total > this.options.ctx)
      throw new Error(`inputs of ${total} tokens in all (1..${this.options.ctx})`);
    const { device } = this.ctx;
    device.queue.writeBuffer(this.ids, 0, Uint32Array.from(inputs.flat()));
    const steps = new ArrayBuffer(segments.length * StepUniform.byteSize);
    segments.forEach((s, i) => StepUniform.pack({ pos0: 0, nTokens: s.tokens }, steps, i * StepUniform.byteSize));
    device.queue.writeBuffer(this.segmentSteps, 0, steps);
    this.step.set(0, total);
    for (const d of this.batched) d.setTokens(total);
    const width = this.hp.nEmbd;
    const staging = device.createBuffer({
      size: total * width * 4,
      usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    });
    try {
      const encoder = device.createCommandEncoder();
      this.encodePositions(encoder, segments);
      let pass = encoder.beginComputePass();
      for (const d of this.head) d.encode(pass);
      for (const layer of this.layerPasses) {
        for (const d of layer.before) d.encode(pass);
        pass.end();
        segments.forEach((s, i) => this.encodeAttention(encoder, layer.attend, s, i));
        pass = encoder.beginComputePass();
        for (const d of layer.after) d.encode(pass);
      }
      pass.end();
      encoder.copyBufferToBuffer(this.x, 0, staging, 0, total * width * 4);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      const rows = new Float32Array(staging.getMappedRange().slice(0));
      return segments.map((s) => rows.slice(s.start * width, (s.start + s.tokens) * width));
    } finally {
      staging.destroy();
    }
  }

  /** Learned positions: rows 0.. of position_embd for each input, at its place in the batch. */
  private encodePositions(encoder: GPUCommandEncoder, segments: readonly Segment[]): void {
    if (this.hp.encoder?.positions !== 'learned') return;
    const rowBytes = this.hp.nEmbd * 4;
    const table = this.vector('position_embd');
    for (const s of segments)
      encoder.copyBufferToBuffer(table, 0, this.positions, s.start * rowBytes, s.tokens * rowBytes);
  }

  /**
   * Input i's attention in its own pass: its Q (K, V) rows copied to the start of the input
   * buffers, its step (its tokens from position 0) into attnStep, and its output rows back.
   */
  private encodeAttention(encoder: GPUCommandEncoder, attend: Dispatch, s: Segment, i: number): void {
    const { hp, seg } = this;
    const kvBytes = hp.nHeadKv * hp.headDim * 4;
    const copyIn = (from: GPUBuffer, to: GPUBuffer, rowBytes: number) =>
      encoder.copyBufferToBuffer(from, s.start * rowBytes, to, 0, s.tokens * rowBytes);
    copyIn(this.q, seg.q, this.qStride * 4);
    if (!hp.qkvFused) {
      copyIn(this.k, seg.k, kvBytes);
      copyIn(this.v, seg.v, kvBytes);
    }
    encoder.copyBufferToBuffer(
      this.segmentSteps,
      i * StepUniform.byteSize,
      this.attnStep.buffer,
      0,
      StepUniform.byteSize,
    );
    // The dispatch's size is read from attnStep on the CPU as it is encoded.
    this.attnStep.set(0, s.tokens);
    const pass = encoder.beginComputePass();
    attend.encode(pass);
    pass.end();
    const attBytes = hp.nHead * hp.headDim * 4;
    encoder.copyBufferToBuffer(seg.att, 0, this.att, s.start * attBytes, s.tokens * attBytes);
  }

  destroy(): void {
    for (const w of this.weights.values()) w.destroy();
    this.owned.destroy();
    this.ops.destroy();
    this.step.destroy();
    this.attnStep.destroy();
  }

  // ---- the architecture, step by step ----

  /** x = LayerNorm(token + token type 0 (+ position) embeddings). */
  private embeddings(): Dispatch[] {
    const { hp, ops, step, x } = this;
    const out: Dispatch[] = [
      this.track(this.matmul.embedding(this.weights.get(tensorName('token_embd'))!, this.ids, x, 1)),
    ];
    // Row 0 of token_types: every token is "sentence A", as llama.cpp.
    const types = this.vectors.get(tensorName('token_types'));
    if (types) out.push(ops.addBias(x, types, hp.nEmbd, step));
    // Each input's positions run from 0: its rows of the table, laid out by encodePositions.
    if (hp.encoder?.positions === 'learned') out.push(ops.add(x, this.positions, hp.nEmbd, step));
    out.push(this.layerNorm({ w: this.vector('token_embd_norm'), b: this.vector('token_embd_norm', 'bias') }));
    return out;
  }

  /** Q, K and V of every token: three projections, or one into q|k|v rows of q. */
  private qkvProjection(l: Layer): Dispatch[] {
    if ('fused' in l.qkv) return this.linear(l.qkv.fused, this.x, this.q);
    return [
      ...this.linear(l.qkv.q, this.x, this.q),
      ...this.linear(l.qkv.k, this.x, this.k),
      ...this.linear(l.qkv.v, this.x, this.v),
    ];
  }

  /** One input's attention over all its tokens, on its rows in seg; RoPE, if any, happens inside. */
  private attention(l: Layer): Dispatch {
    const { hp, ops, attnStep: step, rope, seg, kCache, vCache } = this;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    const fused = 'fused' in l.qkv;
    const kvRows = fused ? { stride: this.qStride, kOffset: qDim, vOffset: qDim + kvDim } : undefined;
    const qRows = fused ? { stride: this.qStride, offset: 0 } : undefined;
    return ops.storeKvAndAttend(
      {
        k: fused ? seg.q : seg.k,
        v: fused ? seg.q : seg.v,
        kCache,
        vCache,
        step,
        kvStride: kvDim,
        headDim: hp.headDim,
        rope,
        rows: kvRows,
      },
      {
        q: seg.q,
        kCache,
        vCache,
        out: seg.att,
        step,
        nHead: hp.nHead,
        nKvHead: hp.nHeadKv,
        headDim: hp.headDim,
        scale: hp.attnScale,
        rope,
        qRows,
        causal: false,
      },
    );
  }

  /** x = LayerNorm(x + attn_output(attention)). */
  private attentionOutput(l: Layer): Dispatch[] {
    return [...this.residual(l.out, this.att), this.layerNorm(l.attnNorm)];
  }

  /** x = LayerNorm(x + ffn_down(act)), act = gelu(ffn_up(x)) or silu(ffn_gate(x))·ffn_up(x). */
  private feedForward(l: Layer): Dispatch[] {
    const { ffn, hp, ops, step } = this;
    const act = l.ffn.gate
      ? [
          ...this.linear(l.ffn.gate, this.x, ffn),
          ...this.linear(l.ffn.up, this.x, this.ffnUp),
          ops.swiglu(ffn, this.ffnUp, hp.nFf, step),
        ]
      : [...this.linear(l.ffn.up, this.x, ffn), ops.gelu(ffn, hp.nFf, step)];
    return [...act, ...this.residual(l.ffn.down, ffn), this.layerNorm(l.outNorm)];
  }

  /** y = W·x (+ b) for every token. */
  private linear(p: Linear, x: GPUBuffer, y: GPUBuffer): Dispatch[] {
    return [
      this.track(this.matmul.matmul(p.w, x, y, 1)),
      ...(p.b ? [this.ops.addBias(y, p.b, p.w.rows, this.step)] : []),
    ];
  }

  /** x += W·input (+ b): the block's output joins the residual stream. */
  private residual(p: Linear, input: GPUBuffer): Dispatch[] {
    return [
      this.track(this.matmul.matmul(p.w, input, this.x, 1, { accumulate: true })),
      ...(p.b ? [this.ops.addBias(this.x, p.b, this.hp.nEmbd, this.step)] : []),
    ];
  }

  private layerNorm(norm: Norm): Dispatch {
    return this.ops.layerNorm({ x: this.x, ...norm, n: this.hp.nEmbd, eps: this.hp.eps, step: this.step });
  }

  // ---- buffers ----

  /** Elements of each token's row of q: Q, or with a fused attn_qkv the whole Q|K|V row. */
  private get qStride(): number {
    const { hp } = this;
    return hp.nHead * hp.headDim + (hp.qkvFused ? 2 * hp.nHeadKv * hp.headDim : 0);
  }

  private layer(l: number): Layer {
    const blk = (role: BlockRole, kind?: TensorKind) => tensorName(role, l, kind);
    // Only the biases that were read are loaded (bertTensorNames).
    const linear = (role: BlockRole): Linear => ({
      w: this.weights.get(blk(role))!,
      b: this.vectors.get(blk(role, 'bias')),
    });
    const norm = (role: (typeof NORM_ROLES)[number]): Norm => ({
      w: this.vectors.get(blk(role))!,
      b: this.vectors.get(blk(role, 'bias'))!,
    });
    return {
      qkv: this.hp.qkvFused
        ? { fused: linear('attn_qkv') }
        : { q: linear('attn_q'), k: linear('attn_k'), v: linear('attn_v') },
      out: linear('attn_output'),
      attnNorm: norm('attn_output_norm'),
      ffn: {
        up: linear('ffn_up'),
        down: linear('ffn_down'),
        gate: this.hp.encoder?.ffn === 'swiglu' ? linear('ffn_gate') : undefined,
      },
      outNorm: norm('layer_output_norm'),
    };
  }

  private vector(role: GlobalRole, kind?: TensorKind): GPUBuffer {
    const b = this.vectors.get(tensorName(role, undefined, kind));
    if (!b) throw new Error(`tensor ${tensorName(role, undefined, kind)} was not loaded`);
    return b;
  }

  private track(d: TokenDispatch): TokenDispatch {
    this.batched.push(d);
    return d;
  }
}
