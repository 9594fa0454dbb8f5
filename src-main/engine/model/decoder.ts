/**
 * The forward pass on the GPU of every supported decoder: the llama family (Llama 2/3.x, Mistral,
 * TinyLlama, SmolLM, Mixtral's experts; qwen2 and qwen3 and their mixture-of-experts kin) plus
 * gemma2, gemma3, phi3 and gpt-oss, which differ from it only in a few steps (docs/engine.md: each
 * one's traits, the fused steps, and the dispatches per decoded token). One function per step, as
 * llama2.c names them; each returns the Dispatches of that step, built once at load (buffers,
 * uniforms, bind groups), so a decode step only writes the Step uniform and encodes.
 *
 *   x = embed(tokens)                              (gemma: · sqrt(nEmbd))
 *   for each layer:  x += attention(rmsnorm(x))    (GQA over the layer's KV cache, RoPE inside)
 *                    x += ffn(rmsnorm(x))          (SwiGLU, gemma GeGLU; MoE: moe-ffn.ts)
 *   logits = output(rmsnorm(x of the last token))  (gemma2, gemma3 if its file says: soft-capped)
 */
import { dequantizeTensor } from '../../core/dequantize';
import type { GgmlType } from '../../core/ggml-types';
import type { GgufFile } from '../../core/gguf/gguf-file';
import type { CollectedWeight } from '../../core/imatrix';
import { tensorLayer, tensorLocation, tensorName, type BlockRole, type TensorKind } from '../../core/tensor-names';
import type { GpuContext, GpuTarget } from '../gpu/device';
import { MatmulKernels, type GluAct, type MatmulOptions, type TokenDispatch, type XPrologue } from '../gpu/matmul';
import {
  kvCacheBufferBytes,
  OpKernels,
  opKernelShapes,
  Step,
  type BufferArg,
  type Dispatch,
  type KvHeads,
  type RopeSpec,
} from '../gpu/ops';
import { uploadWeights, type ConcatWeight, type GpuWeight, type WeightSource } from '../gpu/weights';
import { ropeFactorsTensor, UnsupportedModelError, type HParams } from './hparams';
import {
  checkMoeShapes,
  moeBiasNames,
  moeFfn,
  moeLayerWeights,
  moeScratch,
  moeTensorNames,
  type ExpertRoute,
  type MoeLayerWeights,
  type MoeScratch,
} from './moe-ffn';
import type { ModelMemory } from '../../engine-wire/protocol';
import type { LayerGroup, LayerWork } from '../prefill-split';
import { OwnedBuffers } from './owned-buffers';
import { ActivationCollector } from './activation-collector';
import { ropeTable } from './rope-table';
import { kvCacheBytes, kvCacheTypeProblem } from '../../core/kv-cache-types';
import type { KvCacheTypes } from '../../../src-preload/api/kv-cache';

export interface ModelOptions {
  /** Context length: positions the KV cache holds. */
  ctx: number;
  /** Most tokens one prefill submission evaluates (activation buffers are sized for it). */
  maxBatch: number;
  /** The K and V caches' element types (llama.cpp's --cache-type-k/-v; default f16 both). */
  kvTypes: KvCacheTypes;
  /** Sequences with a KV cache of their own (default 1): generations pick one with setSlot(). */
  slots?: number;
  /** Bytes a part of a layer's K or V cache may take at most (default, and at most: the adapter's largest binding). */
  kvBindingLimit?: number;
  /**
   * A dense FFN's gate|up in row pairs, its GLU computed once by their mat-vec (UploadOptions.gluPairs;
   * default: on the GPU shapes); false keeps them in order, the GLU in each of ffn_down's workgroups.
   */
  gluPairs?: boolean;
  onProgress?: (done: number, total: number) => void;
}

/** A row of a batched decode step (setRows): one token of the sequence in `slot`, at position `pos`. */
export interface DecodeRow {
  slot: number;
  pos: number;
}

/** Where the embedding of a submission reads its token ids from. */
export type TokenSource = 'ids' | 'sampled';

/** A matmul that writes its rows at `offset` in each token's wider output row (Q|K in a q|k|v row). */
interface RowsProjection {
  weight: GpuWeight;
  offset: number;
}

interface Layer {
  /** Its block number (blk.N). */
  index: number;
  attnNorm: GPUBuffer;
  ffnNorm: GPUBuffer;
  /** gemma2/3 */
  attnPostNorm?: GPUBuffer;
  ffnPostNorm?: GPUBuffer;
  /** The matmuls writing q|k|v rows: one (attn_qkv, or Q, K and V of one type), or one per run of one type. */
  qkv: RowsProjection[];
  wo: GpuWeight;
  /** gpt-oss */
  woBias?: GPUBuffer;
  sinks?: GPUBuffer;
  /** Dense: the matmuls writing gate|up rows (as qkv), then ffn_down. */
  ffn: { gateUp: RowsProjection[]; down: GpuWeight } | { moe: MoeLayerWeights };
  /** qwen2: [q | k | v] biases, added to whole q|k|v rows. */
  qkvBias?: GPUBuffer;
  /** qwen3, gemma3: [q_norm | k_norm], one dispatch over the Q and K heads of q|k|v rows. */
  qkNorm?: GPUBuffer;
  /** Sliding window in positions, 0: none. */
  window: number;
  rope: RopeSpec;
  /** Per slot, its K and V caches: one pair, or a pair per part of its KV heads where they outgrow a binding. */
  kvCache: KvCachePart[][];
}

interface KvCachePart {
  k: GPUBuffer;
  v: GPUBuffer;
  heads: KvHeads;
}

/** Activations of one batch, f32, [token][...]; sized for maxBatch tokens (`B`: a GPUBuffer, or memory-plan.ts's size). */
interface Activations<B = GPUBuffer> {
  x: B; // residual stream
  xb: B; // normed input of a block; then its output, where a post-norm follows
  /** q|k|v rows: Q, K and V of each token, side by side. */
  qkv: B;
  att: B;
  /** A dense FFN's gate|up rows (the GLU's result replaces the gate half); an MoE's shared expert's gate. */
  gate: B;
  /** An MoE's shared expert's up (0 bytes in a dense model). */
  up: B;
  xLast: B; // the last token, normed, for the output head
  logits: B;
  moe?: MoeScratch<B>;
}

