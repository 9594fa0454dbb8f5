/**
 * stories260K's memory plan (engine/model/memory-plan.ts) as an engine process makes it with the
 * defaults of the CLI and the back end (a batch of 64, f16 caches, one slot), and the sentence a
 * load over a budget gets: for the tests that run the engine in a process of its own.
 */
import { formatBytes, formatInteger } from '../../src-preload/api/format';
import { readHParams } from '../../src-main/engine/model/hparams';
import { memoryPlanner, type MemoryPlan } from '../../src-main/engine/model/memory-plan';
import { openGguf } from '../../src-main/node/gguf-io';
import { STORIES_260K } from './paths';

/**
 * The plan at `ctx`. stories260K's tensors and caches are far below any adapter's binding limit,
 * so the limits given here (WebGPU's defaults) plan what any adapter allocates.
 */
export function storiesPlan(ctx: number): MemoryPlan {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const gpu = {
      device: { limits: { maxStorageBufferBindingSize: 2 ** 27, maxBufferSize: 2 ** 28 } },
      info: { name: 'any' },
    };
    const options = { ctx, maxBatch: 64, kvTypes: { k: 'f16', v: 'f16' }, slots: 1 } as const;
    return memoryPlanner(gpu, gguf, readHParams(gguf), options)(ctx);
  } finally {
    file.close();
  }
}

/** The refusal of a load of stories260K at `ctx` under GUFO_MEMORY_BUDGET = storiesPlan(fits).total. */
export function storiesRefusal(ctx: number, fits: number): string {
  const p = storiesPlan(ctx);
  return (
    `stories260K.gguf needs ${formatBytes(p.total)} at ${formatInteger(ctx)} tokens of context ` +
    `(weights ${formatBytes(p.weights)}, KV cache ${formatBytes(p.kv)}, activations ${formatBytes(p.activations)}) ` +
    `but the memory budget (GUFO_MEMORY_BUDGET) is ${formatBytes(storiesPlan(fits).total)}; ` +
    `the largest context that fits is ${formatInteger(fits)} tokens.`
  );
}
