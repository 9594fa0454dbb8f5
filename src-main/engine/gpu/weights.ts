/**
 * Weight tensors from the memory-mapped GGUF file to GPU buffers, in their quantized blocks.
 *
 * Bytes go from the mapped file to the GPU a bounded chunk at a time (queue.writeBuffer, at most
 * `stagingBytes` between waits for the queue): the file is never read into the JS heap as a whole.
 *
 * Layouts on the GPU (the block decoders in shaders/quant/ read exactly these):
 * - Types whose blocks are a whole number of u32 words (F32, F16, BF16, Q4_1, Q5_1, Q2_K, Q4_K,
 *   Q5_K, IQ4_XS) are uploaded byte for byte.
 * - The others (Q4_0, Q5_0, Q8_0, IQ4_NL, MXFP4, Q3_K, Q6_K) are repacked, exactly and without any
 *   decoding: each block's scale field (the f16 d, or MXFP4's E8M0 byte) moves to a *scale plane*
 *   and the rest of the block, now a multiple of 4 bytes, stays in the *main plane*, in block
 *   order. One buffer holds both planes: main plane from byte 0, scale plane from word
 *   `scaleWord`. Resident bytes = file bytes + at most 6 bytes of padding per part.
 * - A tensor whose bytes exceed the binding limit is split on row boundaries into parts, each its
 *   own buffer (bound separately; the kernels run once per part). A stacked expert tensor
 *   [cols, rows, experts] is split on expert boundaries, so each expert's matrix lies in one part.
 * - Several matrices of one type and row length can be uploaded as one weight, their rows one after
 *   the other (a ConcatWeight: Q|K|V, gate|up), so a single matmul computes all of them.
 * - A GLU's gate|up (a ConcatWeight with `glu`, or one tensor holding both halves) goes up in row
 *   pairs on the GPU kernel shapes: row 2i is gate row i, row 2i + 1 up row i, so the workgroup
 *   that computes one computes the other and the decode mat-vec can write act(gate)·up (matmul.ts's
 *   `glu` epilogue); every other product writes its rows back in gate|up order. The weight says so
 *   in `gluPairs`; parts split on pair boundaries.
 * - On CPU adapters the K-quants' rows (main plane) are interleaved in row groups (row-groups.ts)
 *   for the decode kernel's lanes; the weight says so in `rowGroups`.
 */
import { ggmlType, type BlockFieldName, type GgmlType, type GgmlTypeName } from '../../core/ggml-types';
import type { GgufFile, GgufTensorInfo } from '../../core/gguf/gguf-file';
import type { BufferLimits, GpuContext } from './device';
import { rowGroupsFor, storedQuadOf, type RowGroups } from './row-groups';

/** Largest amount of tensor bytes handed to the queue between waits for it (the issue's ≤ 64 MiB). */
export const MAX_STAGING_BYTES = 64 * 2 ** 20;

/**
 * The types the GPU kernels decode (shaders/quant/<type>.wgsl), each uploaded as stored or
 * repacked with the named field of its block layout moved to the scale plane. Names and fields
 * are checked against the type table: a type or field that does not exist is a type error.
 */
const GPU_BLOCKS = {
  F32: 'as stored',
  F16: 'as stored',
  BF16: 'as stored',
  Q4_1: 'as stored',
  Q5_1: 'as stored',
  Q2_K: 'as stored',
  Q4_K: 'as stored',
  Q5_K: 'as stored',
  IQ4_XS: 'as stored',
  Q4_0: { scale: 'd' },
  Q5_0: { scale: 'd' },
  Q8_0: { scale: 'd' },
  IQ4_NL: { scale: 'd' },
  MXFP4: { scale: 'e' },
  Q3_K: { scale: 'd' },
  Q6_K: { scale: 'd' },
} as const satisfies { readonly [N in GgmlTypeName]?: 'as stored' | { readonly scale: BlockFieldName<N> } };

/** The type names GPU kernels exist for. */
export type GpuTypeName = keyof typeof GPU_BLOCKS;

/**
 * Repacked types: where the scale field sits in the file's block and how long it is (read from
 * the type's block layout). The rest of the block (typeSize − bytes, a multiple of 4) is the main
 * plane's share.
 */
export interface RepackLayout {
  /** Byte offset of the scale field within a block. */
  readonly scaleAt: number;
  /** Length of the scale field in bytes. */
  readonly scaleBytes: number;
}

