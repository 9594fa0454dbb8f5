/**
 * The adapter's copy bandwidth, measured with a plain copy kernel (shaders/copy.wgsl): the
 * roofline `gufo bench` compares decode speed against. Bytes moved count both the read and the
 * write. Also the rate of reads alone in one kernel's pattern, for benches that show what bounds
 * that kernel (measureRowReadBandwidth). Timed with timestamp queries where the device has them,
 * otherwise by the wall clock around a submission of several copies (which includes submission
 * overhead, so it reads low).
 */
import type { GpuContext } from './device';
import { DECODE_CPU_LANES, DECODE_WORKGROUPS } from './ops';
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
 * Reads alone, as CPU-shape decode attention reads its KV rows (copy.wgsl's read_rows: lanes side
 * by side on consecutive rows of `rowBytes`, a multiple of 16, each reading its whole row): what
 * a kernel that reads such rows could reach on this adapter before doing anything with them.
 */
export async function measureRowReadBandwidth(
  ctx: GpuContext,
  rowBytes: number,
  options: BandwidthOptions = {},
): Promise<BandwidthResult> {
  if (!(rowBytes >= 16 && rowBytes % 16 === 0)) throw new Error(`row reads: ${rowBytes} bytes is not whole vec4s`);
  const bytes = Math.max(rowBytes, Math.floor(sourceBytes(ctx.device, options.bytes) / rowBytes) * rowBytes);
  return measure(
    ctx,
    {
      entryPoint: 'read_rows',
      // The lanes and workgroups of decode attention's split on a CPU adapter.
      constants: { ROW_VEC4: rowBytes / 16, READ_LANES: DECODE_CPU_LANES },
      bytes,
      dstBytes: 16 * DECODE_CPU_LANES * DECODE_WORKGROUPS.cpu,
      groups: DECODE_WORKGROUPS.cpu,
      moved: bytes,
    },
    options,
  );
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
  const { groups } = k;
  const timestamps = ctx.hasTimestamps;
  const querySet = timestamps ? device.createQuerySet({ type: 'timestamp', count: 2 * iterations }) : undefined;
  const resolve = timestamps
    ? device.createBuffer({ size: 16 * iterations, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC })
    : undefined;
  const readback = timestamps
    ? device.createBuffer({ size: 16 * iterations, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST })
    : undefined;
  try {
    const copies = (count: number, timed: boolean): GPUCommandBuffer => {
      const encoder = device.createCommandEncoder();
      for (let i = 0; i < count; i++) {
        const pass = encoder.beginComputePass(
          timed && querySet
            ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 } }
            : {},
        );
        pass.setPipeline(pipeline);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(groups);
        pass.end();
      }
      if (timed && querySet && resolve && readback) {
        encoder.resolveQuerySet(querySet, 0, 2 * count, resolve, 0);
        encoder.copyBufferToBuffer(resolve, 0, readback, 0, 16 * count);
      }
      return encoder.finish();
    };
    device.queue.submit([copies(1, false)]);
    await device.queue.onSubmittedWorkDone();

    let seconds: number;
    const started = performance.now();
    device.queue.submit([copies(iterations, true)]);
    await device.queue.onSubmittedWorkDone();
    const wall = (performance.now() - started) / 1000 / iterations;
    if (readback) {
      await readback.mapAsync(GPUMapMode.READ);
      const t = new BigUint64Array(readback.getMappedRange());
      let best = Infinity;
      for (let i = 0; i < iterations; i++) {
        const ns = Number(t[2 * i + 1]! - t[2 * i]!);
        if (ns > 0 && ns < best) best = ns;
      }
      readback.unmap();
      seconds = Number.isFinite(best) ? best / 1e9 : wall;
    } else {
      seconds = wall;
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
