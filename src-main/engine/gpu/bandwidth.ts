/**
 * The adapter's copy bandwidth, measured with a plain copy kernel (shaders/copy.wgsl): the
 * roofline `gufo bench` compares decode speed against. Bytes moved count both the read and the
 * write. Timed with timestamp queries where the device has them, otherwise by the wall clock
 * around a submission of several copies (which includes submission overhead, so it reads low).
 */
import type { GpuContext } from './device';
import { shaderSource } from './shader-source';

export interface BandwidthOptions {
  /** Size of the source buffer (default 256 MiB, capped by the device's limits). */
  bytes?: number;
  /** Timed copies (default 10), after one untimed warm-up. */
  iterations?: number;
}

export interface BandwidthResult {
  /** Read + written bytes per second of the best timed run. */
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
  const { device } = ctx;
  const limit = Math.min(device.limits.maxStorageBufferBindingSize, device.limits.maxBufferSize);
  const bytes = Math.max(16, Math.floor(Math.min(options.bytes ?? 256 * 2 ** 20, limit) / 16) * 16);
  const iterations = Math.max(1, options.iterations ?? 10);
  const module = device.createShaderModule({ label: 'copy', code: shaderSource('copy.wgsl', { WG }) });
  const pipeline = device.createComputePipeline({
    label: 'copy',
    layout: 'auto',
    compute: { module, entryPoint: 'main' },
  });
  const src = device.createBuffer({ label: 'copy src', size: bytes, usage: GPUBufferUsage.STORAGE });
  const dst = device.createBuffer({ label: 'copy dst', size: bytes, usage: GPUBufferUsage.STORAGE });
  const group = device.createBindGroup({
    layout: pipeline.getBindGroupLayout(0),
    entries: [
      { binding: 0, resource: { buffer: src } },
      { binding: 1, resource: { buffer: dst } },
    ],
  });
  const groups = Math.min(GROUPS, Math.ceil(bytes / 16 / WG));
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
      bytesPerSecond: (2 * bytes) / seconds,
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
