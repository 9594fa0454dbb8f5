/**
 * The adapter's copy bandwidth, measured with a plain copy kernel (shaders/copy.wgsl): the
 * roofline `gufo bench` compares decode speed against. Bytes moved count both the read and the
 * write. Timed with timestamp queries where the device has them, otherwise by the wall clock
 * around a submission of several copies (which includes submission overhead, so it reads low).
 * Also the same copies as dispatches (copies), reads alone in one kernel's pattern (rowReads) and
 * reads with the multiply-adds attention needs (maddReads), for benches that time them beside a
 * kernel, in the same runs, to show what bounds it.
 */
import type { GpuContext } from './device';
import { DECODE_WORKGROUPS, type Dispatch } from './ops';
import { cpuLanes } from './row-groups';
import { PacedWait } from './paced-wait';
import { shaderSource } from './shader-source';

export interface BandwidthOptions {
  /** Size of the source buffer (default 256 MiB, capped by the device's limits). */
  bytes?: number;
  /** Timed copies (default 10), after one untimed warm-up. */
  iterations?: number;
}

export interface BandwidthResult {
  /** Bytes moved (read and written) per second in the best timed copy. */
  readonly bytesPerSecond: number;
  /** Size of one copy's source. */
  readonly bytes: number;
  readonly iterations: number;
  /** How the copies were timed. */
  readonly timer: 'timestamp' | 'wall';
}

const WG = 256;
const GROUPS = 4096;

export interface Copies {
  /** One copy of the whole source. */
  readonly dispatch: Dispatch;
  /** Bytes one copy moves: its source's, read and written. */
  readonly bytesMoved: number;
  /** The source (writable) and the destination (readable), for a test to see what was copied. */
  readonly source: GPUBuffer;
  readonly destination: GPUBuffer;
  destroy(): void;
}

/**
 * copy.wgsl's copy of a source (`bytes`, default 256 MiB, within the device's limits) to a
 * destination as large, as a dispatch: what measureCopyBandwidth times, and what a caller times
 * between a kernel's runs (bench:attention), so that the copies are taken throughout the runs
 * rather than all in one moment before them that a noisy machine may have slowed.
 */