function scaleField(name: GpuTypeName) {
  const how: 'as stored' | { readonly scale: string } = GPU_BLOCKS[name];
  return how === 'as stored' ? undefined : ggmlType(name).layout.find((f) => f.name === how.scale)!;
}

export const REPACK: Readonly<Record<string, RepackLayout>> = Object.fromEntries(
  (Object.keys(GPU_BLOCKS) as GpuTypeName[]).flatMap((name) => {
    const field = scaleField(name);
    return field ? [[name, { scaleAt: field.offset, scaleBytes: field.bytes }]] : [];
  }),
);

/**
 * The block layout of `type` in the main plane on the GPU, as WGSL defines for its decoder in
 * shaders/quant/: BLOCK_WORDS (u32 words per block) and W_<FIELD> (the word a field starts at)
 * for each field that starts on a word; the moved scale field is left out.
 */
export function gpuBlockDefines(type: GgmlType): Record<string, number> {
  const moved = supportsGpuType(type) ? scaleField(type.name as GpuTypeName) : undefined;
  const defines: Record<string, number> = {};
  let at = 0;
  for (const f of type.layout) {
    if (f === moved) continue;
    if (at % 4 === 0) defines[`W_${f.name.toUpperCase()}`] = at / 4;
    at += f.bytes;
  }
  if (at % 4 === 0) defines.BLOCK_WORDS = at / 4;
  return defines;
}

export class UnsupportedGpuTypeError extends Error {
  override readonly name = 'UnsupportedGpuTypeError';
  constructor(
    readonly tensor: string,
    readonly type: GgmlType,
  ) {
    super(`${tensor}: ${type.name} is not supported on GPU yet`);
  }
}

/** One buffer of a weight: rows [rowStart, rowStart + rows) of the tensor. */
export interface GpuWeightPart {
  readonly buffer: GPUBuffer;
  readonly rowStart: number;
  readonly rows: number;
  /** The buffer's size. */
  readonly bytes: number;
  /** First u32 word of the scale plane (repacked types; 0 otherwise). */
  readonly scaleWord: number;
}

export interface GpuWeight {
  readonly name: string;
  readonly type: GgmlType;
  /** ne[1] · ne[2] · ... */
  readonly rows: number;
  /** ne[2] of a stacked expert tensor [cols, rows, experts] (its rows are experts × ne[1]); 1 otherwise. */
  readonly experts: number;
  /** ne[0] */
  readonly cols: number;
  /** Bytes of the tensor in the file. */
  readonly fileBytes: number;
  /** Bytes of all its GPU buffers. */
  readonly residentBytes: number;
  /** Row ranges, in order, each in its own buffer; one part unless the tensor exceeds the binding limit. */
  readonly parts: readonly GpuWeightPart[];
  /** Each part's rows interleaved in these row groups (row-groups.ts); undefined: as stored. */
  readonly rowGroups?: RowGroups;
  /** Gate|up rows uploaded in pairs (gate i at row 2i, up i at 2i + 1); else in order. */
  readonly gluPairs?: boolean;
  /** Frees the GPU buffers. */
  destroy(): void;
}

/** One weight made of the rows of `tensors`, in order (all 2-D, of one type and row length). */
export interface ConcatWeight {
  readonly name: string;
  readonly tensors: readonly string[];
  /** The rows are a GLU's gate then its up, half each: uploaded in pairs where UploadOptions.gluPairs says. */
  readonly glu?: boolean;
}

/** What uploadWeights uploads: a tensor by name, or several concatenated. */
export type WeightSource = string | ConcatWeight;

export interface UploadOptions {
  /** Called after each chunk with the tensor bytes uploaded so far and the total of all `names`. */
  onProgress?: (done: number, total: number) => void;
  /** Largest buffer per part (default: the device's maxStorageBufferBindingSize, capped by maxBufferSize). */
  maxBindingSize?: number;
  /** Bytes handed to the queue between waits (default and maximum MAX_STAGING_BYTES). */
  stagingBytes?: number;
  /** Upload a ConcatWeight with `glu` in gate|up row pairs (default: on the GPU kernel shapes, not the adapter's `cpuShapes`). */
  gluPairs?: boolean;
}

export function supportsGpuType(type: GgmlType): boolean {
  return Object.hasOwn(GPU_BLOCKS, type.name);
}

