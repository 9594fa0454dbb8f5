/**
 * The non-matmul kernels of the transformer (shaders/{norm,kv-store,attention-prefill,attention-decode,elementwise,sample,moe,square_sums,square_sums_moe}.wgsl;
 * RoPE, shaders/rope.wgsl, is applied inside store_kv and the attention kernels)
 * behind small factories. Each factory call builds its uniform buffer and bind group once and
 * returns a Dispatch, which the decode loop re-encodes every step without allocating anything.
 * Sizes are per token: the token count of a submission lives in a shared Step (a uniform the
 * kernels read, and the count their dispatch sizes follow), so one graph serves prefill chunks
 * and single-token decode alike. Offsets and sizes are in elements (f32 or u32), not bytes.
 */
import { MAX_PENALTY_LAST_N, type SamplingParams } from '../../engine-wire/protocol';
import { kvCacheBytes, kvCacheGgmlType } from '../../core/kv-cache-types';
import { DEFAULT_KV_CACHE_TYPES, type KvCacheType, type KvCacheTypes } from '../../../src-preload/api/kv-cache';
import { noteReadBytes } from './dispatch-profile';
import { shaderSource, type Defines } from './shader-source';
import { pipelineCache } from './pipeline-cache';
import { cpuLanes, cpuRowLoadsFirst } from './row-groups';
import {
  AttentionUniform,
  ElementwiseUniform,
  MoeUniform,
  NormUniform,
  SampleUniform,
  SquareSumMoeUniform,
  SquareSumUniform,
  StepUniform,
} from './kernel-uniforms';
import type { UniformFields, UniformStruct, UniformValues } from './uniforms';
import type { GpuInfo } from '../../engine-wire/protocol';

/** One recorded kernel launch, replayed into a compute pass at every step. */
export interface Dispatch {
  encode(pass: GPUComputePassEncoder): void;
}

/**
 * Where the submission being encoded starts in the sequence (pos0) and how many tokens it has:
 * the Step uniform shared by every kernel, rewritten before each submission.
 */
export class Step {
  readonly buffer: GPUBuffer;
  /** The uniform's bytes, packed again in place by each set(). */
  private readonly bytes = new ArrayBuffer(StepUniform.byteSize);
  private readonly current = { pos0: 0, nTokens: 0 };

