import { afterAll, beforeAll, expect, it } from 'vitest';
import { copies, maddReads, measureCopyBandwidth, rowReads } from '../../../src-main/engine/gpu/bandwidth';
import { openGpu, type GpuContext } from '../../../src-main/engine/gpu/device';
import { DECODE_WORKGROUPS } from '../../../src-main/engine/gpu/ops';
import { cpuLanes } from '../../../src-main/engine/gpu/row-groups';
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

it('copies as a dispatch: each copies its whole source, and counts its bytes read and written', async () => {
  // 1001 vec4s: the grid-stride loop's last step part full.
  const copy = copies(ctx, { bytes: 1001 * 16 + 7 });
  expect(copy.bytesMoved).toBe(2 * 1001 * 16);
  const words = Uint32Array.from({ length: 1001 * 4 }, (_, i) => Math.imul(i + 1, 2654435761) >>> 0);
  ctx.device.queue.writeBuffer(copy.source, 0, words);
  try {
    await run(ctx.device, [copy.dispatch]);
    expect(new Uint32Array(await readBack(ctx.device, copy.destination))).toEqual(words);
  } finally {
    copy.destroy();
  }
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

it("reads with multiply-adds multiply every half of its source by each query head's values and add them, once", async () => {
  // 1001 vec4s: workgroups' chunks and lanes that do not divide them evenly.
  const group = 3;
  const reads = maddReads(ctx, { bytes: 1001 * 16, group, sources: 2 });
  expect(reads.bytes).toBe(1001 * 16);
  expect(reads.dispatches).toHaveLength(2);
  // Halves 1 and 2 alternating, so each vec4's lo is (1, 2, 1, 2) and its hi the same.
  const words = new Uint32Array(reads.bytes / 4).fill(0x4000_3c00);
  ctx.device.queue.writeBuffer(reads.sources[1]!, 0, words);
  try {
    await run(ctx.device, [reads.dispatches[1]!]);
    const sums = new Float32Array(await readBack(ctx.device, reads.sums));
    // read-madds.wgsl's values: head g's lo values x + g + 0.5, x/2 + g, x/4 + g, x/8 + g and hi
    // values x + g + 0.25, 3x/4 + g, 3x/8 + g, 5x/8 + g, x the lane's index.
    const lanes = cpuLanes(ctx.info);
    const vec4s = 1001;
    const chunk = Math.ceil(vec4s / DECODE_WORKGROUPS.cpu);
    for (let w = 0; w < DECODE_WORKGROUPS.cpu; w++) {
      for (let lane = 0; lane < lanes; lane++) {
        let count = 0;
        for (let i = w * chunk + lane; i < Math.min(w * chunk + chunk, vec4s); i += lanes) count++;
        const x = lane;
        const want = [0, 1, 2, 3].map((c) => {
          let sum = 0;
          for (let g = 0; g < group; g++) {
            const lo = [x + g + 0.5, x / 2 + g, x / 4 + g, x / 8 + g][c]!;
            const hi = [x + g + 0.25, (3 * x) / 4 + g, (3 * x) / 8 + g, (5 * x) / 8 + g][c]!;
            sum += (lo + hi) * (c % 2 === 0 ? 1 : 2);
          }
          return sum * count;
        });
        const at = (w * lanes + lane) * 4;
        want.forEach((v, c) => expect(sums[at + c]).toBeCloseTo(v, 3));
      }
    }
  } finally {
    reads.destroy();
  }
  expect(() => maddReads(ctx, { group: 0 })).toThrow('madd reads: 0 query heads a KV head is not 1 to 16');
});