const align4 = (n: number): number => Math.ceil(n / 4) * 4;

/** Geometry of a tensor on the GPU, before any buffer exists. */
export interface PartPlan {
  readonly rowStart: number;
  readonly rows: number;
  readonly bytes: number;
  readonly scaleWord: number;
}

/** Bytes of one part of `rows` rows of `rowBytes` each, and where its scale plane starts. */
function partGeometry(type: GgmlType, rows: number, blocksPerRow: number): { bytes: number; scaleWord: number } {
  const repack = REPACK[type.name];
  const blocks = rows * blocksPerRow;
  if (!repack) return { bytes: Math.max(4, align4(blocks * type.typeSize)), scaleWord: 0 };
  const main = blocks * (type.typeSize - repack.scaleBytes);
  return { bytes: main + Math.max(4, align4(blocks * repack.scaleBytes)), scaleWord: main / 4 };
}

/**
 * How a tensor of `rows` × `cols` is split into parts of at most `limit` bytes, each a whole
 * number of `rowGroup` rows (an expert's rows, for a stacked expert tensor).
 */
export function planParts(
  name: string,
  type: GgmlType,
  rows: number,
  cols: number,
  limit: number,
  rowGroup = 1,
): PartPlan[] {
  const blocksPerRow = cols / type.blockSize;
  const rowBytes = blocksPerRow * type.typeSize;
  // Padding of a part is at most 3 + 3 bytes (or the 4-byte minimum of an empty plane).
  const fit = Math.floor((limit - 8) / rowBytes);
  const rowsPerPart = Math.min(rows, fit - (fit % rowGroup));
  if (rowsPerPart < 1) {
    const what = rowGroup > 1 ? `one expert (${rowGroup * rowBytes} bytes)` : `one row (${rowBytes} bytes)`;
    throw new Error(`${name}: ${what} exceeds the GPU binding limit of ${limit} bytes`);
  }
  const parts: PartPlan[] = [];
  for (let rowStart = 0; rowStart < rows || parts.length === 0; rowStart += rowsPerPart) {
    const partRows = Math.min(rowsPerPart, rows - rowStart);
    parts.push({ rowStart, rows: partRows, ...partGeometry(type, partRows, blocksPerRow) });
  }
  return parts;
}

/**
 * Splits `count` blocks of the file (at `src`) into the two planes: main[] receives each block
 * without its scale field, scale[] the scale fields, both in block order.
 */
export function repackBlocks(
  type: GgmlType,
  src: Uint8Array,
  count: number,
  main: Uint8Array,
  scale: Uint8Array,
): void {
  const layout = REPACK[type.name];
  if (!layout) throw new Error(`${type.name} is not a repacked type`);
  const ts = type.typeSize;
  const { scaleAt, scaleBytes } = layout;
  if (
    scaleBytes === 2 &&
    ts % 2 === 0 &&
    scaleAt % 2 === 0 &&
    (src.byteOffset | main.byteOffset | scale.byteOffset) % 2 === 0
  ) {
    repackHalves(src, count, ts / 2, scaleAt / 2, main, scale);
    return;
  }
  const mainPer = ts - scaleBytes;
  const after = scaleAt + scaleBytes;
  for (let b = 0, o = 0, m = 0, s = 0; b < count; b++, o += ts, m += mainPer, s += scaleBytes) {
    for (let i = 0; i < scaleAt; i++) main[m + i] = src[o + i]!;
    for (let i = after, j = m + scaleAt; i < ts; i++, j++) main[j] = src[o + i]!;
    for (let i = 0; i < scaleBytes; i++) scale[s + i] = src[o + scaleAt + i]!;
  }
}

/** repackBlocks for a 2-byte scale field in blocks of whole 16-bit words, moved a word at a time. */
function repackHalves(
  src8: Uint8Array,
  count: number,
  words: number,
  at: number,
  main8: Uint8Array,
  scale8: Uint8Array,
): void {
  const src = new Uint16Array(src8.buffer, src8.byteOffset, count * words);
  const main = new Uint16Array(main8.buffer, main8.byteOffset, count * (words - 1));
  const scale = new Uint16Array(scale8.buffer, scale8.byteOffset, count);
  for (let b = 0, o = 0, m = 0; b < count; b++, o += words, m += words - 1) {
    for (let i = 0; i < at; i++) main[m + i] = src[o + i]!;
    scale[b] = src[o + at]!;
    for (let i = at + 1; i < words; i++) main[m + i - 1] = src[o + i]!;
  }
}

