import { afterAll, beforeAll, expect, it } from 'vitest';
import { measureCopyBandwidth, rowReads } from '../../../src-main/engine/gpu/bandwidth';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { readBack, run } from './fixtures';

let ctx: GpuContext;
beforeAll(async () => {
  ctx = await openGpu();
});
afterAll(() => ctx?.destroy());

it('measures the copy bandwidth of the adapter', async () => {
  const result = await measureCopyBandwidth(ctx, { bytes: 4 * 2 ** 20, iterations: 3 });
  console.log(
    `${ctx.info.name} (${ctx.info.backend}): copy ${(result.bytesPerSecond / 1e9).toFixed(2)} GB/s (${result.timer})`,
  );
  expect(result.bytes).toBe(4 * 2 ** 20);
  expect(result.iterations).toBe(3);
  expect(Number.isFinite(result.bytesPerSecond)).toBe(true);
  expect(result.bytesPerSecond).toBeGreaterThan(1e6);
});

it('times each copy in a submission of its own, so that every wait can be paced as the engine paces its steps', async () => {
  const { queue } = ctx.device;
  const submit = queue.submit.bind(queue);
  const submissions: number[] = [];
  queue.submit = (buffers: Iterable<GPUCommandBuffer>) => {
    submissions.push([...buffers].length);
    submit(buffers);
  };
  try {
    await measureCopyBandwidth(ctx, { bytes: 4 * 2 ** 20, iterations: 3 });
  } finally {
    queue.submit = submit;
  }
  // An untimed warm-up, the 3 timed copies, then the timestamps' readback where the device has them.
  expect(submissions).toEqual(Array(1 + 3 + (ctx.hasTimestamps ? 1 : 0)).fill(1));
});

it('reads alone take whole positions of rows, a source a dispatch, and refuse rows of part vec4s', () => {
  const one = rowReads(ctx, 144, { bytes: 4 * 2 ** 20 });
  expect(one.bytes % 144).toBe(0);
  expect(one.bytes).toBeGreaterThan(4 * 2 ** 20 - 144);
  expect(one.dispatches).toHaveLength(1);
  one.destroy();
  // A KV cache's layout: positions of 3 heads' rows side by side; a layer's cache each.
  const layers = rowReads(ctx, 144, { bytes: 4 * 2 ** 20, heads: 3, sources: 4 });
  expect(layers.bytes % (3 * 144)).toBe(0);
  expect(layers.bytes).toBeGreaterThan(4 * 2 ** 20 - 3 * 144);
  expect(layers.dispatches).toHaveLength(4);
  expect(new Set(layers.sources).size).toBe(4);
  expect(layers.sources.every((b) => b.size === layers.bytes)).toBe(true);
  layers.destroy();
  expect(() => rowReads(ctx, 100)).toThrow('row reads: 100 bytes is not whole vec4s');
  expect(() => rowReads(ctx, 128, { heads: 0 })).toThrow('row reads: 0 heads is not 1 to 16');
  expect(() => rowReads(ctx, 128, { heads: 17 })).toThrow('row reads: 17 heads is not 1 to 16');
});

it('reads every word of its source once: its lanes add up to what the source holds', async () => {
  // 1001 positions of 3 heads' 144-byte rows: shares that do not divide the positions evenly.
  const reads = rowReads(ctx, 144, { bytes: 1001 * 3 * 144, heads: 3, sources: 2 });
  const words = Uint32Array.from({ length: reads.bytes / 4 }, (_, i) => Math.imul(i + 1, 2654435761) >>> 0);
  ctx.device.queue.writeBuffer(reads.sources[1]!, 0, words);
  try {
    await run(ctx.device, [reads.dispatches[1]!]);
    const sums = new Uint32Array(await readBack(ctx.device, reads.sums));
    for (let c = 0; c < 4; c++) {
      let want = 0;
      for (let i = c; i < words.length; i += 4) want = (want + words[i]!) >>> 0;
      let got = 0;
      for (let i = c; i < sums.length; i += 4) got = (got + sums[i]!) >>> 0;
      expect(got).toBe(want);
    }
  } finally {
    reads.destroy();
  }
});