export function copies(ctx: GpuContext, options: { bytes?: number } = {}): Copies {
  const { device } = ctx;
  const bytes = sourceBytes(device, options.bytes);
  const groups = Math.min(GROUPS, Math.ceil(bytes / 16 / WG));
  const module = device.createShaderModule({ label: 'copy', code: shaderSource('copy.wgsl', { WG }) });
  const pipeline = device.createComputePipeline({
    label: 'copy.wgsl:main',
    layout: 'auto',
    compute: { module, entryPoint: 'main' },
  });
  const source = device.createBuffer({
    label: 'copy src',
    size: bytes,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
  });
  const destination = device.createBuffer({
    label: 'copy dst',
    size: bytes,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  return {
    source,
    destination,
    bytesMoved: 2 * bytes,
    dispatch: dispatchOf(device, pipeline, source, destination, groups),
    destroy() {
      source.destroy();
      destination.destroy();
    },
  };
}

export interface Reads {
  /** One dispatch a source: each reads its source whole, once. */
  readonly dispatches: readonly Dispatch[];
  /** Bytes each dispatch reads: `bytes` rounded down to whole positions of rows (row reads) or vec4s. */
  readonly bytes: number;
  /** The dispatches' sources, in order (zeros; writable). */
  readonly sources: readonly GPUBuffer[];
  /**
   * Per lane of every workgroup, a vec4 written by every dispatch: row reads' wrapping u32 sum of
   * the vec4s it read, madd reads' f32 sums of its multiply-adds.
   */
  readonly sums: GPUBuffer;
  destroy(): void;
}

/**
 * Reads alone, as CPU-shape decode attention reads its KV rows (copy.wgsl's read_rows), for a
 * caller to time beside the kernel in the same way (bench:attention): `sources` buffers of
 * positions of `heads` rows of `rowBytes` (a multiple of 16) side by side, as a layer's KV cache
 * holds its KV heads, a dispatch each, so that, as in a model, none is still in the CPU's cache from
 * the one before. A workgroup takes one head's rows over a range of positions, its lanes side by
 * side on consecutive positions, each reading its whole row: what a kernel that reads such rows
 * could reach on this adapter before doing anything with them. Timed otherwise (the best
 * timestamp of one buffer read again and again) they read twice as fast on lavapipe as they do
 * beside the kernel, and so said little about what bounds it.
 */
export function rowReads(
  ctx: GpuContext,
  rowBytes: number,
  options: { bytes?: number; heads?: number; sources?: number } = {},
): Reads {
  if (!(rowBytes >= 16 && rowBytes % 16 === 0)) throw new Error(`row reads: ${rowBytes} bytes is not whole vec4s`);
  const { device } = ctx;
  const heads = options.heads ?? 1;
  const groups = rowReadWorkgroups(heads);
  const positionBytes = heads * rowBytes;
  const bytes = Math.max(positionBytes, Math.floor(sourceBytes(device, options.bytes) / positionBytes) * positionBytes);
  const lanes = cpuLanes(ctx.info);
  const module = device.createShaderModule({ label: 'copy', code: shaderSource('copy.wgsl', { WG }) });
  const pipeline = device.createComputePipeline({
    label: 'copy.wgsl:read_rows',
    layout: 'auto',
    compute: {
      module,
      entryPoint: 'read_rows',
      constants: { ROW_VEC4: rowBytes / 16, HEADS: heads, READ_LANES: lanes },
    },
  });
  return readsOf(ctx, pipeline, { label: 'row reads', bytes, groups, lanes, sources: options.sources ?? 1 });
}

/** Query heads a KV head serves that maddReads takes: its multiply-adds a half. */
const MAX_MADD_GROUP = 16;

/**
 * Reads with the multiply-adds decode attention cannot skip (shaders/read-madds.wgsl): an F16
 * cache's words read the fastest way this adapter reads (lanes side by side on consecutive vec4s,
 * as the copy reads), each half multiplied by `group` query heads' values and added, and nothing
 * else: no softmax, no accumulators in memory. Timed beside the kernel, what bounds any attention
 * kernel that reads its cache through this adapter's loads, `sources` buffers a dispatch each.
 */
export function maddReads(ctx: GpuContext, options: { bytes?: number; group?: number; sources?: number } = {}): Reads {
  const group = options.group ?? 1;
  if (!(Number.isInteger(group) && group >= 1 && group <= MAX_MADD_GROUP)) {
    throw new Error(`madd reads: ${group} query heads a KV head is not 1 to ${MAX_MADD_GROUP}`);
  }
  const { device } = ctx;
  const lanes = cpuLanes(ctx.info);
  const module = device.createShaderModule({
    label: 'read-madds',
    code: shaderSource('read-madds.wgsl', { LANES: lanes, GROUP: group }),
  });
  const pipeline = device.createComputePipeline({
    label: 'read-madds.wgsl:read_madds',
    layout: 'auto',
    compute: { module, entryPoint: 'read_madds' },
  });
  const bytes = sourceBytes(device, options.bytes);
  return readsOf(ctx, pipeline, {
    label: 'madd reads',
    bytes,
    groups: DECODE_WORKGROUPS.cpu,
    lanes,
    sources: options.sources ?? 1,
  });
}

/** `sources` zeroed buffers of `bytes` and a dispatch of `pipeline` over each, lanes' sums to one buffer. */
function readsOf(
  ctx: GpuContext,
  pipeline: GPUComputePipeline,
  shape: { label: string; bytes: number; groups: number; lanes: number; sources: number },
): Reads {
  const { device } = ctx;
  const { label, bytes, groups } = shape;
  const sums = device.createBuffer({
    label: `${label} sums`,
    size: 16 * shape.lanes * groups,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  const buffers = Array.from({ length: shape.sources }, (_, i) =>
    device.createBuffer({
      label: `${label} source ${i}`,
      size: bytes,
      usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
    }),
  );
  const dispatches = buffers.map((src) => dispatchOf(device, pipeline, src, sums, groups));
  return {
    dispatches,
    bytes,
    sources: buffers,
    sums,
    destroy() {
      for (const b of [...buffers, sums]) b.destroy();
    },
  };
}

/** `groups` workgroups of `pipeline` (copy.wgsl's and read-madds.wgsl's): `src` at binding 0, `dst` at 1. */
function dispatchOf(
  device: GPUDevice,
  pipeline: GPUComputePipeline,
  src: GPUBuffer,
  dst: GPUBuffer,
  groups: number,
): Dispatch {
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: src } },
      { binding: 1, resource: { buffer: dst } },
    ],
  });
  return {
    encode(pass) {
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(groups);
    },
  };
}