/** rowGroup: the rows that must stay in one part (an expert's, in a stacked tensor). */
function tensorShape(info: GgufTensorInfo): { rows: number; cols: number; experts: number; rowGroup: number } {
  const cols = info.ne[0] ?? 1;
  const rows = info.ne.slice(1).reduce((a, b) => a * b, 1);
  const stacked = info.ne.length === 3;
  return { rows, cols, experts: stacked ? info.ne[2]! : 1, rowGroup: stacked ? info.ne[1]! : 1 };
}

/** A weight to upload: its tensors' rows in order, and its geometry. */
interface Source {
  readonly name: string;
  readonly type: GgmlType;
  readonly tensors: readonly GgufTensorInfo[];
  readonly rows: number;
  readonly cols: number;
  readonly experts: number;
  readonly rowGroup: number;
  readonly fileBytes: number;
  /** Uploaded in gate|up row pairs (GpuWeight.gluPairs). */
  readonly pairs: boolean;
}

/** Checks a tensor: present, of a type the GPU decodes, rows of whole blocks. */
function checkedTensor(gguf: GgufFile, name: string): GgufTensorInfo {
  const info = gguf.tensor(name);
  if (!info) throw new Error(`${gguf.file}: no tensor named "${name}"`);
  if (!supportsGpuType(info.type)) throw new UnsupportedGpuTypeError(name, info.type);
  if (info.ne[0]! % info.type.blockSize !== 0) {
    throw new Error(
      `${name}: row length ${info.ne[0]} is not a multiple of ${info.type.name}'s block size ${info.type.blockSize}`,
    );
  }
  return info;
}

function source(gguf: GgufFile, what: WeightSource, gluPairs: boolean): Source {
  if (typeof what === 'string') {
    const info = checkedTensor(gguf, what);
    return { name: what, type: info.type, tensors: [info], ...tensorShape(info), fileBytes: info.bytes, pairs: false };
  }
  const infos = what.tensors.map((name) => checkedTensor(gguf, name));
  const first = infos[0];
  if (!first) throw new Error(`${what.name}: a concatenated weight needs at least one tensor`);
  for (const info of infos) {
    if (info.ne.length !== 2)
      throw new Error(`${what.name}: ${info.name} has ${info.ne.length} dimensions; only matrices are concatenated`);
    if (info.type !== first.type || info.ne[0] !== first.ne[0]) {
      throw new Error(
        `${what.name}: ${info.name} is ${info.type.name} with rows of ${info.ne[0]}, unlike ${first.name} (${first.type.name}, ${first.ne[0]})`,
      );
    }
  }
  const rows = infos.reduce((sum, info) => sum + info.ne[1]!, 0);
  const fileBytes = infos.reduce((sum, info) => sum + info.bytes, 0);
  const pairs = gluPairs && (what.glu ?? false);
  if (pairs && (rows % 2 !== 0 || (infos.length === 2 && infos[0]!.ne[1] !== infos[1]!.ne[1]) || infos.length > 2)) {
    throw new Error(`${what.name}: the gate and up halves of a GLU must have as many rows`);
  }
  return {
    name: what.name,
    type: first.type,
    tensors: infos,
    rows,
    cols: first.ne[0]!,
    experts: 1,
    rowGroup: pairs ? 2 : 1,
    fileBytes,
    pairs,
  };
}

/** A range of the file's bytes. */
interface FileRange {
  readonly start: number;
  readonly bytes: number;
}

/**
 * The file ranges holding rows [first, first + count) of a source as uploaded: its tensors' rows in
 * order, or, in gate|up pairs, row 2i gate row i and row 2i + 1 up row i (the second half's row i).
 */
function rowRanges(gguf: GgufFile, src: Source, first: number, count: number): FileRange[] {
  const rowBytes = (src.cols / src.type.blockSize) * src.type.typeSize;
  const ranges: FileRange[] = [];
  // The file ranges of rows [first, first + count) in the tensors' order.
  const add = (first: number, count: number) => {
    let row0 = 0;
    for (const info of src.tensors) {
      const rows = info.bytes / rowBytes;
      const from = Math.max(first, row0);
      const to = Math.min(first + count, row0 + rows);
      if (to > from)
        ranges.push({ start: gguf.dataOffset + info.offset + (from - row0) * rowBytes, bytes: (to - from) * rowBytes });
      row0 += rows;
    }
  };
  if (!src.pairs) add(first, count);
  else for (let r = first; r < first + count; r++) add((r % 2) * (src.rows / 2) + Math.floor(r / 2), 1);
  return ranges;
}

