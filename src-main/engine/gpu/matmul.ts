/**
 * Weight kernels for the forward pass: y = W·x (mat-vec for decode, mat-mat for prefill) and the
 * embedding row lookup, for every type in weights.ts, decoding W's blocks in registers.
 *
 * Everything is built ahead of the decode loop: pipelines once per (kernel, type), and for each
 * call of matmul()/embedding() a Dispatch with its uniform buffers and bind groups, which the loop
 * only encodes. The token count can change without rebuilding: `setTokens(n)` writes the uniform
 * (queue.writeBuffer) and the next encode() sizes the dispatch for it; call it before encoding a
 * submission, and don't encode one Dispatch with two different counts into the same submission
 * (the last write wins for all of it).
 *
 * Buffers: x, y, ids and out are bound whole (each must be a STORAGE buffer no larger than the
 * binding limit); y/out must not be the buffer bound as x/ids (WebGPU forbids a writable binding
 * aliasing another binding of the same dispatch). Offsets and strides are in elements (f32 or u32).
 *
 * Mixture of experts: matmulExperts() multiplies each routed (token, expert) pair by its expert's
 * matrix in a stacked tensor, reading the routing table that moe.wgsl's moe_group builds on the
 * GPU (routingTable() gives its layout), so the chosen experts never come back to the CPU and only
 * their blocks are read.
 */
import type { GpuInfo, KernelShapes } from '../../engine-wire/protocol';
import type { GpuContext } from './device';
import { noteReadBytes } from './dispatch-profile';
import type { Dispatch } from './ops';
import { shaderSource } from './shader-source';
import { pipelineCache, type PipelineRequest } from './pipeline-cache';
import { WeightUniform } from './kernel-uniforms';
import type { UniformValues } from './uniforms';
import { MATVEC_THREAD_ROWS, cpuLanes, cpuRowLoop, rowGroupDefines, rowGroupsFor } from './row-groups';
import type { GpuWeight, GpuWeightPart } from './weights';

export interface TokenDispatch extends Dispatch {
  /** Tokens the next encode() covers (written to the uniforms now, through the queue). */
  setTokens(n: number): void;
  readonly tokens: number;
}

export interface MatmulOptions {
  /** Element offset of token 0's vector in x (default 0). */
  xOffset?: number;
  /** Element offset of token 0's output in y (default 0). */
  yOffset?: number;
  /** Elements between consecutive tokens in x (default: cols). */
  xStride?: number;
  /** Elements between consecutive tokens in y (default: rows). */
  yStride?: number;
  /** y += W·x instead of y = W·x (e.g. the residual add after attn_output / ffn_down). */
  accumulate?: boolean;
  /**
   * The mat-vec only: x is made from what the x buffer holds as it is loaded (XPrologue); one
   * token, or for the GLU's a batched decode step's 2–4 (MatmulKernels.batchMatvec).
   */
  prologue?: XPrologue;
  /**
   * One token only, on the GPU shapes, of a weight uploaded in gate|up row pairs (GpuWeight.gluPairs):
   * y = act(gate)·up, n_ff outputs from y's start, as OpKernels.glu makes them from the rows, bit for bit.
   */
  glu?: GluAct;
}

/** The GLU's activations (glu-act.wgsl). */
export type GluAct = 'silu' | 'gelu';

/**
 * What a mat-vec makes its x from (weight-io.wgsl), saving the dispatch of the op apart:
 *   norm: RMSNorm of the x buffer's vector times the weight `norm`, as OpKernels.rmsNorm, bit for bit;
 *   glu:  act(gate)·up of a gate|up row (up `cols` after gate), as OpKernels.glu, bit for bit.
 */
export type XPrologue = { norm: GPUBuffer; eps: number } | { glu: GluAct };

export interface EmbeddingOptions {
  /** Index of the first id in `ids` (default 0). */
  idsOffset?: number;
  /** Element offset of token 0's row in out (default 0). */
  outOffset?: number;
  /** Elements between consecutive tokens' rows in out (default: cols). */
  outStride?: number;
}

export interface ExpertMatmulOptions {
  /** Experts each token is routed to (pairs per token). */
  used: number;
  /** Pairs per x vector: `used` when x holds one vector per token (gate, up), 1 for one per pair (down). */
  xGroup: number;
  /**
   * Rows computed per expert, from row `first` of its matrix (default: all its rows): a merged
   * gate_up tensor's gate half is { first: 0, count: n_ff }, its up half { first: n_ff, count: n_ff }.
   */
  rows?: { first: number; count: number };
}