/** The activations of a batch of up to `maxBatch` tokens, each made by `buffer`. */
export function activationBuffers<B>(
  hp: HParams,
  maxBatch: number,
  buffer: (label: string, bytes: number) => B,
): Activations<B> {
  const b = maxBatch * 4;
  const qDim = hp.nHead * hp.headDim;
  const kvDim = hp.nHeadKv * hp.headDim;
  // An MoE model's dense FFN is its shared expert, if any.
  const ffWidth = hp.moe ? hp.moe.nFfShexp : hp.nFf;
  return {
    x: buffer('x', b * hp.nEmbd),
    xb: buffer('xb', b * hp.nEmbd),
    qkv: buffer('qkv', b * (qDim + 2 * kvDim)),
    att: buffer('att', b * qDim),
    gate: buffer('gate', b * (hp.moe ? 1 : 2) * ffWidth),
    up: buffer('up', hp.moe ? b * ffWidth : 0),
    xLast: buffer('x_last', hp.nEmbd * 4),
    logits: buffer('logits', hp.nVocab * 4),
    moe: hp.moe ? moeScratch(hp, hp.moe, maxBatch, buffer) : undefined,
  };
}

/** encodeAllLogits's buffer, made at its first use (evaluation, a batched decode step): every token's logits. */
export function allLogitsBytes(hp: HParams, maxBatch: number): number {
  return maxBatch * hp.nVocab * 4;
}

function vectorBytes(vectors: Map<string, GPUBuffer>): number {
  let sum = 0;
  for (const b of vectors.values()) sum += b.size;
  return sum;
}

/**
 * The tensors the forward pass reads, by role, for a context of `ctx` positions (which picks
 * phi3's RoPE factors): matrices go through the weight kernels, vectors are f32.
 */
export function modelTensorNames(hp: HParams, ctx: number): { matrices: string[]; vectors: string[] } {
  const matrices = [tensorName('token_embd')];
  if (!hp.tiedEmbeddings) matrices.push(tensorName('output'));
  const vectors = [tensorName('output_norm')];
  const ropeFactors = ropeFactorsTensor(hp, ctx);
  if (ropeFactors) vectors.push(ropeFactors);
  for (let l = 0; l < hp.nLayer; l++) {
    const blk = (role: BlockRole, kind?: TensorKind) => tensorName(role, l, kind);
    const attn: BlockRole[] = hp.qkvFused ? ['attn_qkv'] : ['attn_q', 'attn_k', 'attn_v'];
    for (const m of [...attn, 'attn_output'] as const) matrices.push(blk(m));
    if (hp.moe) {
      matrices.push(...moeTensorNames(hp.moe, l));
      vectors.push(...moeBiasNames(hp.moe, l));
    } else
      for (const m of hp.ffnGateUpFused
        ? (['ffn_up', 'ffn_down'] as const)
        : (['ffn_gate', 'ffn_up', 'ffn_down'] as const))
        matrices.push(blk(m));
    vectors.push(blk('attn_norm'), blk(hp.ffnNorm));
    if (hp.attnOutputBias) vectors.push(blk('attn_output', 'bias'));
    if (hp.attnSinks) vectors.push(blk('attn_sinks'));
    if (hp.postNorms) vectors.push(blk('post_attention_norm'), blk('post_ffw_norm'));
    if (hp.qkvBias) vectors.push(...attn.map((m) => blk(m, 'bias')));
    if (hp.qkNorm) vectors.push(blk('attn_q_norm'), blk('attn_k_norm'));
  }
  return { matrices, vectors };
}

const QKV_ROLES = ['attn_q', 'attn_k', 'attn_v'] as const;
const GATE_UP_ROLES = ['ffn_gate', 'ffn_up'] as const;

/** The name of the weight (or vector) that concatenates `tensors`. */
function concatName(tensors: readonly string[]): string {
  return tensors.join('+');
}

/**
 * The per-layer matrices one matmul can compute together, as the file stores them separately:
 * Q|K|V, and a dense FFN's gate|up. Each run of neighbours of one type is concatenated on upload
 * (Q4_K_M files often store V, or some layers' tensors, in Q6_K: then Q|K, and V alone). A dense
 * FFN's gate|up in one weight (both of one type, or a file's fused ffn_up) is marked as a GLU's, so
 * the GPU shapes upload it in row pairs (weights.ts) and a decoded token's GLU is computed once.
 */
function concatGroups(gguf: GgufFile, hp: HParams): ConcatWeight[] {
  const groups: ConcatWeight[] = [];
  for (let l = 0; l < hp.nLayer; l++) {
    const candidates: (readonly BlockRole[])[] = [];
    if (!hp.qkvFused) candidates.push(QKV_ROLES);
    if (!hp.moe && !hp.ffnGateUpFused) candidates.push(GATE_UP_ROLES);
    if (!hp.moe && hp.ffnGateUpFused) {
      const name = tensorName('ffn_up', l);
      groups.push({ name, tensors: [name], glu: true });
    }
    for (const roles of candidates) {
      const runs: string[][] = [];
      let last: GgmlType | undefined;
      for (const name of roles.map((role) => tensorName(role, l))) {
        const { type } = gguf.tensor(name)!;
        if (type === last) runs.at(-1)!.push(name);
        else runs.push([name]);
        last = type;
      }
      const glu = roles === GATE_UP_ROLES;
      for (const tensors of runs)
        if (tensors.length > 1) groups.push({ name: concatName(tensors), tensors, ...(glu && { glu }) });
    }
  }
  return groups;
}

/**
 * What the model uploads for a context of `ctx`: its matrices (runs of one type concatenated:
 * concatGroups) and its vectors, each checked to be in the file.
 */