/** The weights' sources, checked, and each one's parts: what uploadWeights allocates, before it allocates. */
function planSources(
  limits: BufferLimits,
  gguf: GgufFile,
  names: readonly WeightSource[],
  maxBindingSize?: number,
  gluPairs = false,
): { sources: Source[]; plans: PartPlan[][] } {
  const unique = new Map(names.map((what) => [typeof what === 'string' ? what : what.name, what]));
  const sources = [...unique.values()].map((what) => source(gguf, what, gluPairs));
  const limit = Math.min(maxBindingSize ?? limits.maxStorageBufferBindingSize, limits.maxBufferSize);
  const plans = sources.map((src) => planParts(src.name, src.type, src.rows, src.cols, limit, src.rowGroup));
  return { sources, plans };
}

/** Bytes uploadWeights would allocate for `names` on a device of `limits` (its parts, padding included). */
export function plannedWeightBytes(limits: BufferLimits, gguf: GgufFile, names: readonly WeightSource[]): number {
  return planSources(limits, gguf, names)
    .plans.flat()
    .reduce((sum, p) => sum + p.bytes, 0);
}

/**
 * Uploads the named tensors (or concatenations of tensors). Every name is checked first (missing
 * tensor, type without GPU kernels: UnsupportedGpuTypeError; tensors that cannot be concatenated)
 * so nothing is allocated for a model that cannot run.
 */
export async function uploadWeights(
  ctx: GpuContext,
  gguf: GgufFile,
  names: readonly WeightSource[],
  options: UploadOptions = {},
): Promise<Map<string, GpuWeight>> {
  const { device } = ctx;
  const gluPairs = options.gluPairs ?? !ctx.info.cpuShapes;
  const { sources, plans } = planSources(device.limits, gguf, names, options.maxBindingSize, gluPairs);
  const staging = Math.max(4096, Math.min(options.stagingBytes ?? MAX_STAGING_BYTES, MAX_STAGING_BYTES));
  const total = sources.reduce((sum, t) => sum + t.fileBytes, 0);

  const uploader = new Uploader(device, staging, (bytes) => options.onProgress?.(bytes, total));
  const out = new Map<string, GpuWeight>();
  const created: GPUBuffer[] = [];
  try {
    for (const [i, src] of sources.entries()) {
      const blocksPerRow = src.cols / src.type.blockSize;
      const rowGroups = rowGroupsFor(ctx.info, src.type.name);
      const parts: GpuWeightPart[] = [];
      for (const [p, plan] of plans[i]!.entries()) {
        device.pushErrorScope('out-of-memory');
        const buffer = device.createBuffer({
          label: plans[i]!.length > 1 ? `${src.name}#${p}` : src.name,
          size: plan.bytes,
          usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST | GPUBufferUsage.COPY_SRC,
        });
        created.push(buffer);
        const oom = await device.popErrorScope();
        if (oom) {
          const resident = created.reduce((sum, b) => sum + b.size, 0);
          throw new Error(
            `${src.name}: out of GPU memory allocating ${plan.bytes} bytes (${resident} bytes of weights allocated): ${oom.message}`,
          );
        }
        const ranges = rowRanges(gguf, src, plan.rowStart, plan.rows);
        const order = rowGroups && { groups: rowGroups, blocksPerRow, rows: plan.rows };
        await uploader.part(gguf, src.type, buffer, ranges, plan.rows * blocksPerRow, plan.scaleWord * 4, order);
        parts.push({ buffer, rowStart: plan.rowStart, rows: plan.rows, bytes: plan.bytes, scaleWord: plan.scaleWord });
      }
      out.set(src.name, {
        name: src.name,
        type: src.type,
        rows: src.rows,
        cols: src.cols,
        experts: src.experts,
        fileBytes: src.fileBytes,
        residentBytes: parts.reduce((sum, p) => sum + p.bytes, 0),
        parts,
        ...(rowGroups && { rowGroups }),
        ...(src.pairs && { gluPairs: true }),
        destroy() {
          for (const p of parts) p.buffer.destroy();
        },
      });
    }
    await uploader.flush();
  } catch (err) {
    for (const b of created) b.destroy();
    throw err;
  }
  return out;
}