export interface KernelOptions {
  /**
   * Use subgroup reductions where the device has them (the `subgroups` feature and WGSL's
   * `subgroup_id`; default true); false forces the shared-memory path.
   */
  subgroups?: boolean;
  /**
   * Kernel shapes for an adapter that runs on the CPU (threads own whole rows; prefill through
   * matmat.wgsl) rather than a GPU's (threads share rows and reduce). Default: the adapter's
   * `cpuShapes` (a fallback adapter such as lavapipe or SwiftShader, unless GUFO_KERNEL_SHAPE says otherwise).
   */
  cpuShapes?: boolean;
  /**
   * Prefill's kernel, for benchmarks: on a GPU 'matmat' (matmul.wgsl's, x reread per row) instead
   * of the default 'wgtiled'. Default: cpuShapes' ('tiled' or 'wgtiled').
   */
  prefill?: 'tiled' | 'wgtiled' | 'matmat';
  /**
   * The GPU mat-vec stages x in workgroup memory (weight-io.wgsl's stage_x) where the device's
   * workgroup storage holds it; false reads x straight from its buffer in every thread (for tests:
   * the two give the same bits). Default true.
   */
  xStage?: boolean;
  /**
   * The GPU mat-vec of the INT_DOT_TYPES takes x as q8_1 and dots integer codes (dot4I8Packed)
   * where the adapter has WGSL's packed_4x8_integer_dot_product. Default: GUFO_INT_DOT, on unless 0.
   */
  intDot?: boolean;
  /**
   * Steps of 2–4 tokens (a batched decode step's rows, one per slot) through the decode mat-vec,
   * each row's weights read once for all of them, rather than TILED, whose 16-token tile would do
   * 4–8× their work: for models with several slots, on a CPU adapter whose decode steps loop over
   * rows (lavapipe; SwiftShader's SMALL_TILED is 4 tokens already). Default false, so a single-slot
   * model compiles no more kernels than before.
   */
  batchedDecode?: boolean;
}

/**
 * Threads, rows and tokens per workgroup of a matmul variant; threadRows: the rows each thread
 * owns alone (its sums never leave it), or 0 where the workgroup's threads share its rows,
 * striding over the units, and reduce.
 */
export interface KernelShape {
  readonly wg: number;
  readonly rows: number;
  readonly tokens: number;
  readonly threadRows: number;
}
const MATMAT: KernelShape = { wg: 64, rows: 4, tokens: 8, threadRows: 0 };
/**
 * The prefill kernel on a GPU (matmat-tiled.wgsl): a workgroup's 64 threads stage 64 rows' decoded
 * units and 32 tokens' x in workgroup memory (13.5 KiB of the 16 KiB default), each thread then
 * accumulating 4 rows × 8 tokens: a decoded value serves 32 tokens, an x value 64 rows.
 */
const GPU_TILED = { wg: 64, rows: 64, tokens: 32, threadRows: 0, tileRows: 4, tileTokens: 8 } as const;
/**
 * The prefill kernel on a CPU adapter (matmat.wgsl), for every n > 1 of matmul(): each thread owns 8 rows, WG
 * apart, and decodes their units once for a tile of 16 tokens (measured on lavapipe: 3–7× the
 * mat-mat kernel of matmul.wgsl from 4 to 64 tokens).
 */
const TILED: KernelShape = { wg: 32, rows: 32 * 8, tokens: 16, threadRows: 8 };
/** Tokens of a batched decode step's mat-vec (KernelOptions.batchedDecode): one per slot, up to 4. */
const BATCH_TOKENS = 4;
/**
 * The prefill kernel on a CPU adapter without shader-f16 (SwiftShader): matmat.wgsl's SMALL_TILE,
 * 4 rows × 4 tokens per thread in named values, 4 threads (its SIMD width): 1.2–1.3× TILED's
 * speed there for Q4_K and Q8_0, about even for Q6_K.
 */
const SMALL_TILED: KernelShape = { wg: 4, rows: 4 * 4, tokens: 4, threadRows: 4 };
export { MATVEC_THREAD_ROWS };
/** Workgroups per dimension used before wrapping into y (WebGPU guarantees 65535). */
export const MAX_GROUPS_X = 32768;

/**
 * weight-io.wgsl's x broadcast over a subgroup of `lanes` (0: none): X_LANES, and X_LOADS, the
 * vec4 loads each lane makes of a unit's 8.
 */
function xLaneDefines(lanes: number): { X_LANES: number; X_LOADS: number } {
  return { X_LANES: lanes, X_LOADS: lanes > 0 ? 8 / lanes : 0 };
}

/**
 * The decode kernel's shape. On a CPU adapter: MATVEC_THREAD_ROWS rows per thread, as many
 * threads as the adapter's subgroup where that size is fixed (lavapipe 8, SwiftShader 4: one SIMD
 * register of lanes), else 64, and `tokens` tokens (a batched decode step's, up to BATCH_TOKENS).
 * On a GPU: gpuMatvecShape's threads (64, or the vendor's) share 4 rows, reading neighbouring
 * blocks side by side (coalesced), and enough workgroups to fill every compute unit (a 4096-row
 * matrix: 1024).
 */
function matvecShape(info: GpuInfo, cpu: boolean, tokens = 1): KernelShape {
  if (!cpu) return { ...gpuMatvecShape(info), tokens: 1, threadRows: 0 };
  const wg = cpuLanes(info);
  return { wg, rows: wg * MATVEC_THREAD_ROWS, tokens, threadRows: MATVEC_THREAD_ROWS };
}

/**
 * The GPU decode mat-vec's threads and rows a workgroup, by the adapter's vendor (GpuInfo.vendor):
 * starting points from each architecture's SIMD width, to be measured by the device kit (which
 * prints the shape that ran). 64 threads are two 32-lane warps or SIMD groups (NVIDIA, Apple), one
 * wave64 or two wave32 (AMD), a whole subgroup or more of Intel's 8–32 lanes; Intel takes 32, so
 * a 2048-column row (64 units) keeps all its threads busy on a 2-unit step rather than half.
 * Every shape keeps the staged x (2 · threads units) within 16 KiB.
 */
