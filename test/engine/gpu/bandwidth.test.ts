import { afterAll, beforeAll, expect, it } from 'vitest';
import { measureCopyBandwidth } from '../../../src-main/engine/gpu/bandwidth';
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