/** A part's rows to interleave in row groups: `rows` rows of `blocksPerRow` blocks. */
interface RowOrder {
  readonly groups: RowGroups;
  readonly blocksPerRow: number;
  readonly rows: number;
}

/** Streams file ranges into GPU buffers, waiting for the queue every `staging` bytes. */
class Uploader {
  private pending = 0;
  private done = 0;
  private scratch: Uint8Array<ArrayBuffer> | undefined;
  /** Where a chunk's rows are put in row groups. */
  private arranged: Uint8Array<ArrayBuffer> | undefined;
  /** The main plane of one row group in row order (the source of the chunks that fall in it), and which. */
  private group: { part: RowOrder; index: number; main: Uint8Array<ArrayBuffer> } | undefined;
  /** Where bytes spanning two file ranges are gathered. */
  private gathered: Uint8Array<ArrayBuffer> | undefined;

  constructor(
    private readonly device: GPUDevice,
    private readonly staging: number,
    private readonly progress: (done: number) => void,
  ) {}

  /**
   * Uploads `blocks` blocks of `type` from the file ranges, in order, into `buffer` (repacked if
   * the type needs it, its rows interleaved in row groups with `order`).
   */
  async part(
    gguf: GgufFile,
    type: GgmlType,
    buffer: GPUBuffer,
    ranges: readonly FileRange[],
    blocks: number,
    scaleByte: number,
    order?: RowOrder,
  ): Promise<void> {
    const repack = REPACK[type.name];
    const ts = type.typeSize;
    const queue = this.device.queue;
    if (!repack && !order) {
      const bytes = blocks * ts;
      const chunk = Math.floor(this.staging / 4) * 4;
      for (let at = 0; at < bytes; at += chunk) {
        const n = Math.min(chunk, bytes - at);
        await this.reserve(align4(n));
        let data = this.read(gguf, ranges, at, n) as Uint8Array<ArrayBuffer>;
        if (n % 4 !== 0) data = this.padded(data);
        queue.writeBuffer(buffer, at, data);
        this.written(n);
      }
      return;
    }
    // Whole blocks per chunk, a multiple of 4 of them so scale-plane offsets stay 4-byte aligned,
    // with room for the scale plane's padding.
    const scalePer = repack?.scaleBytes ?? 0;
    const chunkBlocks = Math.max(4, Math.floor((this.staging - 4) / ts / 4) * 4);
    const mainPer = ts - scalePer;
    for (let b = 0; b < blocks; b += chunkBlocks) {
      const n = Math.min(chunkBlocks, blocks - b);
      const mainBytes = n * mainPer;
      const scaleBytes = repack ? align4(n * scalePer) : 0;
      await this.reserve(mainBytes + scaleBytes);
      const src = this.read(gguf, ranges, b * ts, n * ts);
      let main = src;
      if (repack) {
        const scratch = this.buffer(mainBytes + scaleBytes);
        main = scratch.subarray(0, mainBytes);
        const scale = scratch.subarray(mainBytes, mainBytes + scaleBytes);
        scale.fill(0, n * scalePer);
        repackBlocks(type, src, n, main, scale);
        queue.writeBuffer(buffer, scaleByte + b * scalePer, scale);
      }
      const arranged = order && this.inRowGroups(gguf, type, ranges, main, b, n, order);
      queue.writeBuffer(buffer, b * mainPer, arranged ?? (main as Uint8Array<ArrayBuffer>));
      this.written(n * ts);
    }
  }