export const GPU_MATVEC_SHAPES: Readonly<Record<string, { wg: number; rows: number }>> = {
  nvidia: { wg: 64, rows: 4 },
  amd: { wg: 64, rows: 4 },
  apple: { wg: 64, rows: 4 },
  intel: { wg: 32, rows: 4 },
};
const GPU_MATVEC_DEFAULT = { wg: 64, rows: 4 };

/**
 * The GPU mat-vec's shape on this adapter: GUFO_MATVEC_SHAPE=THREADSxROWS (e.g. 32x4, for the
 * device kit to try another), else GPU_MATVEC_SHAPES' for its vendor, else 64 threads × 4 rows.
 */
export function gpuMatvecShape(info: GpuInfo): { wg: number; rows: number; tunedFor: string } {
  const forced = process.env.GUFO_MATVEC_SHAPE;
  if (forced) {
    const m = /^(\d+)x(\d+)$/.exec(forced);
    const wg = Number(m?.[1]);
    const rows = Number(m?.[2]);
    // Threads: a power of two from 8 (reductions halve; subgroups hold 4 or more); rows even (gate|up pairs).
    if (!m || !(wg >= 8 && wg <= 256 && (wg & (wg - 1)) === 0) || !(rows >= 2 && rows <= 16 && rows % 2 === 0))
      throw new Error(
        `GUFO_MATVEC_SHAPE=${forced}: expected THREADSxROWS, threads a power of two 8–256, rows even 2–16`,
      );
    return { wg, rows, tunedFor: 'GUFO_MATVEC_SHAPE' };
  }
  const vendor = info.vendor.toLowerCase();
  const shape = GPU_MATVEC_SHAPES[vendor];
  return shape ? { ...shape, tunedFor: vendor } : { ...GPU_MATVEC_DEFAULT, tunedFor: 'default' };
}

/**
 * The types whose GPU mat-vec has an integer step (matmul.wgsl's INT_DOT: x quantized to q8_1 once,
 * the codes dotted four bytes at a time, as llama.cpp's mul_mat_vecq): the K-quants, Q4_0, Q8_0.
 */
export const INT_DOT_TYPES: ReadonlySet<string> = new Set(['Q8_0', 'Q4_0', 'Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K']);

/** GUFO_INT_DOT=0 turns the integer mat-vec off (unset or 1: on where the adapter can). */
function intDotAllowed(): boolean {
  const s = process.env.GUFO_INT_DOT;
  if (s === undefined || s === '' || s === '1') return true;
  if (s === '0') return false;
  throw new Error(`GUFO_INT_DOT=${s} is not 0 or 1`);
}

/** Bytes of one q8_1 block of x as XQ holds it (weight-io.wgsl's XQ_VEC4S): 8 words of codes, d, s, 2 spare. */
const XQ_BLOCK_BYTES = 48;

/** Units of x the GPU mat-vec stages at a time: one pass of its threads over units, at 2 units a step (MV_UNITS ≤ 2). */
function xStageUnits(wg: number): number {
  return 2 * wg;
}

/**
 * Workgroup memory the GPU mat-vec needs with x staged: the stage (32 f32 a unit), the sums'
 * shared array (one slot a thread at most, without subgroups), the GLU's row sums and the norm
 * prologue's 128 partial sums.
 */
function stagedMatvecBytes(wg: number, rows: number): number {
  return xStageUnits(wg) * 32 * 4 + rows * wg * 4 + rows * 4 + 128 * 4;
}
const EMBED_WG = 64;
/** The values of one part's WeightUniform, by field. */
type WeightParams = UniformValues<typeof WeightUniform.fields>;
/** WeightUniform's expert fields, for the kernels that are not the expert matmul. */
const NOT_EXPERTS = { expert_rows: 0, expert_row0: 0, x_group: 0 } as const;

/** (token, expert) pairs per tile of the expert matmul: the mat-mat kernel's token tile. */
export const EXPERT_TILE = MATMAT.tokens;

/**
 * Most tiles `tokens` tokens routed to `used` of `experts` experts each can make (the expert
 * matmul's dispatch covers that many; moe_group writes how many there are): each expert's pairs
 * are cut into tiles of EXPERT_TILE, so at most EXPERT_TILE − 1 pairs short per expert used.
 */
export function maxExpertTiles(tokens: number, used: number, experts: number): number {
  const pairs = tokens * used;
  return Math.min(pairs, Math.floor((pairs + (EXPERT_TILE - 1) * Math.min(experts, pairs)) / EXPERT_TILE));
}

/**
 * The routing table's layout for up to maxTokens tokens (u32 words): [0] the tile count, then
 * the tiles (3 words each: expert, first pair entry, pairs) from word 4, then the pair entries
 * from word pairsAt.
 */
export function routingTable(maxTokens: number, used: number, experts: number): { words: number; pairsAt: number } {
  const pairsAt = 4 + 3 * maxExpertTiles(maxTokens, used, experts);
  return { words: pairsAt + maxTokens * used, pairsAt };
}

