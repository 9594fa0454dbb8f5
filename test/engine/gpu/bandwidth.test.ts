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

it('measures reads of whole rows alone, over a source of whole rows, and refuses rows of part vec4s', async () => {
  const result = await measureRowReadBandwidth(ctx, 144, { bytes: 4 * 2 ** 20, iterations: 3 });
  expect(result.bytes % 144).toBe(0);
  expect(result.bytes).toBeGreaterThan(4 * 2 ** 20 - 144);
  expect(result.bytesPerSecond).toBeGreaterThan(1e6);
  await expect(measureRowReadBandwidth(ctx, 100)).rejects.toThrow('row reads: 100 bytes is not whole vec4s');
});