  /**
   * The main plane of blocks [first, first + n) of a part as uploaded in row groups: each quad of
   * the part's full groups from its place in row order (storedQuadOf), the rows after them as in
   * `main` (these blocks' main plane in row order).
   */
  private inRowGroups(
    gguf: GgufFile,
    type: GgmlType,
    ranges: readonly FileRange[],
    main: Uint8Array,
    first: number,
    n: number,
    order: RowOrder,
  ): Uint8Array<ArrayBuffer> {
    const quads = (type.typeSize - (REPACK[type.name]?.scaleBytes ?? 0)) / 16;
    const groupQuads = order.groups.lanes * order.groups.rows * order.blocksPerRow * quads;
    const groupedQuads = Math.floor(order.rows / (order.groups.lanes * order.groups.rows)) * groupQuads;
    const bytes = n * quads * 16;
    if (!this.arranged || this.arranged.byteLength < bytes) this.arranged = new Uint8Array(bytes);
    const out = new Uint32Array(this.arranged.buffer, 0, bytes / 4);
    const start = first * quads;
    const end = Math.min(start + n * quads, groupedQuads);
    // The rows after the groups first: reading a group may reuse the buffer `main` lies in.
    const rest = Math.max(0, end - start) * 16;
    this.arranged.set(main.subarray(rest, bytes), rest);
    for (let j = start; j < end;) {
      const index = Math.floor(j / groupQuads);
      const src = this.rowGroup(gguf, type, ranges, order, index);
      for (const stop = Math.min(end, (index + 1) * groupQuads); j < stop; j++) {
        const from = 4 * storedQuadOf(j - index * groupQuads, order.blocksPerRow, quads, order.groups);
        const to = 4 * (j - start);
        out[to] = src[from]!;
        out[to + 1] = src[from + 1]!;
        out[to + 2] = src[from + 2]!;
        out[to + 3] = src[from + 3]!;
      }
    }
    return this.arranged.subarray(0, bytes);
  }

  /** The main plane of row group `index` of a part in row order, as words (kept while chunks fall in it). */
  private rowGroup(
    gguf: GgufFile,
    type: GgmlType,
    ranges: readonly FileRange[],
    order: RowOrder,
    index: number,
  ): Uint32Array {
    const g = this.group;
    if (g?.part === order && g.index === index) return new Uint32Array(g.main.buffer, 0, g.main.byteLength / 4);
    const blocks = order.groups.lanes * order.groups.rows * order.blocksPerRow;
    const ts = type.typeSize;
    const repack = REPACK[type.name];
    const bytes = blocks * (ts - (repack?.scaleBytes ?? 0));
    const main = g && g.main.byteLength >= bytes ? g.main.subarray(0, bytes) : new Uint8Array(bytes);
    const src = this.read(gguf, ranges, index * blocks * ts, blocks * ts);
    if (repack) repackBlocks(type, src, blocks, main, new Uint8Array(blocks * repack.scaleBytes));
    else main.set(src);
    this.group = { part: order, index, main };
    return new Uint32Array(main.buffer, 0, bytes / 4);
  }

  /** Bytes [at, at + n) of the ranges laid end to end: the file's own view where one range holds them all. */
  private read(gguf: GgufFile, ranges: readonly FileRange[], at: number, n: number): Uint8Array {
    let skip = at;
    let i = 0;
    while (skip >= ranges[i]!.bytes) skip -= ranges[i++]!.bytes;
    if (skip + n <= ranges[i]!.bytes) return gguf.source.bytes(ranges[i]!.start + skip, n);
    if (!this.gathered || this.gathered.byteLength < n) this.gathered = new Uint8Array(n);
    for (let done = 0; done < n; i++, skip = 0) {
      const take = Math.min(n - done, ranges[i]!.bytes - skip);
      this.gathered.set(gguf.source.bytes(ranges[i]!.start + skip, take), done);
      done += take;
    }
    return this.gathered.subarray(0, n);
  }

  /** Waits for the queue first if `bytes` more would put more than `staging` bytes in flight. */
  private async reserve(bytes: number): Promise<void> {
    if (this.pending > 0 && this.pending + bytes > this.staging) await this.flush();
    this.pending += bytes;
  }

  private written(fileBytes: number): void {
    this.done += fileBytes;
    this.progress(this.done);
  }

  /** Sends the pending writes and waits until the GPU has them. */
  async flush(): Promise<void> {
    if (this.pending === 0) return;
    this.pending = 0;
    // writeBuffer's copies go out with the next submission; an empty one sends them.
    this.device.queue.submit([]);
    await this.device.queue.onSubmittedWorkDone();
  }

  private buffer(bytes: number): Uint8Array<ArrayBuffer> {
    if (!this.scratch || this.scratch.byteLength < bytes) {
      this.scratch = new Uint8Array(Math.max(bytes, Math.min(this.staging + 64, 2 * bytes)));
    }
    return this.scratch;
  }

  private padded(data: Uint8Array): Uint8Array<ArrayBuffer> {
    const out = this.buffer(align4(data.byteLength)).subarray(0, align4(data.byteLength));
    out.set(data);
    out.fill(0, data.byteLength);
    return out;
  }
}
