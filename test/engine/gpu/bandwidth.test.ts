import { afterAll, beforeAll, expect, it } from 'vitest';
import { measureCopyBandwidth, measureRowReadBandwidth } from '../../../src-main/engine/gpu/bandwidth';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';

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

it('measures reads of whole rows alone, over a source of whole positions of rows, and refuses rows of part vec4s', async () => {
  const result = await measureRowReadBandwidth(ctx, 144, { bytes: 4 * 2 ** 20, iterations: 3 });
  expect(result.bytes % 144).toBe(0);
  expect(result.bytes).toBeGreaterThan(4 * 2 ** 20 - 144);
  expect(result.bytesPerSecond).toBeGreaterThan(1e6);
  // A KV cache's layout: positions of 3 heads' rows side by side, read a head a workgroup.
  const heads = await measureRowReadBandwidth(ctx, 144, { bytes: 4 * 2 ** 20, iterations: 3, heads: 3 });
  expect(heads.bytes % (3 * 144)).toBe(0);
  expect(heads.bytes).toBeGreaterThan(4 * 2 ** 20 - 3 * 144);
  await expect(measureRowReadBandwidth(ctx, 100)).rejects.toThrow('row reads: 100 bytes is not whole vec4s');
  await expect(measureRowReadBandwidth(ctx, 128, { heads: 0 })).rejects.toThrow('row reads: 0 heads is not 1 to 16');
  await expect(measureRowReadBandwidth(ctx, 128, { heads: 17 })).rejects.toThrow('row reads: 17 heads is not 1 to 16');
});