  constructor(private readonly device: GPUDevice) {
    this.buffer = device.createBuffer({
      label: 'step',
      size: StepUniform.byteSize,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
  }

  get pos0(): number {
    return this.current.pos0;
  }

  get tokens(): number {
    return this.current.nTokens;
  }

  /** Takes effect for the next submission (queue.writeBuffer is ordered before it). */
  set(pos0: number, tokens: number): void {
    this.current.pos0 = pos0;
    this.current.nTokens = tokens;
    this.device.queue.writeBuffer(this.buffer, 0, StepUniform.pack(this.current, this.bytes));
  }

  destroy(): void {
    this.buffer.destroy();
  }
}

/** Recent-token ring on the GPU for penalties (RING in sample.wgsl), plus its two counters. */
export const PENALTY_RING = MAX_PENALTY_LAST_N;
export const SAMPLER_STATE_WORDS = 2 + PENALTY_RING;
/** Most top log-probabilities one step can return. */
export const MAX_TOP_LOGPROBS = 32;
/** u32 words the sampler writes: the token, its log-probability, then (id, log-probability) pairs. */
export const SAMPLER_OUT_WORDS = 2 + 2 * MAX_TOP_LOGPROBS;

export const GREEDY: SamplingParams = {
  temperature: 0,
  topK: 0,
  topP: 1,
  minP: 0,
  repeatPenalty: 1,
  presencePenalty: 0,
  frequencyPenalty: 0,
  penaltyLastN: 64,
  seed: 0,
};

/** Largest top-k the sampler handles as a short sorted list (the workgroup size of sample.wgsl). */
export const SHORT_LIST = 256;

/** Which of the sampler's entry points serves these parameters. */
export type SamplerPath = 'greedy' | 'top_k' | 'vocab';

export function samplerPath(s: SamplingParams, vocab: number): SamplerPath {
  if (s.temperature <= 0) return 'greedy';
  const k = Math.floor(s.topK);
  return k > 0 && k <= SHORT_LIST && k < vocab ? 'top_k' : 'vocab';
}

/** The sampler's uniform (SampleUniform). */
export function samplingParamsBytes(vocab: number, s: SamplingParams, nLogprobs = 0): ArrayBuffer {
  return SampleUniform.pack({
    vocab,
    topK: Math.max(0, Math.floor(s.topK)),
    lastN: Math.min(PENALTY_RING, Math.max(0, Math.floor(s.penaltyLastN))),
    seed: s.seed >>> 0,
    temperature: s.temperature,
    topP: s.topP,
    minP: s.minP,
    repeatPenalty: s.repeatPenalty,
    presencePenalty: s.presencePenalty,
    frequencyPenalty: s.frequencyPenalty,
    nLogprobs: Math.min(MAX_TOP_LOGPROBS, vocab, nLogprobs),
  });
}

type Grid = [number, number];

/**
 * attention-decode.wgsl's limits (test/engine/gpu/attention-decode.test.ts holds them to the
 * shader): query heads per workgroup (MAX_HB), and their rotated queries' floats (MAX_Q).
 */
export const DECODE_HEAD_BLOCK = 8;
export const DECODE_QUERY_FLOATS = 1024;
/** Partial results per query head of a decode step at most (splits, times LANES on a CPU adapter). */
export const DECODE_MAX_SPLITS = 64;
/**
 * The keys a CPU-shape workgroup scores between rescales of its sums: attention-decode.wgsl's
 * LANES × KEYS. As many keys a lane as the tile allows, whatever the lanes: SwiftShader's 4 lanes
 * with 16 keys each ran 1.25× as fast as 8 lanes with 4 (lavapipe's 8 run the same with 4 or 8).
 */
const DECODE_CPU_TILE = 64;
/** attention-prefill.wgsl's ROWS and LANES: the tokens (of one query head) a prefill workgroup takes. */
export const PREFILL_ROWS = 8;
/** The fewest keys given a split of their own (a tile). */
const DECODE_MIN_SPLIT_KEYS = 128;
/** kv-quant.wgsl's cache type ids (KV_F32, KV_F16, KV_Q8_0, KV_Q4_0). */
const KV_SHADER_TYPES: Record<KvCacheType, number> = { f32: 0, f16: 1, q8_0: 2, q4_0: 3 };
/** The smallest chunk llama.cpp rotates a quantized cache's heads in, and V's chunk. */
const KV_ROT_MIN = 64;
/** kv-quant.wgsl's groups: a quantized cache's blocks go in pairs, a whole number of words. */
const KV_GROUP_BLOCKS = 2;
/**
 * Workgroups a decode attention aims for, over all KV heads and splits: enough for every core of a
 * CPU adapter, or every SM of a GPU, with some to spare for balance.
 */
export const DECODE_WORKGROUPS = { cpu: 16, gpu: 512 };

/** Keys the token at `pos` sees: all before it and itself, or the last `window` of them. */
function keysSeen(pos: number, window: number): number {
  return window > 0 && pos >= window ? window : pos + 1;
}

/** Workgroup counts for `count` invocations in groups of `size`, folded into y past 65535. */
function threads(count: number, size: number): Grid {
  const groups = Math.ceil(count / size);
  if (groups <= 65535) return [groups, 1];
  return [65535, Math.ceil(groups / 65535)];
}

export interface SquareSumsMoeArgs {
  /** The expert matmul's input: a row per token, or per pair (perPair). */
  x: GPUBuffer;
  /** The routing's expert per pair, [token][used]. */
  ids: GPUBuffer;
  sums: GPUBuffer;
  counts: GPUBuffer;
  step: Step;
  width: number;
  stride?: number;
  experts: number;
  used: number;
  perPair: boolean;
}

export interface RmsNormArgs {
  x: GPUBuffer;
  w: GPUBuffer;
  /** Omit to normalize x in place. */
  y?: GPUBuffer;
  step: Step;
  /** Row length. */
  n: number;
  /** Rows per token (default 1; nHead for a per-head norm). */
  rowsPerToken?: number;
  eps: number;
  /** Only the batch's last token, written at the start of y (the output head needs no more). */
  lastOnly?: boolean;
  wOffset?: number;
  /** y += the normed rows instead of y = (gemma's post-norms, added to the residual stream). */
  accumulate?: boolean;
  /**
   * Elements from one token's first row in x to the next's (default rowsPerToken · n): rows inside
   * wider rows, e.g. the Q and K heads at the start of a fused q|k|v row.
   */
  tokenStride?: number;
  /** A token's rows from this one on take the weight's next n values (Q and K norms in one dispatch). */
  wSplit?: number;
}

/** RoPE as the attention kernels apply it (angles from ropeTable()). */
export interface RopeSpec {
  table: GPUBuffer;
  /** Rotated dimensions per head. */
  nRot: number;
  neox: boolean;
}

/** KV heads first .. first + count − 1: those one part of a layer's KV cache holds (kv-store.wgsl). */
export interface KvHeads {
  first: number;
  count: number;
}

/** A whole buffer, or a range of one (a row of a batch's activations: offsets of minStorageBufferOffsetAlignment). */
export type BufferArg = GPUBuffer | GPUBufferBinding;

export interface StoreKvArgs {
  k: BufferArg;
  v: BufferArg;
  kCache: GPUBuffer;
  vCache: GPUBuffer;
  /** The KV heads the caches hold (default: all); only theirs are stored. */
  kvHeads?: KvHeads;
  step: Step;
  /** nKvHead * headDim. */
  kvStride: number;
  headDim: number;
  rope: RopeSpec;
  /**
   * Where each token's K and V rows lie in k and v (default: packed rows of kvStride from 0), e.g.
   * inside a fused q|k|v row.
   */
  rows?: { stride: number; kOffset: number; vOffset: number };
}

export interface AttentionArgs {
  q: BufferArg;
  kCache: GPUBuffer;
  vCache: GPUBuffer;
  /** The KV heads the caches hold (default: all); only their query heads are attended and written to out. */
  kvHeads?: KvHeads;
  out: BufferArg;
  step: Step;
  nHead: number;
  nKvHead: number;
  headDim: number;
  scale: number;
  rope: RopeSpec;
  /** Where each token's Q row lies in q (default: packed rows of nHead * headDim from 0). */
  qRows?: { stride: number; offset: number };
  /** Sliding window: a query sees only its last `window` positions (default 0: all). */
  window?: number;
  /** Scores s become softcap · tanh(s / softcap) before the softmax (default 0: off). */
  softcap?: number;
  /** [nHead] f32: a logit per head that joins the softmax's denominator (gpt-oss's attn_sinks). */
  sinks?: GPUBuffer;
  /** false: every query sees the whole batch (an encoder's bidirectional attention; default true). */
  causal?: boolean;
}

export interface GluArgs {
  /** [token][width], or with no `up` [token][gate | up] rows of 2·width; receives the result. */
  gate: GPUBuffer;
  up?: GPUBuffer;
  width: number;
  step: Step;
  act: 'silu' | 'gelu';
}

export interface SampleArgs {
  logits: BufferArg;
  /** vocab f32 of scratch. */
  work: GPUBuffer;
  /** SAMPLER_STATE_WORDS u32. */
  state: GPUBuffer;
  /** SAMPLER_OUT_WORDS u32. */
  out: GPUBuffer;
  /** samplingParamsBytes(...). */
  params: GPUBuffer;
  step: Step;
  /** ceil(vocab / 32) u32, bit i set = token i allowed: for the masked entry points only. */
  mask?: GPUBuffer;
}

export interface MoeRouteArgs {
  /** [token][experts] router logits. */
  logits: GPUBuffer;
  /** [token][used] u32: the chosen experts, most probable first. */
  ids: GPUBuffer;
  /** [token][used] f32: their weights. */
  weights: GPUBuffer;
  step: Step;
  experts: number;
  used: number;
  /** Divide the weights by their sum. */
  norm: boolean;
  /** hparams.ts MoeParams.gating (default 'softmax'). */
  gating?: 'softmax' | 'softmax_weight';
}

export interface MoeAddBiasArgs {
  /** [pair][width]: each pair's expert output, receives its expert's bias. */
  rows: GPUBuffer;
  /** [expert][width] f32. */
  bias: GPUBuffer;
  /** moeRoute's ids. */
  ids: GPUBuffer;
  step: Step;
  width: number;
  used: number;
}

export interface MoeGroupArgs {
  /** moeRoute's ids. */
  ids: GPUBuffer;
  /** The routing table (matmul.ts routingTable() layout). */
  table: GPUBuffer;
  step: Step;
  experts: number;
  used: number;
  /** Pairs per tile (matmul.ts EXPERT_TILE). */
  tile: number;
  /** Word of the table where the pair entries start. */
  pairsAt: number;
}

export interface MoeCombineArgs {
  /** The residual stream, [token][width]: receives the experts' weighted sum. */
  x: GPUBuffer;
  /** [pair][width]: each pair's expert output. */
  down: GPUBuffer;
  /** moeRoute's weights. */
  weights: GPUBuffer;
  step: Step;
  width: number;
  used: number;
  /** A shared expert's output [token][width] and gate logit [token], added as output · sigmoid(gate). */
  shared?: { out: GPUBuffer; gate: GPUBuffer };
}

/**
 * Bytes of a K or V cache buffer of `type` for `positions` rows of kvStride elements: llama.cpp's
 * bytes, a quantized cache rounded up to whole groups of KV_GROUP_BLOCKS blocks (kv-quant.wgsl's
 * layout) and to 16 bytes (the CPU shapes read it as vec4s).
 */
export function kvCacheBufferBytes(type: KvCacheType, positions: number, kvStride: number): number {
  const block = kvCacheGgmlType(type).blockSize;
  if (block === 1) return kvCacheBytes(type, positions * kvStride);
  if (kvStride % block !== 0)
    throw new Error(`a ${type} KV cache needs rows of whole blocks of ${block}, not ${kvStride} elements`);
  const group = KV_GROUP_BLOCKS * block;
  return Math.ceil(kvCacheBytes(type, Math.ceil((positions * kvStride) / group) * group) / 16) * 16;
}

/**
 * The CPU shapes' parameters (all absent: the GPU shapes). `cpuLanes`: the adapter runs on the
 * CPU, with SIMD registers of so many lanes (fewer, longer splits of a decode step's keys, a
 * workgroup one register of lanes). `rowLoadsFirst`: decode attention loads a whole K or V row
 * before its arithmetic (row-groups.ts's cpuRowLoadsFirst).
 */
export interface OpKernelShapes {
  cpuLanes?: number;
  rowLoadsFirst?: boolean;
}

/**
 * OpKernels' shapes for an adapter: the CPU shapes, a workgroup of its SIMD lanes, where
 * `cpuShapes` (by default where the adapter runs on the CPU), else the GPU shapes.
 */
export function opKernelShapes(info: GpuInfo, cpuShapes = info.cpuShapes): OpKernelShapes {
  return cpuShapes ? { cpuLanes: cpuLanes(info), rowLoadsFirst: cpuRowLoadsFirst(info) } : {};
}

export class OpKernels {
  private readonly pipelines = new Map<string, GPUComputePipeline>();
  private readonly uniforms: GPUBuffer[] = [];
  private readonly scratchBuffers: GPUBuffer[] = [];

  /** Partial results of decode attention's splits, shared by every layer (grown as needed). */
  private splitScratch: GPUBuffer | null = null;
  private readonly cpu: boolean;
  /** The CPU shapes' workgroup of decode attention: the adapter's SIMD lanes (row-groups.ts's cpuLanes). */
  private readonly cpuLanes: number;
  /** OpKernelShapes.rowLoadsFirst. */
  private readonly rowLoadsFirst: boolean;
  /** A folder of WGSL to read instead of shaders/ (undefined: shaders/). */
  private readonly shaders: string | undefined;

  /**
   * `kv`: the K and V caches' element types (llama.cpp's default: f16 both). `options`: the
   * adapter's shapes (opKernelShapes), and `shaders`, a folder to read the WGSL from instead of
   * shaders/ (a variant measured beside the shipped kernels).
   */
  constructor(
    readonly device: GPUDevice,
    readonly kv: KvCacheTypes = DEFAULT_KV_CACHE_TYPES,
    options: OpKernelShapes & { shaders?: string } = {},
  ) {
    this.shaders = options.shaders;
    this.rowLoadsFirst = options.rowLoadsFirst ?? false;
    this.cpu = options.cpuLanes !== undefined;
    // Each lane leaves a partial: no more than the merge takes (so at least one split fits).
    this.cpuLanes = Math.min(Math.max(1, options.cpuLanes ?? 1), DECODE_MAX_SPLITS);
  }

  /** Bytes of the K (or V) cache buffer for `positions` rows of kvStride elements (kvCacheBufferBytes). */
  kvCacheBytes(which: 'k' | 'v', positions: number, kvStride: number): number {
    return kvCacheBufferBytes(this.kv[which], positions, kvStride);
  }

  /** The caches' pipeline overrides. */
  private get kvConstants(): { KV_K: number; KV_V: number } {
    return { KV_K: KV_SHADER_TYPES[this.kv.k], KV_V: KV_SHADER_TYPES[this.kv.v] };
  }

  /**
   * llama.cpp's attention rotation for heads of `headDim` (kv-quant.wgsl's K_ROT, V_ROT): a
   * quantized cache's heads of a multiple of 64 are rotated in chunks, K's of the largest power of
   * two that divides the head, V's of 64 (llama-kv-cache.cpp's build_input_k_rot/v_rot).
   */
  kvRotation(headDim: number): { K_ROT: number; V_ROT: number } {
    const rotated = (which: 'k' | 'v') => this.quantizedKv(which) && headDim % KV_ROT_MIN === 0;
    let k = KV_ROT_MIN;
    while (headDim % (2 * k) === 0) k *= 2;
    return { K_ROT: rotated('k') ? k : 0, V_ROT: rotated('v') ? KV_ROT_MIN : 0 };
  }

  private quantizedKv(which: 'k' | 'v'): boolean {
    return kvCacheGgmlType(this.kv[which]).quantized;
  }

  /**
   * Elements of a quantized cache's group (kv-quant.wgsl's KV_GROUP); heads must be whole blocks,
   * as llama.cpp requires too.
   */
  private kvQuantGroup(headDim: number): number {
    const block = Math.max(kvCacheGgmlType(this.kv.k).blockSize, kvCacheGgmlType(this.kv.v).blockSize);
    if (headDim % block !== 0)
      throw new Error(`a ${this.kv.k}/${this.kv.v} KV cache needs heads of whole blocks of ${block}, not ${headDim}`);
    return KV_GROUP_BLOCKS * block;
  }

  rmsNorm(a: RmsNormArgs): Dispatch {
    const perToken = a.rowsPerToken ?? 1;
    const u = this.uniform(NormUniform, {
      n: a.n,
      rowsPerToken: perToken,
      eps: a.eps,
      lastOnly: a.lastOnly ? 1 : 0,
      wOffset: a.wOffset ?? 0,
      tokenStride: a.tokenStride ?? 0,
      wSplit: a.wSplit ?? 0,
    });
    const rows = (n: number) => (a.lastOnly ? perToken : n * perToken);
    const grid = (n: number): Grid => [Math.min(rows(n), 65535), Math.ceil(rows(n) / 65535)];
    const constants = { ACCUMULATE: a.accumulate ? 1 : 0 };
    if (a.y) return this.dispatch('norm.wgsl', 'rms_norm', [u, a.w, a.x, a.y, a.step.buffer], a.step, grid, constants);
    if (a.accumulate) throw new Error('rmsNorm: accumulate needs a separate output');
    return this.dispatch('norm.wgsl', 'rms_norm_inplace', [u, a.w, a.x, null, a.step.buffer], a.step, grid);
  }

  /** x = LayerNorm(x) · w + b in place, each token's row of n (ggml_norm then the weight and bias). */
  layerNorm(a: { x: GPUBuffer; w: GPUBuffer; b: GPUBuffer; n: number; eps: number; step: Step }): Dispatch {
    const u = this.uniform(NormUniform, {
      n: a.n,
      rowsPerToken: 1,
      eps: a.eps,
      lastOnly: 0,
      wOffset: 0,
      tokenStride: 0,
      wSplit: 0,
    });
    const grid = (n: number): Grid => [Math.min(n, 65535), Math.ceil(n / 65535)];
    return this.dispatch('norm.wgsl', 'layer_norm_inplace', [u, a.w, a.x, null, a.step.buffer, a.b], a.step, grid);
  }

  /** Writes the batch's K (rotated) and V rows into the cache at positions pos0... */
  storeKv(a: StoreKvArgs): Dispatch {
    const rows = a.rows ?? { stride: a.kvStride, kOffset: 0, vOffset: 0 };
    const heads = a.kvHeads ?? { first: 0, count: a.kvStride / a.headDim };
    const skip = heads.first * a.headDim;
    const width = heads.count * a.headDim;
    const u = this.attentionUniform(1, 1, a.headDim, 0, 0, width, a.rope, {
      inStride: rows.stride,
      qkOffset: rows.kOffset + skip,
      vOffset: rows.vOffset + skip,
    });
    const buffers = [u, a.step.buffer, a.k, a.v, a.kCache, a.vCache, a.rope.table];
    const quantized = [this.quantizedKv('k'), this.quantizedKv('v')];
    const dispatches: Dispatch[] = [];
    if (quantized.includes(false))
      dispatches.push(
        this.dispatch(
          'kv-store.wgsl',
          'store_kv',
          buffers,
          a.step,
          (n) => threads((n * width) / 2, 64),
          this.kvConstants,
        ),
      );
    if (quantized.includes(true)) {
      const group = this.kvQuantGroup(a.headDim);
      // A group an invocation, from the group holding the batch's first element.
      const groups = (n: number, pos0: number) =>
        Math.ceil(((pos0 + n) * width) / group) - Math.floor((pos0 * width) / group);
      dispatches.push(
        this.dispatch('kv-store.wgsl', 'store_kv_quant', buffers, a.step, (n, pos0) => threads(groups(n, pos0), 64), {
          ...this.kvConstants,
          ...this.kvRotation(a.headDim),
        }),
      );
    }
    return { encode: (pass) => dispatches.forEach((d) => d.encode(pass)) };
  }

  /**
   * storeKv then attention as one Dispatch: a one-token step's attention writes the row itself
   * (attention-decode.wgsl's STORE), a longer step runs store_kv first.
   */
  storeKvAndAttend(store: StoreKvArgs, a: AttentionArgs): Dispatch {
    const sameHeads = store.kvHeads?.first === a.kvHeads?.first && store.kvHeads?.count === a.kvHeads?.count;
    if (store.kvStride !== a.nKvHead * a.headDim || store.headDim !== a.headDim || !sameHeads)
      throw new Error('storeKvAndAttend: the store and the attention disagree on the KV rows');
    return this.attention(a, store);
  }

  /**
   * Attention of the step's tokens over the cache: a one-token step (decode) as flash decoding
   * (attention-decode.wgsl: the keys split across workgroups, then merged), a longer one as tiled
   * flash attention (attention-prefill.wgsl: a workgroup per tile of PREFILL_ROWS tokens of one
   * query head). `store`: also write the step's K and V rows.
   */
  attention(a: AttentionArgs, store?: StoreKvArgs): Dispatch {
    if (a.headDim > 256 || a.headDim % 2 !== 0)
      throw new Error(`attention: head size ${a.headDim} is not supported (even, at most 256)`);
    if (a.nHead % a.nKvHead !== 0)
      throw new Error(`attention: ${a.nHead} heads do not group over ${a.nKvHead} KV heads`);
    const qDim = a.nHead * a.headDim;
    const rows = a.qRows ?? { stride: qDim, offset: 0 };
    const group = a.nHead / a.nKvHead;
    // A CPU adapter's lanes keep their query in registers (a head size of whole vec4 pairs); a
    // GPU's workgroup shares queries through workgroup memory.
    const cpuShape = this.cpu && a.headDim % 8 === 0;
    const headBlock = Math.min(
      group,
      DECODE_HEAD_BLOCK,
      cpuShape ? Infinity : Math.floor(DECODE_QUERY_FLOATS / a.headDim),
    );
    const kvRows = store?.rows ?? { stride: a.nKvHead * a.headDim, kOffset: 0, vOffset: 0 };
    const heads = a.kvHeads ?? { first: 0, count: a.nKvHead };
    const u = this.attentionUniform(a.nHead, a.nKvHead, a.headDim, a.scale, qDim, heads.count * a.headDim, a.rope, {
      inStride: rows.stride,
      qkOffset: rows.offset,
      window: a.window,
      softcap: a.softcap,
      headBlock,
      kOffset: kvRows.kOffset,
      vOffset: kvRows.vOffset,
      kvHead0: heads.first,
    });
    const partHeads = heads.count * group;
    const storing = store && this.storeKv(store);
    // A decode step stores its row inside attention where each lane can own whole groups of a quantized cache.
    const quantGroup = this.quantizedKv('k') || this.quantizedKv('v') ? this.kvQuantGroup(a.headDim) : 0;
    const storeInside = store && (quantGroup === 0 || a.headDim % quantGroup === 0);
    // A batch: a workgroup per (query head, tile of tokens). The shader reads sinks only under SINKS: without, q stands in.
    const batchBuffers = [u, a.step.buffer, a.q, a.kCache, a.vCache, a.out, a.rope.table, a.sinks ?? a.q];
    const rotation = this.kvRotation(a.headDim);
    const constants = {
      ...this.kvConstants,
      K_ROT: rotation.K_ROT,
      CAUSAL: a.causal === false ? 0 : 1,
      SINKS: a.sinks ? 1 : 0,
    };
    const batch = this.dispatch(
      'attention-prefill.wgsl',
      cpuShape ? 'attend_tile_cpu' : 'attend_tile',
      batchBuffers,
      a.step,
      (n) => [partHeads, Math.ceil(n / PREFILL_ROWS)],
      constants,
      {
        defines: cpuShape ? { CPU_SHAPE: 1, HEAD_DIM: a.headDim } : {},
      },
    );
    // One token: a workgroup per (block of query heads of one KV head, split of the keys), then a merge per head.
    const window = a.window ?? 0;
    const blocks = heads.count * Math.ceil(group / headBlock);
    const maxSplits = cpuShape ? Math.floor(DECODE_MAX_SPLITS / this.cpuLanes) : DECODE_MAX_SPLITS;
    const splits = (pos: number) =>
      Math.max(
        1,
        Math.min(
          maxSplits,
          Math.ceil(keysSeen(pos, window) / DECODE_MIN_SPLIT_KEYS),
          Math.ceil(DECODE_WORKGROUPS[this.cpu ? 'cpu' : 'gpu'] / blocks),
        ),
      );
    const partStride = heads.count * a.headDim;
    const kvRowBytes = kvCacheBytes(this.kv.k, partStride) + kvCacheBytes(this.kv.v, partStride);
    const scratch = this.splitScratchOf(4 * (1 + a.nHead * DECODE_MAX_SPLITS * (a.headDim + 2)));
    // The shader reads kNew and vNew only under STORE, but uses them statically: without a store, q stands in.
    const splitBuffers = [
      u,
      a.step.buffer,
      a.q,
      a.kCache,
      a.vCache,
      scratch,
      a.rope.table,
      null,
      null,
      (storeInside && store.k) || a.q,
      (storeInside && store.v) || a.q,
    ];
    const split = this.dispatch(
      'attention-decode.wgsl',
      cpuShape ? 'attend_split_cpu' : 'attend_split',
      splitBuffers,
      a.step,
      (_, pos) => [blocks, splits(pos)],
      { ...this.kvConstants, ...rotation, STORE: storeInside ? 1 : 0 },
      {
        defines: cpuShape
          ? {
              CPU_SHAPE: 1,
              HEAD_DIM: a.headDim,
              HEAD_BLOCK: headBlock,
              LANES: this.cpuLanes,
              KEYS: Math.max(1, Math.floor(DECODE_CPU_TILE / this.cpuLanes)),
              LOAD_DIMS: this.rowLoadsFirst ? a.headDim : 8,
            }
          : {},
        readBytes: () => keysSeen(a.step.pos0, window) * kvRowBytes,
      },
    );
    const mergeBuffers = [u, null, scratch, null, null, null, null, a.sinks ?? null, a.out];
    const merge = this.dispatch(
      'attention-decode.wgsl',
      a.sinks ? 'attend_merge_sinks' : 'attend_merge',
      mergeBuffers,
      a.step,
      () => [partHeads, 1],
    );
    // A rotated V cache gives the output rotated: H·H = I turns it back, once for every part's
    // heads, after the last part (parts are encoded in head order) has written its own.
    const lastPart = heads.first + heads.count === a.nKvHead;
    const unrotate =
      rotation.V_ROT && lastPart
        ? this.elementwise('hadamard_v', a.out, null, qDim, a.step, {}, { V_ROT: rotation.V_ROT })
        : null;
    return {
      encode(pass) {
        if (a.step.tokens !== 1) {
          storing?.encode(pass);
          batch.encode(pass);
        } else {
          if (!storeInside) storing?.encode(pass);
          split.encode(pass);
          merge.encode(pass);
        }
        unrotate?.encode(pass);
      },
    };
  }

  /** The split scratch, at least `bytes` long: the current one, or a larger one for this and later bind groups. */
  private splitScratchOf(bytes: number): GPUBuffer {
    if (!this.splitScratch || this.splitScratch.size < bytes) {
      this.splitScratch = this.device.createBuffer({
        label: 'attention splits',
        size: bytes,
        usage: GPUBufferUsage.STORAGE,
      });
      this.scratchBuffers.push(this.splitScratch);
    }
    return this.splitScratch;
  }

  /** gate = act(gate) * up, `width` elements per token (shaders/elementwise.wgsl). */
  glu(a: GluArgs): Dispatch {
    const constants = { GELU: a.act === 'gelu' ? 1 : 0 };
    return this.elementwise(a.up ? 'glu' : 'glu_packed', a.gate, a.up ?? null, a.width, a.step, {}, constants);
  }

  /** x = gelu(x), `width` elements per token (an ungated FFN: BERT's). */
  gelu(x: GPUBuffer, width: number, step: Step): Dispatch {
    return this.elementwise('gelu_inplace', x, null, width, step);
  }

  /** gate = silu(gate) * up (SwiGLU), `width` elements per token. */
  swiglu(gate: GPUBuffer, up: GPUBuffer, width: number, step: Step): Dispatch {
    return this.glu({ gate, up, width, step, act: 'silu' });
  }

  /**
   * gpt-oss's SwiGLU-OAI as ggml's CPU computes it, `width` elements per token: g = min(gate,
   * limit), gate = g·sigmoid(alpha·g)·(clamp(up, ±limit) + 1).
   */
  swigluOai(gate: GPUBuffer, up: GPUBuffer, width: number, step: Step, alpha: number, limit: number): Dispatch {
    return this.elementwise('swiglu_oai', gate, up, width, step, { a: alpha, b: limit });
  }

  /** x += y, `width` elements per token. */
  add(x: GPUBuffer, y: GPUBuffer, width: number, step: Step): Dispatch {
    return this.elementwise('add', x, y, width, step);
  }

  /** x[t] += b for each token's row of `width`. */
  addBias(x: GPUBuffer, b: GPUBuffer, width: number, step: Step): Dispatch {
    return this.elementwise('add_bias', x, b, width, step);
  }

  /** x *= factor, `width` elements per token. */
  scale(x: GPUBuffer, factor: number, width: number, step: Step): Dispatch {
    return this.elementwise('scale', x, null, width, step, { a: factor });
  }

  /**
   * x = cap · tanh(x · (1/cap)), as llama.cpp's final logit soft-cap; over `rows` rows of `width`
   * (default: the batch's tokens).
   */
  softcap(x: GPUBuffer, cap: number, width: number, step: Step, rows?: number): Dispatch {
    return this.elementwise('softcap', x, null, width, step, { rows, a: cap, b: Math.fround(1 / cap) });
  }

  /**
   * sums[j] += Σ over the batch's tokens of x[t·stride + j]², sums[width + j] += Σ of x[t·stride + j],
   * j < width (shaders/square_sums.wgsl): the importance-matrix statistics of a matmul's input,
   * one thread per column, tokens in order.
   */
  squareSums(x: GPUBuffer, sums: GPUBuffer, width: number, step: Step, stride = width): Dispatch {
    const u = this.uniform(SquareSumUniform, { width, stride });
    return this.dispatch('square_sums.wgsl', 'square_sums', [u, step.buffer, x, sums], step, () => threads(width, 64));
  }

  /**
   * The same per expert of a stacked expert matmul (shaders/square_sums_moe.wgsl): expert e's
   * Σ x² and Σ x ([2][experts][width] in sums) over the rows routed to it by `ids`, and its row
   * count in counts[e] (u32).
   */
  squareSumsMoe(a: SquareSumsMoeArgs): Dispatch {
    const u = this.uniform(SquareSumMoeUniform, {
      width: a.width,
      stride: a.stride ?? a.width,
      experts: a.experts,
      used: a.used,
      per_pair: a.perPair ? 1 : 0,
    });
    const buffers = [u, a.step.buffer, a.x, a.ids, a.sums, a.counts];
    return this.dispatch('square_sums_moe.wgsl', 'square_sums_moe', buffers, a.step, () =>
      threads(a.width * a.experts, 64),
    );
  }

  /** Softmax over each token's router logits, its top `used` experts and their weights (shaders/moe.wgsl). */
  moeRoute(a: MoeRouteArgs): Dispatch {
    const u = this.moeUniform(a.experts, a.used, {
      norm: a.norm ? 1 : 0,
      gating: a.gating === 'softmax_weight' ? 1 : 0,
    });
    return this.dispatch('moe.wgsl', 'moe_route', [u, a.step.buffer, a.logits, a.ids, a.weights], a.step, (n) => [
      n,
      1,
    ]);
  }

  /** The batch's (token, expert) pairs grouped by expert into the routing table, on one workgroup. */
  moeGroup(a: MoeGroupArgs): Dispatch {
    const u = this.moeUniform(a.experts, a.used, { tile: a.tile, pairs_at: a.pairsAt });
    return this.dispatch('moe.wgsl', 'moe_group', [u, a.step.buffer, null, a.ids, null, a.table], a.step, () => [1, 1]);
  }

  /** x += Σ weight · expert output over each token's pairs (plus a gated shared expert). */
  moeCombine(a: MoeCombineArgs): Dispatch {
    const u = this.moeUniform(0, a.used, { width: a.width });
    const buffers = [
      u,
      a.step.buffer,
      null,
      null,
      a.weights,
      null,
      a.x,
      a.down,
      a.shared?.out ?? null,
      a.shared?.gate ?? null,
    ];
    const entry = a.shared ? 'moe_combine_shared' : 'moe_combine';
    return this.dispatch('moe.wgsl', entry, buffers, a.step, (n) => threads(n * a.width, 64));
  }

  /** Each pair's row += its expert's bias row (gpt-oss's expert biases). */
  moeAddBias(a: MoeAddBiasArgs): Dispatch {
    const u = this.moeUniform(0, a.used, { width: a.width });
    const buffers = [u, a.step.buffer, null, a.ids, null, null, null, null, null, null, a.rows, a.bias];
    return this.dispatch('moe.wgsl', 'moe_add_bias', buffers, a.step, (n) => threads(n * a.used * a.width, 64));
  }

  /**
   * Picks the next token from `logits` into out[0] and appends it to the penalty ring. `path`
   * must be samplerPath() of the parameters written to a.params. `masked`: only among the tokens
   * a.mask allows.
   */
  sample(a: SampleArgs, path: SamplerPath, masked = false): Dispatch {
    if (masked && !a.mask) throw new Error('sample: a masked draw needs the mask buffer');
    // Greedy draws nothing at random: its entry point has no step binding.
    const buffers = [
      a.params,
      path === 'greedy' ? null : a.step.buffer,
      a.logits,
      a.work,
      a.state,
      a.out,
      masked ? a.mask! : null,
    ];
    return this.dispatch('sample.wgsl', `sample_${path}${masked ? '_masked' : ''}`, buffers, a.step, () => [1, 1]);
  }

  /** Writes the params' nLogprobs best (id, log-probability) pairs of the raw logits into out[2..], their log-sum-exp into out[1] (for the draw after it). */
  topLogprobs(a: Pick<SampleArgs, 'logits' | 'out' | 'params' | 'step'>): Dispatch {
    return this.dispatch('sample.wgsl', 'top_logprobs', [a.params, null, a.logits, null, null, a.out], a.step, () => [
      1, 1,
    ]);
  }

  /** Frees the uniform buffers the factories made (pipelines are garbage-collected). */
  destroy(): void {
    for (const b of [...this.uniforms, ...this.scratchBuffers]) b.destroy();
    this.uniforms.length = 0;
    this.scratchBuffers.length = 0;
    this.splitScratch = null;
  }

  private attentionUniform(
    nHead: number,
    nKvHead: number,
    headDim: number,
    scale: number,
    qStride: number,
    kvStride: number,
    rope: RopeSpec,
    o: {
      inStride: number;
      qkOffset: number;
      vOffset?: number;
      window?: number;
      softcap?: number;
      headBlock?: number;
      kOffset?: number;
      kvHead0?: number;
    },
  ): GPUBuffer {
    if (headDim % 2 !== 0) throw new Error(`head size ${headDim}: must be even`);
    if (rope.nRot % 2 !== 0 || rope.nRot > headDim) throw new Error(`RoPE over ${rope.nRot} of ${headDim} dimensions`);
    const softcap = o.softcap ?? 0;
    return this.uniform(AttentionUniform, {
      nHead,
      nKvHead,
      headDim,
      scale,
      qStride,
      kvStride,
      nRot: rope.nRot,
      neox: rope.neox ? 1 : 0,
      inStride: o.inStride,
      qkOffset: o.qkOffset,
      vOffset: o.vOffset ?? 0,
      kOffset: o.kOffset ?? 0,
      window: o.window ?? 0,
      softcap,
      invSoftcap: softcap ? Math.fround(1 / softcap) : 0,
      headBlock: o.headBlock ?? 0,
      kvHead0: o.kvHead0 ?? 0,
    });
  }

  /** MoeUniform: the fields an entry point does not read are 0. */
  private moeUniform(experts: number, used: number, o: Partial<UniformValues<typeof MoeUniform.fields>>): GPUBuffer {
    return this.uniform(MoeUniform, { norm: 0, width: 0, tile: 0, pairs_at: 0, gating: 0, ...o, experts, used });
  }

  /** ElementwiseUniform: `rows` fixes the row count (default: the batch's tokens); a, b: the op's constants. */
  private elementwise(
    entry: string,
    x: BufferArg,
    y: GPUBuffer | null,
    width: number,
    step: Step,
    o: { rows?: number; a?: number; b?: number } = {},
    constants?: Record<string, number>,
  ): Dispatch {
    const u = this.uniform(ElementwiseUniform, { width, rows: o.rows ?? 0, a: o.a ?? 0, b: o.b ?? 0 });
    const grid = (n: number) => threads((o.rows ?? n) * width, 64);
    return this.dispatch('elementwise.wgsl', entry, [u, x, y, step.buffer], step, grid, constants);
  }

  private uniform<F extends UniformFields>(struct: UniformStruct<F>, values: UniformValues<F>): GPUBuffer {
    const data = struct.pack(values);
    const buffer = this.device.createBuffer({
      size: data.byteLength,
      usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
    });
    this.device.queue.writeBuffer(buffer, 0, data);
    this.uniforms.push(buffer);
    return buffer;
  }

  private pipeline(
    file: string,
    entry: string,
    constants: Record<string, number> = {},
    defines: Defines = {},
  ): GPUComputePipeline {
    const key = `${file}:${entry}:${JSON.stringify(constants)}:${JSON.stringify(defines)}`;
    let pipeline = this.pipelines.get(key);
    if (!pipeline) {
      const code = shaderSource(file, defines, this.shaders);
      pipeline = pipelineCache(this.device).get({
        label: `${file}:${entry}`,
        code,
        entryPoint: entry,
        layout: 'auto',
        layoutKey: 'auto',
        constants,
      });
      this.pipelines.set(key, pipeline);
    }
    return pipeline;
  }

  /**
   * Binds `buffers` to bindings 0.. (null: a binding this entry point does not use); the
   * workgroup grid follows the step (its token count and position) at encode time. `defines`:
   * the source's {{NAME}}s; `readBytes`: what a dispatch reads, for the profile (dispatch-profile.ts).
   */
  private dispatch(
    file: string,
    entry: string,
    buffers: (BufferArg | null)[],
    step: Step,
    grid: (tokens: number, pos0: number) => Grid,
    constants?: Record<string, number>,
    o: { defines?: Defines; readBytes?: () => number } = {},
  ): Dispatch {
    const { readBytes } = o;
    const bind = () => {
      const pipeline = this.pipeline(file, entry, constants, o.defines);
      const entries: GPUBindGroupEntry[] = [];
      buffers.forEach((buffer, binding) => {
        if (buffer) entries.push({ binding, resource: 'buffer' in buffer ? buffer : { buffer } });
      });
      const bindGroup = this.device.createBindGroup({
        label: `${file}:${entry}`,
        layout: pipeline.getBindGroupLayout(0),
        entries,
      });
      if (readBytes) noteReadBytes(bindGroup, readBytes);
      return { pipeline, bindGroup };
    };
    // Compiled at the first encode (ModelUse): a load to evaluate never compiles the decode-only kernels.
    let bound: ReturnType<typeof bind> | undefined;
    return {
      encode(pass) {
        bound ??= bind();
        const [x, y] = grid(step.tokens, step.pos0);
        if (x === 0 || y === 0) return;
        pass.setPipeline(bound.pipeline);
        pass.setBindGroup(0, bound.bindGroup);
        pass.dispatchWorkgroups(x, y);
      },
    };
  }
}
