/**
 * The adapter's copy bandwidth, measured with a plain copy kernel (shaders/copy.wgsl): the
 * roofline `gufo bench` compares decode speed against. Bytes moved count both the read and the
 * write. Also the rate of reads alone in one kernel's pattern, for benches that show what bounds
 * that kernel (measureRowReadBandwidth). Timed with timestamp queries where the device has them,
 * otherwise by the wall clock around a submission of several copies (which includes submission
 * overhead, so it reads low).
 */
import type { GpuContext } from './device';
import { DECODE_WORKGROUPS } from './ops';
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
  /** Bytes moved per second in the best timed run (a copy: read and written; row reads: read). */
  readonly bytesPerSecond: number;
  /** Size of one copy's source. */
  readonly bytes: number;
  readonly iterations: number;
  /** How the copies were timed. */
  readonly timer: 'timestamp' | 'wall';
}

const WG = 256;
const GROUPS = 4096;

export async function measureCopyBandwidth(ctx: GpuContext, options: BandwidthOptions = {}): Promise<BandwidthResult> {
  const bytes = sourceBytes(ctx.device, options.bytes);
  const groups = Math.min(GROUPS, Math.ceil(bytes / 16 / WG));
  // Bytes moved count the read and the write.
  return measure(ctx, { entryPoint: 'main', bytes, dstBytes: bytes, groups, moved: 2 * bytes }, options);
}

/**
 * Reads alone, as CPU-shape decode attention reads its KV rows (copy.wgsl's read_rows): the source
 * is positions of `heads` rows of `rowBytes` (a multiple of 16) side by side, as the KV cache holds
 * its KV heads; a workgroup takes one head's rows over a range of positions, its lanes side by
 * side on consecutive positions, each reading its whole row. What a kernel that reads such rows
 * could reach on this adapter before doing anything with them.
 */
export async function measureRowReadBandwidth(
  ctx: GpuContext,
  rowBytes: number,
  options: BandwidthOptions & { heads?: number } = {},
): Promise<BandwidthResult> {
  if (!(rowBytes >= 16 && rowBytes % 16 === 0)) throw new Error(`row reads: ${rowBytes} bytes is not whole vec4s`);
  const heads = options.heads ?? 1;
  const groups = rowReadWorkgroups(heads);
  const positionBytes = heads * rowBytes;
  const bytes = Math.max(
    positionBytes,
    Math.floor(sourceBytes(ctx.device, options.bytes) / positionBytes) * positionBytes,
  );
  const lanes = cpuLanes(ctx.info);
  return measure(
    ctx,
    {
      entryPoint: 'read_rows',
      constants: { ROW_VEC4: rowBytes / 16, HEADS: heads, READ_LANES: lanes },
      bytes,
      dstBytes: 16 * lanes * groups,
      groups,
      moved: bytes,
    },
    options,
  );
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

interface Kernel {
  entryPoint: string;
  constants?: Record<string, number>;
  /** SRC's size, and DST's. */
  bytes: number;
  dstBytes: number;
  groups: number;
  /** Bytes one dispatch moves. */
  moved: number;
}

async function measure(ctx: GpuContext, k: Kernel, options: BandwidthOptions): Promise<BandwidthResult> {
  const { device } = ctx;
  const { bytes } = k;
  const iterations = Math.max(1, options.iterations ?? 10);
  const module = device.createShaderModule({ label: 'copy', code: shaderSource('copy.wgsl', { WG }) });
  const pipeline = device.createComputePipeline({
    label: `copy.wgsl:${k.entryPoint}`,
    layout: 'auto',
    compute: { module, entryPoint: k.entryPoint, constants: k.constants ?? {} },
  });
  const src = device.createBuffer({ label: 'copy src', size: bytes, usage: GPUBufferUsage.STORAGE });
  const dst = device.createBuffer({ label: 'copy dst', size: k.dstBytes, usage: GPUBufferUsage.STORAGE });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: src } },
      { binding: 1, resource: { buffer: dst } },
    ],
  });
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
      pass.setPipeline(pipeline);
      pass.setBindGroup(0, group);
      pass.dispatchWorkgroups(k.groups);
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
      bytesPerSecond: k.moved / seconds,
      bytes,
      iterations,
      timer: readback && seconds !== wall ? 'timestamp' : 'wall',
    };
  } finally {
    src.destroy();
    dst.destroy();
    querySet?.destroy();
    resolve?.destroy();
    readback?.destroy();
  }
}
