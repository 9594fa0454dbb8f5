/**
 * What loading a decoder allocates on the GPU, worked out from the file and the options before
 * anything is allocated, and the check that it fits (docs/engine.md, "Memory that fits"): each
 * buffer that cannot be split within the adapter's largest binding, and the whole within the
 * memory budget where one is known. WebGPU does not report a GPU's memory: the budget comes from
 * LoadOptions.memoryBudget or GUFO_MEMORY_BUDGET, and without one only the limits are checked.
 *
 * Weights split into parts (weights.ts) and KV caches by KV heads (kvCacheParts), which fail with
 * their own sentence when one row or one head outgrows a binding.
 */
import { basename } from 'node:path';
import { formatBytes, formatInteger } from '../../../src-preload/api/format';
import type { GgufFile } from '../../core/gguf/gguf-file';
import type { GpuTarget } from '../gpu/device';
import { kvCacheBufferBytes } from '../gpu/ops';
import { plannedWeightBytes } from '../gpu/weights';
import { samplerBytes } from '../sampler';
import {
  activationBuffers,
  allLogitsBytes,
  checkModel,
  kvCacheParts,
  ownSwaRope,
  weightSources,
  type ModelOptions,
} from './decoder';
import type { HParams } from './hparams';
import { ownedBufferBytes } from './owned-buffers';
import { ropeTableBytes } from './rope-table';

/** A cap on what the model may allocate in all, and where it was set (said in the error). */
export interface MemoryBudget {
  bytes: number;
  source: string;
}

/** The options a plan reads: a load's, with its slots resolved. */
export type PlanOptions = Pick<ModelOptions, 'ctx' | 'maxBatch' | 'kvTypes' | 'kvBindingLimit'> & { slots: number };

/** A buffer bound whole by a kernel: it cannot be split. */
interface WholeBuffer {
  label: string;
  bytes: number;
}

export interface MemoryPlan {
  ctx: number;
  /** Matrices as uploaded (parts, repacked planes, padding) and the f32 vectors. */
  weights: number;
  /** Every layer's K and V caches of every slot. */
  kv: number;
  /** Activations, token ids, RoPE tables, logits (every token's, made at first use) and the slots' samplers. */
  activations: number;
  total: number;
  /** The buffers bound whole, each of which must fit one binding. */
  whole: WholeBuffer[];
}

/** The plan for a context of `ctx` (and a batch of at most it) of a model whose weights take `weights`. */
function planAt(gpu: GpuTarget, hp: HParams, options: PlanOptions, vectors: WholeBuffer[], matrices: number) {
  const { ctx, slots } = options;
  const maxBatch = Math.min(options.maxBatch, ctx);
  let kv = 0;
  for (const { count } of kvCacheParts(gpu, hp, options)) {
    const width = count * hp.headDim;
    kv += ownedBufferBytes(kvCacheBufferBytes(options.kvTypes.k, ctx, width));
    kv += ownedBufferBytes(kvCacheBufferBytes(options.kvTypes.v, ctx, width));
  }
  kv *= hp.nLayer * slots;
  const whole: WholeBuffer[] = [...vectors];
  const add = (label: string, bytes: number) => {
    whole.push({ label, bytes: ownedBufferBytes(bytes) });
    return 0;
  };
  activationBuffers(hp, maxBatch, add);
  add('token ids', maxBatch * 4);
  add('all logits', allLogitsBytes(hp, maxBatch));
  add('RoPE table', ropeTableBytes(hp.rope, ctx));
  const swaRope = ownSwaRope(hp);
  if (swaRope) add('sliding-window RoPE table', ropeTableBytes(swaRope, ctx));
  const weights = matrices + vectors.reduce((sum, v) => sum + v.bytes, 0);
  const activations =
    whole.slice(vectors.length).reduce((sum, b) => sum + b.bytes, 0) + slots * samplerBytes(hp.nVocab);
  return { ctx, weights, kv, activations, total: weights + kv + activations, whole };
}

/**
 * A function from a context length to the load's plan (the matrices planned once). Throws what
 * cannot be planned at all: shapes, cache types, a weight row or a KV head wider than a binding.
 */