/** One compiled form of the weight kernel. */
interface Variant {
  /**
   * matvec (one token), batchvec (the mat-vec for 2–4 tokens, KernelOptions.batchedDecode), matmat
   * (token tiles), tiled (prefill on a CPU adapter, matmat.wgsl), wgtiled (prefill on a GPU,
   * matmat-tiled.wgsl) or embedding (rows looked up by token id).
   */
  kernel: 'matvec' | 'batchvec' | 'matmat' | 'tiled' | 'wgtiled' | 'embedding';
  /** x read as vec4s. */
  vec4?: boolean;
  /** Routed pairs of a stacked expert tensor. */
  experts?: boolean;
  /** The mat-vec's x prologue (XPrologue): RMS-normalized, or a gated activation of it. */
  prologue?: 'norm' | GluAct;
  /** The mat-vec's GLU epilogue (MatmulOptions.glu): act(gate)·up of each gate|up row pair. */
  glu?: GluAct;
  /** The GPU mat-vec's integer steps (INT_DOT): x as q8_1 (binding 7), written by quantize_x first. */
  intDot?: boolean;
}

/** A variant's name in pipeline labels and cache keys, e.g. "matvec4-norm". */
function variantName(v: Variant): string {
  return `${v.kernel}${v.vec4 ? '4' : ''}${v.experts ? '-experts' : ''}${v.prologue ? `-${v.prologue}` : ''}${v.glu ? `-y${v.glu}` : ''}${v.intDot ? '-q8' : ''}`;
}

function prologueKind(p: XPrologue | undefined): Variant['prologue'] {
  if (!p) return undefined;
  return 'norm' in p ? 'norm' : p.glu;
}

/** An f32's bits, as the WGSL literal of a u32. */
function f32Bits(v: number): string {
  return `0x${new Uint32Array(Float32Array.of(v).buffer)[0]!.toString(16)}`;
}

/** One part of a weight, bound: its bind group and its WeightUniform buffer. */
interface BoundPart {
  part: GpuWeightPart;
  group: GPUBindGroup;
  /** The integer mat-vec's group: `group`'s buffers and x as q8_1 (binding 7). */
  intGroup?: GPUBindGroup;
  /**
   * quantize_x's group (part 0 only): intGroup's buffers in a group of its own, so that the profile
   * does not count the weight bytes noted for intGroup against quantize_x, which reads only x.
   */
  quantizeGroup?: GPUBindGroup;
  uniform: GPUBuffer;
}

/** The WeightUniform fields that follow from the weight and its part, the same for every kernel. */
function partParams(weight: GpuWeight, part: GpuWeightPart, n: number) {
  return {
    cols: weight.cols,
    n,
    units: Math.ceil(weight.cols / 32),
    blocks_per_row: weight.cols / weight.type.blockSize,
    scale_word: part.scaleWord,
    row_start: part.rowStart,
    total_rows: weight.rows,
    part_rows: part.rows, // where its row groups end (w_block)
    glu_pairs: weight.gluPairs ? 1 : 0,
  };
}

export class MatmulKernels {
  readonly subgroups: boolean;
  /** Halves decoded by the adapter (WGSL f16) where it has shader-f16. */
  readonly f16: boolean;
  /** The decode kernel's shape on this adapter (matvecShape). */
  readonly matvec: KernelShape;
  /** The GPU mat-vec's integer steps for INT_DOT_TYPES (KernelOptions.intDot). */
  readonly intDot: boolean;
  /** Prefill's kernel for matmul(): matmat.wgsl's on a CPU adapter, matmat-tiled.wgsl's on a GPU. */
  readonly prefill: 'tiled' | 'wgtiled' | 'matmat';
  /** matmat.wgsl's shape on a CPU adapter: SMALL_TILED without shader-f16 (SwiftShader), else TILED. */
  readonly tiled: KernelShape;
  /** The mat-vec's shape for 2–4 tokens (KernelOptions.batchedDecode, where the decode steps loop over rows), else null. */
  readonly batchMatvec: KernelShape | null;
  /**
   * Whether a one-token step folds RMSNorm into the mat-vecs that read its output (the X_NORM
   * prologue): on a GPU. Not on a CPU adapter, where every workgroup's sum of squares, with its
   * barriers, cost more than the dispatch it saves (SwiftShader decode ×0.83;
   * `git show fec2e69:docs/performance.md`, "RMSNorm and the GLU folded into the decode mat-vecs").
   */
  readonly foldsNorm: boolean;
  /**
   * Units of x the GPU mat-vec stages in workgroup memory at a time (weight-io.wgsl's stage_x), or 0
   * where it reads x from its buffer: the CPU shapes (threads own rows; x's address is the same in
   * every thread), or a device whose workgroup storage is too small.
   */
  readonly xStage: number;
  /** Whose GPU mat-vec shape this is (gpuMatvecShape's tunedFor), or 'cpu' for the CPU shapes. */
  readonly matvecTunedFor: string;
  /** The decode steps loop over a thread's rows rather than unrolling them (cpuRowLoop; CPU shapes only). */
  readonly rowLoop: boolean;
  /**
   * The kernels of a CPU adapter (decode mat-vec, prefill tiles) load x a vec4 a lane and
   * broadcast it over the subgroup (weight-io.wgsl's x_unit with X_LANES), where the decode
   * workgroup is one subgroup of 4 or 8 lanes (lavapipe, SwiftShader): llvmpipe loads per lane even
   * where the address is the same in every lane, so loading the whole unit in every lane cost each
   * lane 8 loads instead of one.
   */
  readonly xLanes: boolean;
  private readonly device: GPUDevice;
  private readonly info: GpuInfo;
  private readonly layout: GPUBindGroupLayout;
  private readonly pipelineLayout: GPUPipelineLayout;
  /** The expert matmul's: the same plus the routing table at binding 4. */
  private readonly expertLayout: GPUBindGroupLayout;
  private readonly expertPipelineLayout: GPUPipelineLayout;
  /** The normalizing mat-vec's: the same plus the norm weight at binding 6. */
  private readonly normLayout: GPUBindGroupLayout;
  private readonly normPipelineLayout: GPUPipelineLayout;
  /** The integer mat-vec's (INT_DOT): the plain or normalizing layout plus x as q8_1 at binding 7. */
  private readonly intLayout: GPUBindGroupLayout;
  private readonly intPipelineLayout: GPUPipelineLayout;
  private readonly intNormLayout: GPUBindGroupLayout;
  private readonly intNormPipelineLayout: GPUPipelineLayout;
  private readonly pipelines = new Map<string, GPUComputePipeline>();