/**
 * The workgroups reads alone of `heads` heads' rows run (copy.wgsl's read_rows and its variants):
 * decode attention's split on a CPU adapter, as many as it runs, each head's a share.
 */
export function rowReadWorkgroups(heads: number): number {
  if (!(Number.isInteger(heads) && heads >= 1 && heads <= DECODE_WORKGROUPS.cpu)) {
    throw new Error(`row reads: ${heads} heads is not 1 to ${DECODE_WORKGROUPS.cpu}`);
  }
  return Math.floor(DECODE_WORKGROUPS.cpu / heads) * heads;
}

/** The source's size: `requested` (default 256 MiB) within the device's limits, whole vec4s. */
function sourceBytes(device: GPUDevice, requested = 256 * 2 ** 20): number {
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  return Math.max(16, Math.floor(Math.min(requested, limit) / 16) * 16);
}

/** The best of `options.iterations` copies (copies) of an `options.bytes` source. */
export async function measureCopyBandwidth(ctx: GpuContext, options: BandwidthOptions = {}): Promise<BandwidthResult> {
  const { device } = ctx;
  const iterations = Math.max(1, options.iterations ?? 10);
  const copier = copies(ctx, { bytes: options.bytes });
  const bytes = copier.source.size;
  const timestamps = ctx.hasTimestamps;
  const querySet = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 * iterations }) : undefined;
  const resolve = timestamps
    ? device.createBuffer({ size: 16 * iterations, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC })
    : undefined;
  const readback = timestamps
    ? device.createBuffer({ size: 16 * iterations, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST })
    : undefined;
  // Each copy is a submission of its own, waited for as the engine waits for its steps: on a CPU
  // adapter a host polling back to back takes a core from the driver's threads, which halved
  // lavapipe's copy rate (7 against 14 GiB/s on 2 cores, 2026-12-07) and so flattered every
  // kernel measured against it.
  const waits = new PacedWait(ctx.pacesWaits);
  try {
    const copy = async (index: number | null): Promise<number> => {
      const encoder = device.createCommandEncoder();
      const pass = encoder.beginComputePass(
        index !== null && querySet
          ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * index, endOfPassWriteIndex: 2 * index + 1 } }
          : {},
      );
      copier.dispatch.encode(pass);
      pass.end();
      const started = performance.now();
      device.queue.submit([encoder.finish()]);
      await waits.wait('copy', () => device.queue.onSubmittedWorkDone());
      return (performance.now() - started) / 1000;
    };
    // Untimed first: it compiles, and gives the paced wait its first measure of a copy.
    await copy(null);
    let wall = Infinity;
    for (let i = 0; i < iterations; i++) wall = Math.min(wall, await copy(i));

    let seconds = wall;
    if (querySet && resolve && readback) {
      const encoder = device.createCommandEncoder();
      encoder.resolveQuerySet(querySet, 0, 2 * iterations, resolve, 0);
      encoder.copyBufferToBuffer(resolve, 0, readback, 0, 16 * iterations);
      device.queue.submit([encoder.finish()]);
      await readback.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(readback.getMappedRange());
      let best = Infinity;
      for (let i = 0; i < iterations; i++) {
        const ns = Number(t[2 * i + 1]! - t[2 * i]!);
        if (ns > 0 && ns < best) best = ns;
      }
      readback.unmap();
      if (Number.isFinite(best)) seconds = best / 1e9;
    }
    return {
      bytesPerSecond: copier.bytesMoved / seconds,
      bytes,
      iterations,
      timer: readback && seconds !== wall ? 'timestamp' : 'wall',
    };
  } finally {
    copier.destroy();
    querySet?.destroy();
    resolve?.destroy();
    readback?.destroy();
  }
}
