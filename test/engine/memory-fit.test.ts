/**
 * Memory that fits or says so (model/memory-plan.ts, gpu/error-scope.ts): the plan of a load
 * equals what the load allocates, a budget too small for the context is refused before anything is
 * allocated with one sentence naming the largest context that fits (which then loads), a buffer
 * wider than the adapter binds is refused the same way, and a GPU error inside the scopes is an
 * error, not a crash.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { formatBytes, formatInteger } from '../../src-preload/api/format';
import { openGguf } from '../../src-main/node/gguf-io';
import { Engine } from '../../src-main/engine/engine';
import { scoped } from '../../src-main/engine/gpu/error-scope';
import { readHParams } from '../../src-main/engine/model/hparams';
import {
  checkMemoryFit,
  memoryPlanner,
  parseMemoryBudget,
  type MemoryPlan,
  type PlanOptions,
} from '../../src-main/engine/model/memory-plan';
import type { GpuTarget } from '../../src-main/engine/gpu/device';
import { STORIES_260K } from '../support/paths';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

const engine = await Engine.open();
afterAll(() => engine.destroy());

const F16 = { k: 'f16', v: 'f16' } as const;

/** stories260K's plan on `gpu` at each context, with the engine's defaults (maxBatch 64, one slot). */
function storiesPlanner(gpu: GpuTarget, options: Partial<PlanOptions> = {}): (ctx: number) => MemoryPlan {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const hp = readHParams(gguf);
    return memoryPlanner(gpu, gguf, hp, { ctx: 4096, maxBatch: 64, kvTypes: F16, slots: 1, ...options });
  } finally {
    file.close();
  }
}

/** The sentence a load at `ctx` gets under `budget`. */
function sentence(plan: MemoryPlan, why: string, largest: number): string {
  return (
    `stories260K.gguf needs ${formatBytes(plan.total)} at ${formatInteger(plan.ctx)} tokens of context ` +
    `(weights ${formatBytes(plan.weights)}, KV cache ${formatBytes(plan.kv)}, activations ${formatBytes(plan.activations)}) ` +
    `but ${why}; the largest context that fits is ${formatInteger(largest)} tokens.`
  );
}

describe('memory plan', () => {
  it('plans the weights and KV cache a load allocates, for any number of slots', async () => {
    for (const [ctx, slots] of [
      [64, 1],
      [300, 3],
    ] as const) {
      const plan = storiesPlanner(engine.gpu, { slots })(ctx);
      const info = await engine.load(STORIES_260K, { ctx, slots });
      expect(plan.weights).toBe(info.memory!.residentWeightBytes);
      expect(plan.kv).toBe(info.memory!.kvBytes);
      // The plan adds the samplers and the every-token logits made at first use to the scratch.
      expect(plan.activations).toBeGreaterThan(info.memory!.scratchBytes);
      expect(plan.total).toBe(plan.weights + plan.kv + plan.activations);
    }
    // The KV cache grows by 5 layers × K and V × 4 heads × 8 × f16 per position.
    const at = storiesPlanner(engine.gpu);
    expect(at(1001).kv - at(1000).kv).toBe(5 * 2 * 4 * 8 * 2);
  });

  it('refuses a context over the memory budget with one sentence; the largest context it names loads, one more does not', async () => {
    const at = storiesPlanner(engine.gpu);
    // A budget that holds exactly 1,000 tokens of context.
    const budget = at(1000).total;
    await expect(engine.load(STORIES_260K, { ctx: 4096, memoryBudget: budget })).rejects.toThrow(
      sentence(at(4096), `the memory budget (memoryBudget) is ${formatBytes(budget)}`, 1000),
    );
    await expect(engine.load(STORIES_260K, { ctx: 1001, memoryBudget: budget })).rejects.toThrow(
      /the largest context that fits is 1,000 tokens\.$/,
    );
    await engine.load(STORIES_260K, { ctx: 1000, memoryBudget: budget });
    expect(engine.model?.ctx).toBe(1000);
    const r = await engine.generate(STORIES_PROMPT, { maxTokens: 8, stop: [] });
    expect(r.ids).toEqual(STORIES_GREEDY.slice(0, 8));
    // Below the weights and the buffers of one token, no context fits.
    await expect(engine.load(STORIES_260K, { ctx: 64, memoryBudget: at(1).total - 1 })).rejects.toThrow(
      /but the memory budget \(memoryBudget\) is .+; not even a context of 1 token fits\.$/,
    );
  });

  it('refuses a buffer wider than the adapter binds, naming the largest context that fits', () => {
    // A made-up adapter binding 96 KiB: stories260K's logits of every token of a batch (64 × 512 × 4
    // bytes) outgrow it; a batch of 48, at a context of 48, fits.
    const small: GpuTarget = {
      device: { limits: { maxStorageBufferBindingSize: 96 * 1024, maxBufferSize: 2 ** 30 } },
      info: { name: 'a small GPU' },
    };
    const at = storiesPlanner(small);
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const hp = readHParams(gguf);
      expect(() => checkMemoryFit(small, gguf, hp, { ctx: 4096, maxBatch: 64, kvTypes: F16, slots: 1 })).toThrow(
        sentence(at(4096), 'its all logits buffer of 128 KiB is more than the 96.0 KiB a small GPU binds at once', 48),
      );
      expect(checkMemoryFit(small, gguf, hp, { ctx: 48, maxBatch: 64, kvTypes: F16, slots: 1 }).ctx).toBe(48);
    } finally {
      file.close();
    }
  });

  it('GUFO_MEMORY_BUDGET takes bytes or binary units, and names what it cannot read', () => {
    expect(parseMemoryBudget('1048576', 'X').bytes).toBe(2 ** 20);
    expect(parseMemoryBudget('1.5 GiB', 'X').bytes).toBe(1.5 * 2 ** 30);
    expect(parseMemoryBudget('512mib', 'X').bytes).toBe(512 * 2 ** 20);
    for (const bad of ['lots', '1.5 GB', '-3', '0'])
      expect(() => parseMemoryBudget(bad, 'GUFO_MEMORY_BUDGET')).toThrow(
        `GUFO_MEMORY_BUDGET=${bad} is not a memory size: write bytes, or a number with B, KiB, MiB, GiB or TiB`,
      );
  });
});

describe('GPU error scopes', () => {
  it('turn a failed allocation into an error naming what was done, and the device goes on working', async () => {
    const { device } = engine.gpu;
    await expect(
      scoped(device, 'allocating a test buffer', () =>
        Promise.resolve(device.createBuffer({ size: device.limits.maxBufferSize + 4, usage: GPUBufferUsage.STORAGE })),
      ),
    ).rejects.toThrow(/^GPU error allocating a test buffer: Buffer size \(\d+\) exceeds the max buffer size limit/);
    await engine.load(STORIES_260K, { ctx: 64 });
    expect((await engine.generate(STORIES_PROMPT, { maxTokens: 4, stop: [] })).ids).toEqual(STORIES_GREEDY.slice(0, 4));
  });
});