export function weightSources(
  gguf: GgufFile,
  hp: HParams,
  ctx: number,
): { matrices: WeightSource[]; vectors: string[] } {
  const { matrices, vectors } = modelTensorNames(hp, ctx);
  for (const name of vectors) {
    if (!gguf.tensor(name)) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
  }
  const groups = concatGroups(gguf, hp);
  const grouped = new Set(groups.flatMap((g) => g.tensors));
  return { matrices: [...matrices.filter((name) => !grouped.has(name)), ...groups], vectors };
}

/** The sliding-window layers' RoPE parameters where they differ from the others' (gemma3): they get a table of their own. */
export function ownSwaRope(hp: HParams): HParams['rope'] | undefined {
  const swaRope = hp.swa?.rope;
  return swaRope && JSON.stringify(swaRope) !== JSON.stringify(hp.rope) ? swaRope : undefined;
}

/** A quantized cache's blocks lie within a head (llama.cpp refuses such a cache too). */
function checkKvTypes(hp: HParams, options: Pick<ModelOptions, 'kvTypes'>): void {
  for (const type of [options.kvTypes.k, options.kvTypes.v]) {
    const problem = kvCacheTypeProblem(type, hp.headDim);
    if (problem) throw new Error(problem);
  }
}

/**
 * How each layer's K (and V) cache splits into bindings: by whole KV heads, in as few parts as the
 * binding limit allows, the heads spread evenly over them. A context where one KV head's cache
 * outgrows a binding fails before anything is uploaded, with the largest context that fits, rather
 * than inside Dawn.
 */
export function kvCacheParts(
  ctx: GpuTarget,
  hp: Pick<HParams, 'headDim' | 'nHeadKv'>,
  options: Pick<ModelOptions, 'ctx' | 'kvTypes' | 'kvBindingLimit'>,
): KvHeads[] {
  const { maxStorageBufferBindingSize, maxBufferSize } = ctx.device.limits;
  const limit = Math.min(maxStorageBufferBindingSize, maxBufferSize, options.kvBindingLimit ?? Infinity);
  const partBytes = (heads: number) =>
    Math.max(
      kvCacheBufferBytes(options.kvTypes.k, options.ctx, heads * hp.headDim),
      kvCacheBufferBytes(options.kvTypes.v, options.ctx, heads * hp.headDim),
    );
  let perPart = Math.min(hp.nHeadKv, Math.floor(limit / partBytes(1)));
  // A quantized buffer rounds up to whole groups: the estimate above may be one head over.
  while (perPart > 0 && partBytes(perPart) > limit) perPart--;
  if (perPart === 0) {
    const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
    const headRowBytes = partBytes(1) / options.ctx;
    throw new Error(
      `a context of ${options.ctx} tokens needs ${mib(partBytes(1))} of KV cache per KV head and layer, more than the ${mib(limit)} ` +
        `${ctx.info.name} binds at once: the largest context that fits is ${Math.floor(limit / headRowBytes)} tokens`,
    );
  }
  const parts = Math.ceil(hp.nHeadKv / perPart);
  const count = Math.ceil(hp.nHeadKv / parts);
  return Array.from({ length: parts }, (_, i) => ({
    first: i * count,
    count: Math.min(count, hp.nHeadKv - i * count),
  }));
}

/** What can be checked of a model before anything is planned or uploaded: its matrices' shapes and its KV cache types. */
export function checkModel(gguf: GgufFile, hp: HParams, options: Pick<ModelOptions, 'kvTypes'>): void {
  if (hp.moe) checkMoeShapes(gguf, hp, hp.moe);
  checkShapes(gguf, hp);
  checkKvTypes(hp, options);
}

/** Checks the dense layers' matrices against the metadata before anything is uploaded. */
function checkShapes(gguf: GgufFile, hp: HParams): void {
  const qDim = hp.nHead * hp.headDim;
  const kvDim = hp.nHeadKv * hp.headDim;
  const expected: Record<string, number[]> = {
    attn_q: [hp.nEmbd, qDim],
    attn_k: [hp.nEmbd, kvDim],
    attn_v: [hp.nEmbd, kvDim],
    attn_qkv: [hp.nEmbd, qDim + 2 * kvDim],
    attn_output: [qDim, hp.nEmbd],
    ffn_gate: [hp.nEmbd, hp.nFf],
    ffn_up: [hp.nEmbd, hp.ffnGateUpFused ? 2 * hp.nFf : hp.nFf],
    ffn_down: [hp.nFf, hp.nEmbd],
  };
  // The context only picks RoPE factor vectors: any will do for the matrices.
  for (const name of modelTensorNames(hp, 0).matrices) {
    const want = expected[tensorLocation(name).role];
    if (!want) continue;
    const tensor = gguf.tensor(name);
    if (!tensor) throw new UnsupportedModelError(`${gguf.file}: tensor ${name} is missing`);
    if (tensor.ne.join() !== want.join()) {
      throw new UnsupportedModelError(
        `${gguf.file}: tensor ${name} has shape [${tensor.ne.join(', ')}], expected [${want.join(', ')}]`,
      );
    }
  }
}

export class DecoderModel {
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
  /** KV cache bytes per position of one slot, over all layers, K and V. */
  readonly kvBytesPerPosition: number;
  /** A layer's work per token, which sizes a prefill's submissions (prefill-split.ts). */
  readonly layerWork: LayerWork;
  /**
   * Rows a batched decode step (setRows) may hold: one per slot, or 1 where a row's place in the
   * activations (q|k|v, attention output, logits) is not a valid binding offset on this adapter.
   */
  readonly maxRows: number;
  private readonly layers: Layer[] = [];
  private readonly owned: OwnedBuffers;
  private readonly weights: Map<string, GpuWeight>;
  private readonly vectors = new Map<string, GPUBuffer>();
  /** RoPE angle tables: every layer's, and the sliding-window layers' where theirs differs. */
  private readonly ropeTables: { full: GPUBuffer; swa: GPUBuffer };
  /** Every matmul/embedding whose token count follows the batch. */
  private readonly batched: TokenDispatch[] = [];
  private batchTokens = 0;
  /** The slot whose KV cache the attention reads and writes. */
  private slot = 0;
  /** Set by setRows (cleared by setBatch): the batch's tokens are rows of different slots. */
  private rows: DecodeRow[] | null = null;
  /** Per row of a batched decode step, its position (its attention's and its sampler's Step). */
  private readonly rowSteps: Step[] = [];
  private body: Dispatch[] = [];
  /** Where each layer's dispatches end in body. */
  private layerEnds: number[] = [];
  /** Importance-matrix collection: the forward pass marks each matmul input with collector.point(). */
  readonly collector: ActivationCollector;
  private embedIds!: Dispatch;
  private embedSampled!: Dispatch;
  private headDispatches: Dispatch[] = [];
  private allLogitsHead?: { dispatches: Dispatch[]; logits: GPUBuffer };
  private hiddenNorm?: Dispatch;