export function memoryPlanner(
  gpu: GpuTarget,
  gguf: GgufFile,
  hp: HParams,
  options: PlanOptions,
): (ctx: number) => MemoryPlan {
  checkModel(gguf, hp, options);
  const sources = weightSources(gguf, hp, options.ctx);
  const matrices = plannedWeightBytes(gpu.device.limits, gguf, sources.matrices);
  return (ctx) => {
    // The vectors depend on the context only through phi3's RoPE factors, of one size either way.
    const vectors = weightSources(gguf, hp, ctx).vectors.map((name) => ({
      label: name,
      bytes: ownedBufferBytes(4 * gguf.tensor(name)!.elements),
    }));
    return planAt(gpu, hp, { ...options, ctx }, vectors, matrices);
  };
}

/** Why `plan` does not fit (the rest of a sentence), or null when it does. */
function problem(gpu: GpuTarget, plan: MemoryPlan, budget?: MemoryBudget): string | null {
  const { maxStorageBufferBindingSize, maxBufferSize } = gpu.device.limits;
  const binding = Math.min(maxStorageBufferBindingSize, maxBufferSize);
  const wide = plan.whole.find((b) => b.bytes > binding);
  if (wide)
    return `its ${wide.label} buffer of ${formatBytes(wide.bytes)} is more than the ${formatBytes(binding)} ${gpu.info.name} binds at once`;
  if (budget && plan.total > budget.bytes)
    return `the memory budget (${budget.source}) is ${formatBytes(budget.bytes)}`;
  return null;
}

export class MemoryFitError extends Error {
  override readonly name = 'MemoryFitError';
  constructor(
    message: string,
    readonly plan: MemoryPlan,
    /** The largest context that fits, 0 when none does. */
    readonly largestContext: number,
  ) {
    super(message);
  }
}

/**
 * Plans the load at options.ctx and returns the plan if it fits; else throws a MemoryFitError of
 * one sentence: what it needs, split into weights, KV cache and activations, what allows less, and
 * the largest context that fits (found by bisection: every part grows with the context).
 */
export function checkMemoryFit(
  gpu: GpuTarget,
  gguf: GgufFile,
  hp: HParams,
  options: PlanOptions,
  budget?: MemoryBudget,
): MemoryPlan {
  const planAtCtx = memoryPlanner(gpu, gguf, hp, options);
  const plan = planAtCtx(options.ctx);
  const why = problem(gpu, plan, budget);
  if (!why) return plan;
  let fits = 0;
  for (let hi = options.ctx - 1; fits < hi;) {
    const mid = Math.ceil((fits + hi) / 2);
    if (problem(gpu, planAtCtx(mid), budget)) hi = mid - 1;
    else fits = mid;
  }
  const needs =
    `${basename(gguf.file)} needs ${formatBytes(plan.total)} at ${formatInteger(plan.ctx)} tokens of context ` +
    `(weights ${formatBytes(plan.weights)}, KV cache ${formatBytes(plan.kv)}, activations ${formatBytes(plan.activations)})`;
  const largest =
    fits > 0 ? `the largest context that fits is ${formatInteger(fits)} tokens` : 'not even a context of 1 token fits';
  throw new MemoryFitError(`${needs} but ${why}; ${largest}.`, plan, fits);
}

const UNITS: Record<string, number> = { '': 1, b: 1, kib: 2 ** 10, mib: 2 ** 20, gib: 2 ** 30, tib: 2 ** 40 };

/** A budget written as bytes, or with a binary unit ("1.5 GiB", "512MiB"). */
export function parseMemoryBudget(text: string, source: string): MemoryBudget {
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-z]*)\s*$/i.exec(text);
  const unit = m ? UNITS[m[2]!.toLowerCase()] : undefined;
  const bytes = m && unit ? Math.floor(Number(m[1]) * unit) : NaN;
  if (!(bytes > 0))
    throw new Error(`${source}=${text} is not a memory size: write bytes, or a number with B, KiB, MiB, GiB or TiB`);
  return { bytes, source };
}
