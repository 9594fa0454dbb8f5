/**
 * The forward pass of an encoder (bert: all-MiniLM, bge, e5), as llama.cpp's build_bert: it only
 * embeds. The whole input is one batch from position 0 (every token attends to every other, so
 * nothing is cached between inputs), and the result is the last block's output, which
 * core/embedding-pooling.ts pools.
 *
 *   x = token_embd[id] + token_types[0] + position_embd[pos]; x = layernorm(x)
 *   for each layer:  x = layernorm(x + attn_output(attention(q, k, v)))   (biases everywhere,
 *                                                                          no causal mask, no RoPE)
 *                    x = layernorm(x + ffn_down(gelu(ffn_up(x))))
 *
 * LayerNorms carry a weight and a bias. The residual adds ride on the output projections (matmul
 * with accumulate), their biases added after. K and V pass through the attention kernel's cache in
 * f32, as llama.cpp keeps them unrounded (no KV cache for an encoder).
 */
import { dequantizeTensor } from '../../core/dequantize';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { tensorName, type BlockRole, type GlobalRole, type TensorKind } from '../../core/tensor-names';
import type { GpuContext } from '../gpu/device';
import { MatmulKernels, type TokenDispatch } from '../gpu/matmul';
import { OpKernels, Step, type Dispatch, type RopeSpec } from '../gpu/ops';
import { uploadWeights, type GpuWeight } from '../gpu/weights';
import type { ModelMemory } from '../protocol';
import { OwnedBuffers } from './owned-buffers';
import { UnsupportedModelError, type HParams } from './hparams';

export interface BertOptions {
  /** Most tokens of one input: the batch, the attention's span and the positions used. */
  ctx: number;
  onProgress?(done: number, total: number): void;
}

/** A LayerNorm's weight and bias. */
interface Norm {
  w: GPUBuffer;
  b: GPUBuffer;
}

/** A projection and its bias. */
interface Linear {
  w: GpuWeight;
  b: GPUBuffer;
}

interface Layer {
  q: Linear;
  k: Linear;
  v: Linear;
  out: Linear;
  attnNorm: Norm;
  up: Linear;
  down: Linear;
  outNorm: Norm;
  kCache: GPUBuffer;
  vCache: GPUBuffer;
}

const MATRIX_ROLES = ['attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_up', 'ffn_down'] as const;
const NORM_ROLES = ['attn_output_norm', 'layer_output_norm'] as const;

/** The tensors the encoder reads: matrices go through the weight kernels, vectors (and the small tables) are f32. */
function bertTensorNames(hp: HParams): { matrices: string[]; vectors: string[] } {
  const matrices = [tensorName('token_embd')];
  const vectors = [tensorName('token_embd_norm'), tensorName('token_embd_norm', undefined, 'bias'), tensorName('token_types')];
  if (hp.encoder?.positionEmbeddings) vectors.push(tensorName('position_embd'));
  for (let l = 0; l < hp.nLayer; l++) {
    for (const role of MATRIX_ROLES) matrices.push(tensorName(role, l)), vectors.push(tensorName(role, l, 'bias'));
    for (const role of NORM_ROLES) vectors.push(tensorName(role, l), tensorName(role, l, 'bias'));
  }
  return { matrices, vectors };
}

/** Checks the shapes the forward pass relies on before anything is uploaded. */
function checkShapes(gguf: GgufFile, hp: HParams, ctx: number): void {
  const { nEmbd, nFf } = hp;
  const kvDim = hp.nHeadKv * hp.headDim;
  const expected = (name: string, ne: number[]) => {
    const tensor = gguf.tensor(name);
    if (!tensor) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
    if (ne.some((n, i) => tensor.ne[i] !== n)) {
      throw new UnsupportedModelError(`${gguf.file}: tensor ${name} has shape [${tensor.ne.join(', ')}], expected [${ne.join(', ')}, ...]`);
    }
  };
  for (let l = 0; l < hp.nLayer; l++) {
    expected(tensorName('attn_q', l), [nEmbd, hp.nHead * hp.headDim]);
    expected(tensorName('attn_k', l), [nEmbd, kvDim]);
    expected(tensorName('attn_v', l), [nEmbd, kvDim]);
    expected(tensorName('attn_output', l), [hp.nHead * hp.headDim, nEmbd]);
    expected(tensorName('ffn_up', l), [nEmbd, nFf]);
    expected(tensorName('ffn_down', l), [nFf, nEmbd]);
  }
  expected(tensorName('token_types'), [nEmbd]);
  if (hp.encoder?.positionEmbeddings) {
    const positions = gguf.tensor(tensorName('position_embd'));
    expected(tensorName('position_embd'), [nEmbd]);
    if ((positions?.ne[1] ?? 0) < ctx) throw new UnsupportedModelError(`${gguf.file}: ${tensorName('position_embd')} has ${positions?.ne[1]} positions, fewer than the context of ${ctx}`);
  }
}