  private constructor(
    readonly ctx: GpuContext,
    readonly hp: HParams,
    readonly options: ModelOptions,
    weights: Map<string, GpuWeight>,
    vectorData: Map<string, Float32Array>,
    vectorFileBytes: number,
    /** Where the next-token id is read from in 'sampled' submissions (the sampler's output). */
    readonly sampledIds: GPUBuffer,
    kvParts: KvHeads[],
  ) {
    const { device } = ctx;
    this.weights = weights;
    this.owned = new OwnedBuffers(device);
    this.step = new Step(device);
    this.ops = new OpKernels(device, options.kvTypes, opKernelShapes(ctx.info));
    this.collector = new ActivationCollector(device, this.ops, this.step, this.owned);
    // Several slots decode in batched steps of 2–4 rows: through a mat-vec of their own where it differs.
    this.matmul = new MatmulKernels(ctx, { batchedDecode: (options.slots ?? 1) > 1 });
    for (const [name, data] of vectorData) this.vectors.set(name, this.owned.upload(name, data));
    this.ropeTables = this.ropeTableBuffers(vectorData);
    this.ids = this.owned.create('ids', options.maxBatch * 4);
    this.act = this.activations();
    for (let l = 0; l < hp.nLayer; l++) this.layers.push(this.layer(l, kvParts));

    let residentWeightBytes = 0;
    let fileTensorBytes = vectorFileBytes;
    for (const w of weights.values()) {
      residentWeightBytes += w.residentBytes;
      fileTensorBytes += w.fileBytes;
    }
    for (const data of vectorData.values()) residentWeightBytes += data.byteLength;
    const kvBytes = this.layers.reduce(
      (sum, layer) => sum + layer.kvCache.flat().reduce((n, part) => n + part.k.size + part.v.size, 0),
      0,
    );
    const ownedBytes = this.owned.bytes();
    const embd = weights.get(tensorName('token_embd'))!;
    let unchosen = 0;
    for (const w of weights.values()) {
      if (w.experts > 1) unchosen += w.residentBytes * (1 - Math.min(hp.moe?.nExpertUsed ?? 1, w.experts) / w.experts);
    }
    this.weightBytesPerToken =
      residentWeightBytes -
      unchosen -
      (hp.tiedEmbeddings ? 0 : embd.residentBytes - Math.ceil(embd.residentBytes / embd.rows));
    const kvStride = hp.nHeadKv * hp.headDim;
    this.kvBytesPerPosition =
      hp.nLayer * (kvCacheBytes(options.kvTypes.k, kvStride) + kvCacheBytes(options.kvTypes.v, kvStride));
    let blockWeights = 0;
    for (const w of weights.values()) {
      if (tensorLayer(w.name) !== undefined)
        blockWeights += (w.rows * w.cols * Math.min(hp.moe?.nExpertUsed ?? 1, w.experts)) / w.experts;
    }
    this.layerWork = {
      nLayer: hp.nLayer,
      layerWeights: blockWeights / hp.nLayer,
      attentionWidth: hp.nHead * hp.headDim,
    };
    this.memory = {
      fileTensorBytes,
      residentWeightBytes,
      kvBytes,
      kvTypes: options.kvTypes,
      scratchBytes: ownedBytes - kvBytes - vectorBytes(this.vectors),
    };
    const align = device.limits.minStorageBufferOffsetAlignment;
    const aligned = [this.qkvWidth, hp.nHead * hp.headDim, hp.nVocab].every((n) => (n * 4) % align === 0);
    this.maxRows = aligned ? Math.min(this.slots, options.maxBatch) : 1;
    this.build();
  }

  /** Uploads the model's tensors and builds its forward pass. */
  static async load(
    ctx: GpuContext,
    gguf: GgufFile,
    hp: HParams,
    sampledIds: GPUBuffer,
    options: ModelOptions,
  ): Promise<DecoderModel> {
    checkModel(gguf, hp, options);
    const kvParts = kvCacheParts(ctx, hp, options);
    const { matrices: sources, vectors } = weightSources(gguf, hp, options.ctx);
    const vectorData = new Map(vectors.map((name) => [name, dequantizeTensor(gguf, gguf.tensor(name)!)]));
    const weights = await uploadWeights(ctx, gguf, sources, {
      onProgress: options.onProgress,
      gluPairs: options.gluPairs,
    });
    const vectorFileBytes = vectors.reduce((sum, name) => sum + gguf.tensor(name)!.bytes, 0);
    try {
      return new DecoderModel(ctx, hp, options, weights, vectorData, vectorFileBytes, sampledIds, kvParts);
    } catch (err) {
      for (const w of weights.values()) w.destroy();
      throw err;
    }
  }

  /** KV caches of their own, one per sequence. */
  get slots(): number {
    return this.layers[0]?.kvCache.length ?? 1;
  }