  constructor(ctx: GpuContext, options: KernelOptions = {}) {
    this.device = ctx.device;
    this.info = ctx.info;
    this.subgroups =
      ctx.hasSubgroups && ctx.info.wgslLanguageFeatures.includes('subgroup_id') && (options.subgroups ?? true);
    const cpu = options.cpuShapes ?? ctx.info.cpuShapes;
    this.matvec = matvecShape(ctx.info, cpu);
    this.matvecTunedFor = cpu ? 'cpu' : gpuMatvecShape(ctx.info).tunedFor;
    const stageFits =
      stagedMatvecBytes(this.matvec.wg, this.matvec.rows) <= ctx.device.limits.maxComputeWorkgroupStorageSize;
    this.xStage = !cpu && (options.xStage ?? true) && stageFits ? xStageUnits(this.matvec.wg) : 0;
    this.intDot =
      !cpu &&
      ctx.info.wgslLanguageFeatures.includes('packed_4x8_integer_dot_product') &&
      (options.intDot ?? intDotAllowed());
    this.prefill = options.prefill ?? (cpu ? 'tiled' : 'wgtiled');
    this.foldsNorm = !cpu;
    this.rowLoop = cpu && cpuRowLoop(ctx.info);
    const { subgroupMinSize, subgroupMaxSize } = ctx.info;
    this.xLanes =
      cpu &&
      ctx.hasSubgroups &&
      (options.subgroups ?? true) &&
      subgroupMinSize === subgroupMaxSize &&
      subgroupMinSize === this.matvec.wg &&
      8 % this.matvec.wg === 0;
    this.f16 = ctx.hasF16;
    this.tiled = this.f16 ? TILED : SMALL_TILED;
    this.batchMatvec = options.batchedDecode && this.rowLoop ? matvecShape(ctx.info, cpu, BATCH_TOKENS) : null;
    const entries: GPUBindGroupLayoutEntry[] = [
      { binding: 0, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
      { binding: 1, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
      { binding: 2, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } },
      { binding: 3, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'uniform' } },
      // The weights again, read 16 bytes at a time by the matmul kernels (matmul.wgsl's W4).
      { binding: 5, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
    ];
    this.layout = this.device.createBindGroupLayout({ label: 'weight kernel', entries });
    this.pipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [this.layout] });
    this.expertLayout = this.device.createBindGroupLayout({
      label: 'expert weight kernel',
      entries: [...entries, { binding: 4, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } }],
    });
    this.expertPipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [this.expertLayout] });
    this.normLayout = this.device.createBindGroupLayout({
      label: 'normalizing weight kernel',
      entries: [...entries, { binding: 6, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } }],
    });
    this.normPipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [this.normLayout] });
    const xq: GPUBindGroupLayoutEntry = { binding: 7, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'storage' } };
    this.intLayout = this.device.createBindGroupLayout({ label: 'integer weight kernel', entries: [...entries, xq] });
    this.intPipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [this.intLayout] });
    this.intNormLayout = this.device.createBindGroupLayout({
      label: 'normalizing integer weight kernel',
      entries: [
        ...entries,
        { binding: 6, visibility: GPUShaderStage.COMPUTE, buffer: { type: 'read-only-storage' } },
        xq,
      ],
    });
    this.intNormPipelineLayout = this.device.createPipelineLayout({ bindGroupLayouts: [this.intNormLayout] });
  }

  /** The WGSL of one kernel variant for one type (for tests and debugging); `normEps` for the norm prologue. */
  source(variant: Variant, typeName: string, normEps = 0): string {
    const type = typeName.toLowerCase();
    // The weights' layout on this adapter, as uploadWeights makes it.
    const layout = rowGroupDefines(rowGroupsFor(this.info, typeName));
    if (variant.kernel === 'embedding') return shaderSource('embedding.wgsl', { TYPE: type, WG: EMBED_WG, ...layout });
    if (variant.kernel === 'wgtiled') {
      return shaderSource('matmat-tiled.wgsl', {
        ...layout,
        TYPE: type,
        BM: GPU_TILED.rows,
        BN: GPU_TILED.tokens,
        TM: GPU_TILED.tileRows,
        TN: GPU_TILED.tileTokens,
        SHADER_F16: this.f16,
        MATVEC: false,
        W_VEC4: true,
        X_VEC4: variant.vec4 ?? false,
      });
    }
    if (variant.kernel === 'tiled') {
      return shaderSource('matmat.wgsl', {
        ...layout,
        TYPE: type,
        WG: this.tiled.wg,
        RT: this.tiled.threadRows,
        TT: this.tiled.tokens,
        SMALL_TILE: this.tiled === SMALL_TILED,
        ...xLaneDefines(this.xLanes ? this.matvec.wg : 0),
        SHADER_F16: this.f16,
        MATVEC: false,
        W_VEC4: true,
        X_VEC4: variant.vec4 ?? false,
      });
    }
    if (variant.kernel === 'batchvec' && !this.batchMatvec) throw new Error('these kernels have no batched mat-vec');
    const v = variant.kernel === 'batchvec' ? this.batchMatvec! : this.shape(variant.kernel === 'matvec' ? 1 : 2);
    return shaderSource('matmul.wgsl', {
      ...layout,
      TYPE: type,
      WG: v.wg,
      ROWS: v.threadRows || v.rows,
      TT: v.tokens,
      SUBGROUPS: this.subgroups && v.threadRows === 0,
      SHADER_F16: this.f16,
      MATVEC: v === this.matvec || v === this.batchMatvec,
      THREAD_ROWS: v.threadRows > 0,
      MV_ROW_END: this.rowLoop && v.threadRows > 0 ? 'rows' : 'ROWS',
      MV_PAIRS: this.rowLoop && v.threadRows > 0,
      ...xLaneDefines(v.threadRows > 0 && this.xLanes ? v.wg : 0),
      X_STAGE: v === this.matvec && this.xStage > 0,
      X_STAGE_F32: v === this.matvec && this.xStage > 0 && !variant.intDot,
      XS_UNITS: this.xStage,
      W_VEC4: true,
      X_VEC4: variant.vec4 ?? false,
      EXPERTS: variant.experts ?? false,
      X_NORM: variant.prologue === 'norm',
      X_GLU: variant.prologue === 'silu' || variant.prologue === 'gelu',
      Y_GLU: variant.glu !== undefined,
      INT_DOT: variant.intDot ?? false,
      XQ_VEC4S: XQ_BLOCK_BYTES / 16,
      GLU_ACT: variant.prologue === 'silu' || variant.prologue === 'gelu' || variant.glu !== undefined,
      GLU_GELU: variant.prologue === 'gelu' || variant.glu === 'gelu',
      NORM_EPS_BITS: f32Bits(normEps),
    });
  }

  /** The smallest token count of each kernel matmul() picks by count: [1, 2] or, with batchMatvec, [1, 2, 5]. */
  tokenSteps(): number[] {
    return this.batchMatvec ? [1, 2, this.batchMatvec.tokens + 1] : [1, 2];
  }

  /** What these kernels are, for bench's report. */
  shapes(): KernelShapes {
    const { wg, rows, threadRows } = this.matvec;
    return {
      family: threadRows > 0 ? 'cpu' : 'gpu',
      matvec: { workgroup: wg, rows, threadRows, xStaged: this.xStage > 0, tunedFor: this.matvecTunedFor },
      batchTokens: this.batchMatvec?.tokens ?? 0,
      prefill: this.prefill,
      subgroups: this.subgroups || this.xLanes,
      f16: this.f16,
      foldsNorm: this.foldsNorm,
      intDot: this.intDot,
    };
  }

  /** Whether matmul() runs `tokens` tokens through the batched mat-vec (a batched decode step's rows). */
  runsBatched(tokens: number): boolean {
    return tokens > 1 && this.batchMatvec !== null && this.shape(tokens, true) === this.batchMatvec;
  }

  /** The kernel shape that runs `tokens` tokens (of matmul with `tiled`, else of the expert matmul). */
  private shape(tokens: number, tiled = false): KernelShape {
    if (tokens === 1) return this.matvec;
    if (!tiled || this.prefill === 'matmat') return MATMAT;
    if (this.batchMatvec && tokens <= this.batchMatvec.tokens) return this.batchMatvec;
    return this.prefill === 'tiled' ? this.tiled : GPU_TILED;
  }

  /** The pipeline of one variant (its entry point `main`, or the integer mat-vec's `quantize_x`). */
  private pipeline(variant: Variant, typeName: string, normEps = 0, entryPoint = 'main'): GPUComputePipeline {
    const key = `${variantName(variant)}:${typeName}${variant.prologue === 'norm' ? `:${f32Bits(normEps)}` : ''}${entryPoint === 'main' ? '' : `:${entryPoint}`}`;
    let p = this.pipelines.get(key);
    if (!p) {
      p = pipelineCache(this.device).get(this.request(key, variant, typeName, normEps, entryPoint));
      this.pipelines.set(key, p);
    }
    return p;
  }

  /** What the device's pipeline cache compiles for one variant of one type. */
  private request(
    label: string,
    variant: Variant,
    typeName: string,
    normEps: number,
    entryPoint: string,
  ): PipelineRequest {
    const norm = variant.prologue === 'norm';
    const [layout, layoutKey] = variant.experts
      ? [this.expertPipelineLayout, 'experts']
      : variant.intDot
        ? norm
          ? [this.intNormPipelineLayout, 'int-norm']
          : [this.intPipelineLayout, 'int']
        : norm
          ? [this.normPipelineLayout, 'norm']
          : [this.pipelineLayout, 'weights'];
    return { label, code: this.source(variant, typeName, normEps), entryPoint, layout, layoutKey };
  }

  /**
   * y = W·x for n tokens: W is [rows × cols]; x holds n vectors of cols f32 (token t at element
   * xOffset + t·xStride); y receives n vectors of rows f32 (token t at yOffset + t·yStride).
   * With a prologue, n stays 1 (setTokens to another count throws at encode).
   */
  matmul(weight: GpuWeight, x: GPUBuffer, y: GPUBuffer, n: number, options: MatmulOptions = {}): TokenDispatch {
    const typeName = weight.type.name;
    const { prologue, glu } = options;
    // x made as it is loaded: by the mat-vec, the batched one's tokens included for the GLU's (X_NORM scales token 0's x).
    const prologueTokens = (tokens: number) =>
      tokens === 1 || (prologue !== undefined && 'glu' in prologue && this.runsBatched(tokens));
    if (prologue && !prologueTokens(n)) throw new Error(`${weight.name}: an x prologue is for one token, not ${n}`);
    if (glu && (n !== 1 || !weight.gluPairs || this.matvec.threadRows > 0 || options.accumulate)) {
      throw new Error(
        `${weight.name}: the GLU epilogue is for one token of gate|up row pairs on the GPU shapes, written (not added)`,
      );
    }
    const norm = prologue && 'norm' in prologue ? prologue : undefined;
    const params = (part: GpuWeightPart): WeightParams => ({
      ...partParams(weight, part, n),
      rows: part.rows,
      x_offset: options.xOffset ?? 0,
      y_offset: options.yOffset ?? 0,
      y_stride: options.yStride ?? weight.rows,
      x_stride: options.xStride ?? weight.cols,
      accumulate: options.accumulate ? 1 : 0,
      ...NOT_EXPERTS,
    });
    // The integer mat-vec (one token): quantize_x writes x as q8_1 into a buffer of this product's own.
    const intDot = this.intDot && INT_DOT_TYPES.has(typeName);
    const units = Math.ceil(weight.cols / 32);
    const xq = intDot
      ? this.device.createBuffer({
          label: `${weight.name} x q8_1`,
          size: units * XQ_BLOCK_BYTES,
          usage: GPUBufferUsage.STORAGE,
        })
      : undefined;
    const bound = this.bindParts(weight, x, y, params, norm && { binding: 6, buffer: norm.norm }, xq);
    for (const b of bound) {
      noteReadBytes(b.group, b.part.bytes);
      if (b.intGroup) noteReadBytes(b.intGroup, b.part.bytes);
    }
    // x read as vec4s when every token vector starts on a 16-byte boundary and is whole vec4s long.
    const xStride = options.xStride ?? weight.cols;
    const vec4 = (options.xOffset ?? 0) % 4 === 0 && xStride % 4 === 0 && weight.cols % 4 === 0;
    const variant = (tokens: number): Variant => {
      if ((prologue && !prologueTokens(tokens)) || (glu && tokens !== 1)) {
        throw new Error(`${weight.name}: an x prologue or GLU epilogue is for one token, not ${tokens}`);
      }
      return {
        kernel: tokens === 1 ? 'matvec' : this.runsBatched(tokens) ? 'batchvec' : this.prefill,
        vec4,
        prologue: prologueKind(prologue),
        glu,
        intDot: intDot && tokens === 1,
      };
    };
    return this.tokenDispatch(bound, n, (pass, tokens) => {
      const v = this.shape(tokens, true);
      const kernel = variant(tokens);
      if (kernel.intDot) {
        // x as q8_1, once for every part (a block a thread).
        pass.setPipeline(this.pipeline(kernel, typeName, norm?.eps, 'quantize_x'));
        pass.setBindGroup(0, bound[0]!.quantizeGroup);
        pass.dispatchWorkgroups(Math.ceil(units / v.wg));
      }
      pass.setPipeline(this.pipeline(kernel, typeName, norm?.eps));
      for (const b of bound) {
        const groups = Math.ceil(b.part.rows / v.rows);
        if (groups === 0) continue;
        pass.setBindGroup(0, kernel.intDot ? b.intGroup! : b.group);
        const gx = Math.min(groups, MAX_GROUPS_X);
        pass.dispatchWorkgroups(gx, Math.ceil(groups / gx), Math.ceil(tokens / v.tokens));
      }
    });
  }

  /**
   * For each (token, expert) pair routed by `table` (routingTable() layout, written by moe_group
   * for the submission's tokens), y[pair] = W[expert] · x[pair / xGroup]: W is a stacked expert
   * tensor; x holds vectors of cols f32 (vector i at element i · cols), y vectors of the rows
   * computed (pair p at p · rows). `n` is the token count; setTokens() changes it.
   */
  matmulExperts(
    weight: GpuWeight,
    x: GPUBuffer,
    y: GPUBuffer,
    table: GPUBuffer,
    n: number,
    options: ExpertMatmulOptions,
  ): TokenDispatch {
    const typeName = weight.type.name;
    const expertRows = weight.rows / weight.experts;
    const rows = options.rows ?? { first: 0, count: expertRows };
    if (rows.first < 0 || rows.count < 1 || rows.first + rows.count > expertRows) {
      throw new Error(
        `${weight.name}: rows ${rows.first}..${rows.first + rows.count} are outside an expert's ${expertRows}`,
      );
    }
    const params = (part: GpuWeightPart): WeightParams => ({
      ...partParams(weight, part, n),
      rows: rows.count,
      x_offset: 0,
      y_offset: 0,
      y_stride: rows.count,
      x_stride: weight.cols,
      accumulate: 0,
      expert_rows: expertRows,
      expert_row0: rows.first,
      x_group: options.xGroup,
    });
    const bound = this.bindParts(weight, x, y, params, { binding: 4, buffer: table });
    const vec4 = weight.cols % 4 === 0;
    const variant = (tokens: number): Variant => ({ kernel: tokens === 1 ? 'matvec' : 'matmat', vec4, experts: true });
    return this.tokenDispatch(bound, n, (pass, tokens) => {
      const v = this.shape(tokens);
      const groups = Math.ceil(rows.count / v.rows);
      const gx = Math.min(groups, MAX_GROUPS_X);
      pass.setPipeline(this.pipeline(variant(tokens), typeName));
      // Every part sees every tile; those of experts it does not hold return at once.
      for (const b of bound) {
        pass.setBindGroup(0, b.group);
        pass.dispatchWorkgroups(gx, Math.ceil(groups / gx), maxExpertTiles(tokens, options.used, weight.experts));
      }
    });
  }

  /** out[t] = row ids[t] of W ([vocab rows × cols]) as f32, for n ids (u32 in `ids`). Ids past the table give zeros. */
  embedding(
    weight: GpuWeight,
    ids: GPUBuffer,
    out: GPUBuffer,
    n: number,
    options: EmbeddingOptions = {},
  ): TokenDispatch {
    const typeName = weight.type.name;
    const units = Math.ceil(weight.cols / 32);
    const params = (part: GpuWeightPart): WeightParams => ({
      ...partParams(weight, part, n),
      rows: part.rows,
      x_offset: options.idsOffset ?? 0,
      y_offset: options.outOffset ?? 0,
      y_stride: options.outStride ?? weight.cols,
      x_stride: 0,
      accumulate: 0,
      ...NOT_EXPERTS,
    });
    const bound = this.bindParts(weight, ids, out, params);
    return this.tokenDispatch(bound, n, (pass, tokens) => {
      pass.setPipeline(this.pipeline({ kernel: 'embedding' }, typeName));
      for (const b of bound) {
        pass.setBindGroup(0, b.group);
        pass.dispatchWorkgroups(Math.ceil(units / EMBED_WG), tokens);
      }
    });
  }

  /**
   * The TokenDispatch over `bound` starting at n tokens: setTokens() writes the count into every
   * part's uniform; encode() does nothing at 0 tokens, else hands the current count to `encode`.
   */
  private tokenDispatch(
    bound: readonly BoundPart[],
    n: number,
    encode: (pass: GPUComputePassEncoder, tokens: number) => void,
  ): TokenDispatch {
    const device = this.device;
    let tokens = n;
    const word = new Uint32Array(1);
    return {
      get tokens() {
        return tokens;
      },
      setTokens(count: number) {
        tokens = count;
        word[0] = count;
        for (const b of bound) device.queue.writeBuffer(b.uniform, WeightUniform.offsetOf('n'), word);
      },
      encode(pass) {
        if (tokens === 0) return;
        encode(pass, tokens);
      },
    };
  }

  private bindParts(
    weight: GpuWeight,
    input: GPUBuffer,
    output: GPUBuffer,
    params: (part: GpuWeightPart) => WeightParams,
    /** The routing table (binding 4) or the norm weight (binding 6). */
    extra?: { binding: 4 | 6; buffer: GPUBuffer },
    /** x as q8_1 (binding 7): also bind each part for the integer mat-vec. */
    xq?: GPUBuffer,
  ): BoundPart[] {
    return weight.parts.map((part, i) => {
      const uniform = this.device.createBuffer({
        label: `${weight.name}#${i} params`,
        size: WeightUniform.byteSize,
        usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
        mappedAtCreation: true,
      });
      WeightUniform.pack(params(part), uniform.getMappedRange());
      uniform.unmap();
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: part.buffer } },
        { binding: 1, resource: { buffer: input } },
        { binding: 2, resource: { buffer: output } },
        { binding: 3, resource: { buffer: uniform } },
        { binding: 5, resource: { buffer: part.buffer } },
      ];
      if (extra) entries.push({ binding: extra.binding, resource: { buffer: extra.buffer } });
      const layouts = { 4: this.expertLayout, 6: this.normLayout };
      const group = this.device.createBindGroup({
        label: `${weight.name}#${i}`,
        layout: extra ? layouts[extra.binding] : this.layout,
        entries,
      });
      const intGroupOf = (label: string) =>
        this.device.createBindGroup({
          label,
          layout: extra?.binding === 6 ? this.intNormLayout : this.intLayout,
          entries: [...entries, { binding: 7, resource: { buffer: xq! } }],
        });
      const intGroup = xq && intGroupOf(`${weight.name}#${i} q8_1`);
      const quantizeGroup = xq && i === 0 ? intGroupOf(`${weight.name} quantize x`) : undefined;
      return { part, group, intGroup, quantizeGroup, uniform };
    });
  }
}