export class BertModel {
  readonly step: Step;
  readonly ops: OpKernels;
  readonly matmul: MatmulKernels;
  /** Token ids of the input (u32). */
  readonly ids: GPUBuffer;
  readonly memory: ModelMemory;
  /** The residual stream, [token][nEmbd]: the hidden states after the last block. */
  readonly x: GPUBuffer;
  private readonly q: GPUBuffer;
  private readonly k: GPUBuffer;
  private readonly v: GPUBuffer;
  private readonly att: GPUBuffer;
  private readonly ffn: GPUBuffer;
  /** The attention kernels' RoPE table: bert rotates nothing (nRot 0), but the binding must exist. */
  private readonly noRope: RopeSpec;
  private readonly owned: OwnedBuffers;
  private readonly vectors = new Map<string, GPUBuffer>();
  private readonly batched: TokenDispatch[] = [];
  private readonly body: Dispatch[];

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
    // f32 K and V: llama.cpp attends over the unrounded rows.
    this.ops = new OpKernels(ctx.device, false);
    this.matmul = new MatmulKernels(ctx);
    for (const [name, data] of vectorData) this.vectors.set(name, this.owned.upload(name, data));
    const n = options.ctx * 4;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    this.ids = this.owned.create('ids', n);
    this.x = this.owned.create('x', n * hp.nEmbd);
    this.q = this.owned.create('q', n * qDim);
    this.k = this.owned.create('k', n * kvDim);
    this.v = this.owned.create('v', n * kvDim);
    this.att = this.owned.create('att', n * qDim);
    this.ffn = this.owned.create('ffn', n * hp.nFf);
    this.noRope = { table: this.owned.create('rope table (none)', 16), nRot: 0, neox: false };
    const layers = Array.from({ length: hp.nLayer }, (_, l) => this.layer(l, n * kvDim));
    this.body = [...this.embeddings(), ...layers.flatMap((layer) => [...this.attention(layer), ...this.feedForward(layer)])];