  /** The slot whose KV cache the next submissions use. */
  setSlot(slot: number): void {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.slots)
      throw new Error(`slot ${slot} (0..${this.slots - 1})`);
    this.slot = slot;
  }

  /**
   * Prepares the next submission: tokens [pos0, pos0 + tokens) of the sequence. For 'ids', write
   * the ids into `ids` first (queue.writeBuffer).
   */
  setBatch(pos0: number, tokens: number): void {
    if (tokens < 1 || tokens > this.options.maxBatch)
      throw new Error(`batch of ${tokens} tokens (1..${this.options.maxBatch})`);
    if (pos0 + tokens > this.options.ctx)
      throw new Error(`context full: ${pos0 + tokens} tokens do not fit in ${this.options.ctx}`);
    this.step.set(pos0, tokens);
    this.rows = null;
    if (tokens !== this.batchTokens) {
      for (const d of this.batched) d.setTokens(tokens);
      this.batchTokens = tokens;
    }
  }

  /**
   * Prepares a batched decode step: one token per row, row r of the sequence in rows[r].slot at
   * rows[r].pos, their ids written into `ids` first. The matmuls run over all rows at once, the
   * attention per row over its slot's cache (the one-token kernel, as a decode step alone); the
   * head is encodeAllLogits, row r's logits at rowLogits(r).
   */
  setRows(rows: readonly DecodeRow[]): void {
    if (rows.length < 1 || rows.length > this.maxRows)
      throw new Error(`batched step of ${rows.length} rows (1..${this.maxRows})`);
    const slots = new Set(rows.map((r) => r.slot));
    if (slots.size !== rows.length) throw new Error('batched step: two rows of one slot');
    for (const { slot, pos } of rows) {
      if (!Number.isInteger(slot) || slot < 0 || slot >= this.slots)
        throw new Error(`slot ${slot} (0..${this.slots - 1})`);
      if (pos + 1 > this.options.ctx)
        throw new Error(`context full: ${pos + 1} tokens do not fit in ${this.options.ctx}`);
    }
    this.setBatch(0, rows.length);
    rows.forEach(({ pos }, r) => this.rowStep(r).set(pos, 1));
    this.rows = rows.map((r) => ({ ...r }));
  }

  /** Row r's Step: its position, for its attention and its sampler's draw. */
  rowStep(r: number): Step {
    while (this.rowSteps.length <= r) this.rowSteps.push(new Step(this.ctx.device));
    return this.rowSteps[r]!;
  }

  /** Row r's logits in encodeAllLogits's buffer. */
  rowLogits(r: number): BufferArg {
    const bytes = this.hp.nVocab * 4;
    return { buffer: this.allLogits().logits, offset: r * bytes, size: bytes };
  }

  /**
   * The layers: embedding of the batch's tokens through the last block (KV cache updated). With
   * `layers`, blocks [from, to) only (the embedding with block 0): a prefill in several submissions.
   */
  encodeBody(
    pass: GPUComputePassEncoder,
    source: TokenSource,
    layers: LayerGroup = { from: 0, to: this.hp.nLayer },
  ): void {
    if (layers.from === 0) {
      (source === 'ids' ? this.embedIds : this.embedSampled).encode(pass);
      this.collector.countTokens(this.batchTokens);
    }
    const end = this.layerEnds[layers.to - 1]!;
    for (let i = layers.from === 0 ? 0 : this.layerEnds[layers.from - 1]!; i < end; i++) this.body[i]!.encode(pass);
  }

  /**
   * The sums collected since the last call (then zeroed), per weight matrix the layers apply; the
   * output head is left out, as llama-imatrix does by default.
   */
  takeActivations(): Promise<CollectedWeight[]> {
    return this.collector.take();
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
    const head = this.allLogits();
    for (const d of head.dispatches) d.encode(pass);
    return head.logits;
  }

  private allLogits(): { dispatches: Dispatch[]; logits: GPUBuffer } {
    if (!this.allLogitsHead) {
      const { act } = this;
      const logits = this.owned.create('all logits', allLogitsBytes(this.hp, this.options.maxBatch));
      const project = this.linear(this.outputWeight(), act.xb, logits) as TokenDispatch;
      project.setTokens(this.batchTokens || 1);
      const dispatches = [
        this.rmsnorm(act.x, this.vector(tensorName('output_norm')), act.xb),
        project,
        ...this.logitSoftcap(logits),
      ];
      this.allLogitsHead = { dispatches, logits };
    }
    return this.allLogitsHead;
  }

  /** Embeddings: the final norm of every token of the batch into act.xb (the hidden states, no head). */
  encodeHiddenStates(pass: GPUComputePassEncoder): GPUBuffer {
    this.hiddenNorm ??= this.rmsnorm(this.act.x, this.vector(tensorName('output_norm')), this.act.xb);
    this.hiddenNorm.encode(pass);
    return this.act.xb;
  }

  destroy(): void {
    for (const w of this.weights.values()) w.destroy();
    this.owned.destroy();
    this.ops.destroy();
    this.step.destroy();
    for (const s of this.rowSteps) s.destroy();
  }

  // ---- the architecture, step by step ----

  private build(): void {
    const embd = this.weights.get(tensorName('token_embd'))!;
    this.embedIds = this.track(this.matmul.embedding(embd, this.ids, this.act.x, 1));
    this.embedSampled = this.matmul.embedding(embd, this.sampledIds, this.act.x, 1);
    this.body = this.embeddingScale();
    for (const layer of this.layers) {
      this.body.push(...this.attention(layer), ...this.ffn(layer));
      this.layerEnds.push(this.body.length);
    }
    this.headDispatches = this.output();
  }

  /** gemma: x *= sqrt(nEmbd) after the lookup. */
  private embeddingScale(): Dispatch[] {
    const { hp } = this;
    return hp.embdScale === 1 ? [] : [this.ops.scale(this.act.x, hp.embdScale, hp.nEmbd, this.step)];
  }

  private rmsnorm(x: GPUBuffer, w: GPUBuffer, y: GPUBuffer): Dispatch {
    return this.ops.rmsNorm({ x, w, y, n: this.hp.nEmbd, eps: this.hp.eps, step: this.step });
  }

  /** y = W·x for every token of the batch. */
  private linear(w: GpuWeight, x: GPUBuffer, y: GPUBuffer, options?: MatmulOptions): Dispatch {
    return this.track(this.matmul.matmul(w, x, y, 1, options));
  }

  /** The projections' rows into `y`, `stride` elements per token. */
  private projectRows(projections: RowsProjection[], x: GPUBuffer, y: GPUBuffer, stride: number): Dispatch[] {
    return projections.map((p) => this.linear(p.weight, x, y, { yOffset: p.offset, yStride: stride }));
  }

  /**
   * The projections of rmsnorm(x) · `norm` into rows of `y` (`collect`: the collect point of their
   * input): the norm then the projections, or, in a one-token step where the kernels fold the norm
   * (foldsNorm), the projections alone, each normalizing x as it loads it (the norm prologue).
   * With `glu` (one projection, of gate|up row pairs; kernels that fold the norm): that mat-vec
   * writes act(gate)·up at y's start instead of the rows (matmul.ts's GLU epilogue).
   */
  private projectNormedRows(
    projections: RowsProjection[],
    norm: GPUBuffer,
    collect: Dispatch,
    y: GPUBuffer,
    stride: number,
    glu?: GluAct,
  ): Dispatch {
    const { act, hp } = this;
    const apart = [this.rmsnorm(act.x, norm, act.xb), collect, ...this.projectRows(projections, act.xb, y, stride)];
    if (!this.matmul.foldsNorm) return this.oneTokenOr(apart, apart);
    const prologue: XPrologue = { norm, eps: hp.eps };
    const fused = projections.map((p) =>
      this.matmul.matmul(p.weight, act.x, y, 1, { yOffset: p.offset, yStride: stride, prologue, glu }),
    );
    return this.oneTokenOr(fused, apart);
  }

  /**
   * `fused` in a one-token step (decode), `rows` (if given) in a batched decode step's, else
   * `apart`. Collection keeps `apart`: its collect points read what the ops apart write (xb, the
   * GLU's result).
   */
  private oneTokenOr(fused: Dispatch[], apart: Dispatch[], rows?: Dispatch[]): Dispatch {
    const pick = () => {
      if (this.collector.active) return apart;
      if (this.step.tokens === 1) return fused;
      return rows && this.rows && this.matmul.runsBatched(this.step.tokens) ? rows : apart;
    };
    return {
      encode: (pass) => {
        for (const d of pick()) d.encode(pass);
      },
    };
  }

  /**
   * x += the block's output W·input (`xStride`: elements between the input's token rows): folded
   * into the projection, or, with a post-norm (gemma), x += rmsnorm(W·input) through xb. With
   * `fused`: x made by its prologue as the mat-vec loads it, for one token (not tracked: its count
   * stays 1) or a batched decode step's rows (`rows`).
   */
  private blockOutput(
    w: GpuWeight,
    input: GPUBuffer,
    postNorm?: GPUBuffer,
    xStride?: number,
    fused?: { prologue?: XPrologue; rows?: boolean },
  ): Dispatch[] {
    const { act, hp } = this;
    const project = (y: GPUBuffer, accumulate: boolean) => {
      const d = this.matmul.matmul(w, input, y, 1, { accumulate, xStride, prologue: fused?.prologue });
      return fused && !fused.rows ? d : this.track(d);
    };
    if (!postNorm) return [project(act.x, true)];
    return [
      project(act.xb, false),
      this.ops.rmsNorm({
        x: act.xb,
        w: postNorm,
        y: act.x,
        n: hp.nEmbd,
        eps: hp.eps,
        step: this.step,
        accumulate: true,
      }),
    ];
  }

  private attention(l: Layer): Dispatch[] {
    const { act } = this;
    const { hp } = this;
    const blk = (role: BlockRole) => tensorName(role, l.index);
    const qkvNames = hp.qkvFused ? [blk('attn_qkv')] : QKV_ROLES.map(blk);
    return [
      this.projectNormedRows(
        l.qkv,
        l.attnNorm,
        this.collector.point(qkvNames, act.xb, hp.nEmbd),
        act.qkv,
        this.qkvWidth,
      ),
      ...this.qkvBias(l),
      ...this.qkNorm(l),
      ...this.selfAttention(l),
      this.collector.point([blk('attn_output')], act.att, hp.nHead * hp.headDim),
      ...this.blockOutput(l.wo, act.att, l.attnPostNorm),
      ...this.outputBias(l),
    ];
  }

  /** gpt-oss: x += attn_output's bias (after its projection was added). */
  private outputBias(l: Layer): Dispatch[] {
    return l.woBias ? [this.ops.addBias(this.act.x, l.woBias, this.hp.nEmbd, this.step)] : [];
  }

  /** Elements of one token's q|k|v row. */
  private get qkvWidth(): number {
    return (this.hp.nHead + 2 * this.hp.nHeadKv) * this.hp.headDim;
  }

  /** qwen2: the Q, K and V biases added to the q|k|v rows. */
  private qkvBias(l: Layer): Dispatch[] {
    return l.qkvBias ? [this.ops.addBias(this.act.qkv, l.qkvBias, this.qkvWidth, this.step)] : [];
  }

  /** Per-head RMSNorm of Q and K (qwen3, gemma3): the Q heads then the K heads at the start of each q|k|v row. */
  private qkNorm(l: Layer): Dispatch[] {
    const { hp, act, ops, step } = this;
    if (!l.qkNorm) return [];
    return [
      ops.rmsNorm({
        x: act.qkv,
        w: l.qkNorm,
        n: hp.headDim,
        rowsPerToken: hp.nHead + hp.nHeadKv,
        tokenStride: this.qkvWidth,
        wSplit: hp.nHead,
        eps: hp.eps,
        step,
      }),
    ];
  }

  /**
   * K and V into the current slot's cache, then attention of Q over it; RoPE happens inside both.
   * A batched decode step (setRows): per row, over its own slot's cache (made on first use).
   */
  private selfAttention(l: Layer): Dispatch[] {
    const perSlot = l.kvCache.map((parts) => this.slotAttention(l, parts, this.step, 0));
    const perRow = new Map<number, Dispatch[]>();
    const encode = (pass: GPUComputePassEncoder) => {
      if (!this.rows) return perSlot[this.slot]!.forEach((d) => d.encode(pass));
      this.rows.forEach(({ slot }, r) => {
        const key = r * this.slots + slot;
        let row = perRow.get(key);
        if (!row) perRow.set(key, (row = this.slotAttention(l, l.kvCache[slot]!, this.rowStep(r), r)));
        row.forEach((d) => d.encode(pass));
      });
    };
    return [{ encode }];
  }

  /** The attention of the batch's tokens over `parts`; `row`: a batched step's row, bound at its place in the activations. */
  private slotAttention(l: Layer, parts: KvCachePart[], step: Step, row: number): Dispatch[] {
    const { hp, act, ops } = this;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    const kvRows = { stride: this.qkvWidth, kOffset: qDim, vOffset: qDim + kvDim };
    const qRows = { stride: this.qkvWidth, offset: 0 };
    const at = (buffer: GPUBuffer, width: number): BufferArg =>
      row === 0 ? buffer : { buffer, offset: row * width * 4 };
    const qkv = at(act.qkv, this.qkvWidth);
    const att = at(act.att, qDim);
    return parts.map(({ k: kCache, v: vCache, heads: kvHeads }) =>
      ops.storeKvAndAttend(
        {
          k: qkv,
          v: qkv,
          kCache,
          vCache,
          kvHeads,
          step,
          kvStride: kvDim,
          headDim: hp.headDim,
          rope: l.rope,
          rows: kvRows,
        },
        {
          q: qkv,
          kCache,
          vCache,
          kvHeads,
          out: att,
          step,
          nHead: hp.nHead,
          nKvHead: hp.nHeadKv,
          headDim: hp.headDim,
          scale: hp.attnScale,
          rope: l.rope,
          qRows,
          window: l.window,
          softcap: hp.attnSoftcap,
          sinks: l.sinks,
        },
      ),
    );
  }

  private ffn(l: Layer): Dispatch[] {
    const { hp, act, ops, step } = this;
    if ('moe' in l.ffn) {
      // The router and the experts all read xb: the norm stays a dispatch.
      const norm = this.rmsnorm(act.x, l.ffnNorm, act.xb);
      const build = {
        hp,
        moe: hp.moe!,
        ops,
        matmul: this.matmul,
        step,
        maxBatch: this.options.maxBatch,
        track: (d: TokenDispatch) => this.track(d),
        x: act.x,
        xb: act.xb,
        denseGate: act.gate,
        denseUp: act.up,
        scratch: act.moe!,
        collect: (weights: string[], x: GPUBuffer, width: number, route?: ExpertRoute) =>
          this.collector.point(weights, x, width, width, route),
      };
      return [norm, ...moeFfn(build, l.ffn.moe)];
    }
    const blk = (role: BlockRole) => tensorName(role, l.index);
    const gateUpNames = hp.ffnGateUpFused ? [blk('ffn_up')] : GATE_UP_ROLES.map(blk);
    // gate|up rows; the GLU's result replaces the gate half, which ffn_down reads. One token: the
    // gate|up mat-vec writes it where the GPU shapes have the rows in pairs (GLU once), else
    // ffn_down computes it from the row as it loads its x (in each of its workgroups).
    const rowWidth = 2 * hp.nFf;
    const [first, ...others] = l.ffn.gateUp;
    // The GPU shapes' mat-vec, which folds the norm too.
    const gluOnce = others.length === 0 && first!.weight.gluPairs === true && this.matmul.foldsNorm;
    return [
      this.projectNormedRows(
        l.ffn.gateUp,
        l.ffnNorm,
        this.collector.point(gateUpNames, act.xb, hp.nEmbd),
        act.gate,
        rowWidth,
        gluOnce ? hp.ffnAct : undefined,
      ),
      this.oneTokenOr(
        this.blockOutput(l.ffn.down, act.gate, l.ffnPostNorm, rowWidth, {
          prologue: gluOnce ? undefined : { glu: hp.ffnAct },
        }),
        [
          ops.glu({ gate: act.gate, width: hp.nFf, step, act: hp.ffnAct }),
          this.collector.point([blk('ffn_down')], act.gate, hp.nFf, rowWidth),
          ...this.blockOutput(l.ffn.down, act.gate, l.ffnPostNorm, rowWidth),
        ],
        // A batched step's rows through the batched mat-vec: the GLU made as ffn_down loads x, as for one token.
        this.matmul.batchMatvec
          ? this.blockOutput(l.ffn.down, act.gate, l.ffnPostNorm, rowWidth, {
              prologue: { glu: hp.ffnAct },
              rows: true,
            })
          : undefined,
      ),
    ];
  }

  private output(): Dispatch[] {
    const { hp, act } = this;
    return [
      this.ops.rmsNorm({
        x: act.x,
        w: this.vector(tensorName('output_norm')),
        y: act.xLast,
        n: hp.nEmbd,
        eps: hp.eps,
        step: this.step,
        lastOnly: true,
      }),
      this.matmul.matmul(this.outputWeight(), act.xLast, act.logits, 1),
      ...this.logitSoftcap(act.logits, 1),
    ];
  }

  /** gemma2 (and gemma3 when the file asks): logits = c·tanh(logits/c), over `rows` rows (default: the batch's). */
  private logitSoftcap(logits: GPUBuffer, rows?: number): Dispatch[] {
    const { hp } = this;
    return hp.finalSoftcap ? [this.ops.softcap(logits, hp.finalSoftcap, hp.nVocab, this.step, rows)] : [];
  }

  private outputWeight(): GpuWeight {
    return this.weights.get(tensorName(this.hp.tiedEmbeddings ? 'token_embd' : 'output'))!;
  }

  // ---- buffers ----

  private layer(l: number, kvParts: KvHeads[]): Layer {
    const { hp } = this;
    const blk = (role: BlockRole, kind?: TensorKind) => tensorName(role, l, kind);
    const w = (role: BlockRole) => this.weights.get(blk(role))!;
    const optional = (role: BlockRole, kind?: TensorKind) =>
      this.vectors.has(blk(role, kind)) ? this.vector(blk(role, kind)) : undefined;
    const qDim = hp.nHead * hp.headDim;
    const kvDim = hp.nHeadKv * hp.headDim;
    const ffn: Layer['ffn'] = hp.moe
      ? {
          moe: moeLayerWeights(
            hp.moe,
            l,
            (name) => this.weights.get(name)!,
            (name) => this.vector(name),
          ),
        }
      : { gateUp: this.rowsProjections(l, hp.ffnGateUpFused ? ['ffn_up'] : GATE_UP_ROLES), down: w('ffn_down') };
    let qkvBias: GPUBuffer | undefined;
    if (hp.qkvBias) {
      qkvBias = hp.qkvFused
        ? this.vector(blk('attn_qkv', 'bias'))
        : this.concatVector([
            [blk('attn_q', 'bias'), qDim],
            [blk('attn_k', 'bias'), kvDim],
            [blk('attn_v', 'bias'), kvDim],
          ]);
    }
    const windowed = hp.swa?.layers[l] ?? false;
    return {
      index: l,
      attnNorm: this.vector(blk('attn_norm')),
      ffnNorm: this.vector(blk(hp.ffnNorm)),
      // gpt-oss's post_attention_norm is its FFN norm, not a post-norm.
      attnPostNorm: hp.postNorms ? this.vector(blk('post_attention_norm')) : undefined,
      ffnPostNorm: hp.postNorms ? this.vector(blk('post_ffw_norm')) : undefined,
      qkv: this.rowsProjections(l, hp.qkvFused ? ['attn_qkv'] : QKV_ROLES),
      wo: w('attn_output'),
      woBias: optional('attn_output', 'bias'),
      sinks: optional('attn_sinks'),
      ffn,
      qkvBias,
      qkNorm: hp.qkNorm
        ? this.concatVector([
            [blk('attn_q_norm'), hp.headDim],
            [blk('attn_k_norm'), hp.headDim],
          ])
        : undefined,
      window: windowed ? hp.swa!.window : 0,
      rope: { table: windowed ? this.ropeTables.swa : this.ropeTables.full, nRot: hp.rope.nRot, neox: hp.rope.neox },
      kvCache: Array.from({ length: Math.max(1, this.options.slots ?? 1) }, (_, slot) =>
        kvParts.map((heads) => this.kvCachePart(l, slot, heads, kvParts.length > 1)),
      ),
    };
  }

  /** Layer l's K and V caches for `heads` in `slot`, named as llama.cpp's cache tensors (and the part's heads, the slot). */
  private kvCachePart(l: number, slot: number, heads: KvHeads, split: boolean): KvCachePart {
    const width = heads.count * this.hp.headDim;
    const suffix =
      (split ? ` heads ${heads.first}-${heads.first + heads.count - 1}` : '') + (slot > 0 ? ` slot ${slot}` : '');
    // llama.cpp's names for the cache tensors.
    const k = this.owned.create(`cache_k_l${l}${suffix}`, this.ops.kvCacheBytes('k', this.options.ctx, width));
    const v = this.owned.create(`cache_v_l${l}${suffix}`, this.ops.kvCacheBytes('v', this.options.ctx, width));
    return { k, v, heads };
  }

  /**
   * Layer l's `roles` as the weights uploaded for them (concatGroups: each run of one type is one
   * weight), with where each one's rows start in the combined output row.
   */
  private rowsProjections(l: number, roles: readonly BlockRole[]): RowsProjection[] {
    const names = roles.map((role) => tensorName(role, l));
    const out: RowsProjection[] = [];
    let offset = 0;
    for (let first = 0; first < names.length;) {
      // The longest run from `first` that was uploaded as one weight (a single tensor always was).
      let end = names.length;
      while (end > first + 1 && !this.weights.has(concatName(names.slice(first, end)))) end--;
      const weight = this.weights.get(end > first + 1 ? concatName(names.slice(first, end)) : names[first]!)!;
      out.push({ weight, offset });
      offset += weight.rows;
      first = end;
    }
    return out;
  }

  /** The vectors [name, length] laid end to end in one buffer, copied on the GPU (kept with the vectors). */
  private concatVector(parts: readonly (readonly [string, number])[]): GPUBuffer {
    const name = concatName(parts.map(([n]) => n));
    const b = this.owned.create(
      name,
      parts.reduce((sum, [, length]) => sum + 4 * length, 0),
    );
    const encoder = this.ctx.device.createCommandEncoder();
    let at = 0;
    for (const [n, length] of parts) {
      encoder.copyBufferToBuffer(this.vector(n), 0, b, at, 4 * length);
      at += 4 * length;
    }
    this.ctx.device.queue.submit([encoder.finish()]);
    this.vectors.set(name, b);
    return b;
  }

  /** The RoPE tables for the context: one, plus the sliding-window layers' own when its parameters differ (gemma3). */
  private ropeTableBuffers(vectorData: Map<string, Float32Array>): { full: GPUBuffer; swa: GPUBuffer } {
    const { hp, options } = this;
    const factorsName = ropeFactorsTensor(hp, options.ctx);
    const factors = factorsName ? vectorData.get(factorsName) : undefined;
    const full = this.owned.upload('rope table', ropeTable(hp.rope, options.ctx, factors));
    const swaRope = ownSwaRope(hp);
    if (!swaRope) return { full, swa: full };
    return { full, swa: this.owned.upload('rope table (sliding window)', ropeTable(swaRope, options.ctx, factors)) };
  }

  private activations(): Activations {
    return activationBuffers(this.hp, this.options.maxBatch, (label, bytes) => this.owned.create(label, bytes));
  }

  private vector(name: string): GPUBuffer {
    const b = this.vectors.get(name);
    if (!b) throw new Error(`tensor ${name} was not loaded`);
    return b;
  }

  private track(d: TokenDispatch): TokenDispatch {
    this.batched.push(d);
    return d;
  }
}