    let residentWeightBytes = 0;
    for (const w of weights.values()) residentWeightBytes += w.residentBytes;
    let vectorBytes = 0;
    for (const data of vectorData.values()) vectorBytes += data.byteLength;
    const kvBytes = 2 * hp.nLayer * n * kvDim;
    const ownedBytes = this.owned.bytes();
    this.memory = { fileTensorBytes, residentWeightBytes: residentWeightBytes + vectorBytes, kvBytes, scratchBytes: ownedBytes - kvBytes - vectorBytes };
  }

  /** Uploads the encoder's tensors and builds its forward pass. */
  static async load(ctx: GpuContext, gguf: GgufFile, hp: HParams, options: BertOptions): Promise<BertModel> {
    checkShapes(gguf, hp, options.ctx);
    const { matrices, vectors } = bertTensorNames(hp);
    for (const name of vectors) {
      if (!gguf.tensor(name)) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
    }
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

  /** The last block's output for `ids` (tokens × nEmbd), evaluated as one batch from position 0. */
  async hiddenStates(ids: readonly number[]): Promise<Float32Array> {
    const tokens = ids.length;
    if (tokens < 1 || tokens > this.options.ctx) throw new Error(`an input of ${tokens} tokens (1..${this.options.ctx})`);
    const { device } = this.ctx;
    device.queue.writeBuffer(this.ids, 0, Uint32Array.from(ids));
    this.step.set(0, tokens);
    for (const d of this.batched) d.setTokens(tokens);
    const bytes = tokens * this.hp.nEmbd * 4;
    const staging = device.createBuffer({ size: bytes, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
    try {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass();
      for (const d of this.body) d.encode(pass);
      pass.end();
      encoder.copyBufferToBuffer(this.x, 0, staging, 0, bytes);
      device.queue.submit([encoder.finish()]);
      await staging.mapAsync(GPUMapMode.READ);
      return new Float32Array(staging.getMappedRange().slice(0));
    } finally {
      staging.destroy();
    }
  }

  destroy(): void {
    for (const w of this.weights.values()) w.destroy();
    this.owned.destroy();
    this.ops.destroy();
    this.step.destroy();
  }

  // ---- the architecture, step by step ----

  /** x = LayerNorm(token + token type 0 + position embeddings). */
  private embeddings(): Dispatch[] {
    const { hp, ops, step, x } = this;
    const out = [
      this.track(this.matmul.embedding(this.weights.get(tensorName('token_embd'))!, this.ids, x, 1)),
      // Row 0 of token_types: every token is "sentence A", as llama.cpp.
      ops.addBias(x, this.vector('token_types'), hp.nEmbd, step),
    ];
    // Positions run from 0 with the batch: the table's first rows, added row by row.
    if (hp.encoder?.positionEmbeddings) out.push(ops.add(x, this.vector('position_embd'), hp.nEmbd, step));
    out.push(this.layerNorm({ w: this.vector('token_embd_norm'), b: this.vector('token_embd_norm', 'bias') }));
    return out;
  }

  /** x = LayerNorm(x + attn_output(attention over every token)). */
  private attention(l: Layer): Dispatch[] {
    const { hp, ops, step } = this;
    const kvDim = hp.nHeadKv * hp.headDim;
    return [
      ...this.linear(l.q, this.x, this.q),
      ...this.linear(l.k, this.x, this.k),
      ...this.linear(l.v, this.x, this.v),
      ops.storeKvAndAttend(
        { k: this.k, v: this.v, kCache: l.kCache, vCache: l.vCache, step, kvStride: kvDim, headDim: hp.headDim, rope: this.noRope },
        {
          q: this.q,
          kCache: l.kCache,
          vCache: l.vCache,
          out: this.att,
          step,
          nHead: hp.nHead,
          nKvHead: hp.nHeadKv,
          headDim: hp.headDim,
          scale: hp.attnScale,
          rope: this.noRope,
          causal: false,
        },
      ),
      ...this.residual(l.out, this.att),
      this.layerNorm(l.attnNorm),
    ];
  }

  /** x = LayerNorm(x + ffn_down(gelu(ffn_up(x)))). */
  private feedForward(l: Layer): Dispatch[] {
    return [...this.linear(l.up, this.x, this.ffn), this.ops.gelu(this.ffn, this.hp.nFf, this.step), ...this.residual(l.down, this.ffn), this.layerNorm(l.outNorm)];
  }

  /** y = W·x + b for every token. */
  private linear(p: Linear, x: GPUBuffer, y: GPUBuffer): Dispatch[] {
    return [this.track(this.matmul.matmul(p.w, x, y, 1)), this.ops.addBias(y, p.b, p.w.rows, this.step)];
  }

  /** x += W·input + b: the block's output joins the residual stream. */
  private residual(p: Linear, input: GPUBuffer): Dispatch[] {
    return [this.track(this.matmul.matmul(p.w, input, this.x, 1, { accumulate: true })), this.ops.addBias(this.x, p.b, this.hp.nEmbd, this.step)];
  }

  private layerNorm(norm: Norm): Dispatch {
    return this.ops.layerNorm({ x: this.x, ...norm, n: this.hp.nEmbd, eps: this.hp.eps, step: this.step });
  }

  // ---- buffers ----

  private layer(l: number, kvBytes: number): Layer {
    const blk = (role: BlockRole, kind?: TensorKind) => tensorName(role, l, kind);
    const linear = (role: (typeof MATRIX_ROLES)[number]): Linear => ({ w: this.weights.get(blk(role))!, b: this.vectors.get(blk(role, 'bias'))! });
    const norm = (role: (typeof NORM_ROLES)[number]): Norm => ({ w: this.vectors.get(blk(role))!, b: this.vectors.get(blk(role, 'bias'))! });
    return {
      q: linear('attn_q'),
      k: linear('attn_k'),
      v: linear('attn_v'),
      out: linear('attn_output'),
      attnNorm: norm('attn_output_norm'),
      up: linear('ffn_up'),
      down: linear('ffn_down'),
      outNorm: norm('layer_output_norm'),
      kCache: this.owned.create(`k_l${l}`, kvBytes),
      vCache: this.owned.create(`v_l${l}`, kvBytes),
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
