/**
 * The Export screen's GPU memory budget: where the figure comes from (the user's setting, else the
 * RAM a software adapter computes in; WebGPU reports no memory size for a real GPU), what is left
 * of it for the file once the KV cache of a new chat is taken, which types go over, and where that
 * limit stands on the size–quality chart's bits-per-weight axis.
 */
import type { ExportTypeOption, GpuAdapterState } from '../../src-preload/api';
import { formatBytes } from './format';

const GIB = 2 ** 30;

export interface MemoryBudget {
  bytes: number;
  /** Where the figure comes from, as the chart's label says it. */
  source: string;
}

/** The KV cache a new chat on the model allocates (F16, as llama.cpp's), at the context it gets. */
export interface KvCache {
  bytes: number;
  context: number;
}

/** The budget set against the types' files: what is left for the file once the KV cache is taken, when it is known. */
export interface BudgetFit {
  budget: MemoryBudget;
  kv: KvCache | null;
  fileBytes: number;
}

/** The setting first (GiB; null is automatic), else the adapter's memory where it reports one (software adapters: the machine's RAM). */
export function memoryBudget(settingGiB: number | null, adapter: GpuAdapterState | null): MemoryBudget | null {
  if (settingGiB !== null) return { bytes: settingGiB * GIB, source: 'Settings' };
  if (adapter?.status === 'ready' && adapter.adapter.memoryBytes !== null) {
    return { bytes: adapter.adapter.memoryBytes, source: `RAM of the software GPU ${adapter.adapter.name}` };
  }
  return null;
}

export function budgetFit(budget: MemoryBudget, kv: KvCache | null): BudgetFit {
  return { budget, kv, fileBytes: budget.bytes - (kv?.bytes ?? 0) };
}

/** Whether the type's file (with the KV cache, when known) needs more than the budget. */
export function overBudget(option: Pick<ExportTypeOption, 'predictedBytes'>, fit: BudgetFit | null): boolean {
  return fit !== null && option.predictedBytes !== null && option.predictedBytes > fit.fileBytes;
}

/** "GPU memory budget 8 GiB (Settings), less the KV cache at 2,048 tokens (2.5 MiB)", or "… : file size only" without a KV estimate. */
export function budgetLabel(fit: BudgetFit): string {
  const budget = `GPU memory budget ${formatBytes(fit.budget.bytes)} (${fit.budget.source})`;
  if (fit.kv === null) return `${budget}: file size only (no KV cache estimate for this model)`;
  return `${budget}, less the KV cache at ${fit.kv.context.toLocaleString('en')} tokens (${formatBytes(fit.kv.bytes)}): ${formatBytes(fit.fileBytes)} for the file`;
}

/**
 * The bits per weight at which a file just fills `fileBytes`. A file's size is linear in its bits per
 * weight (tensor bytes = bits × weights / 8, plus metadata the same for every type), so the line
 * through the types with the fewest and the most bits gives it; null without two such types.
 */
export function budgetBits(points: readonly { bits: number; bytes: number }[], fileBytes: number): number | null {
  if (points.length < 2) return null;
  const low = points.reduce((a, b) => (b.bits < a.bits ? b : a));
  const high = points.reduce((a, b) => (b.bits > a.bits ? b : a));
  if (high.bits === low.bits || high.bytes === low.bytes) return null;
  return low.bits + ((fileBytes - low.bytes) * (high.bits - low.bits)) / (high.bytes - low.bytes);
}

export type BudgetPlacement = 'inside' | 'above' | 'below' | 'unknown';

/** Where the budget falls on an axis from 0 to `axisMax` bits: on it, past its end (every type fits), before 0 (none fits), or unknown. */
export function budgetPlacement(bits: number | null, axisMax: number): BudgetPlacement {
  if (bits === null) return 'unknown';
  if (bits > axisMax) return 'above';
  return bits < 0 ? 'below' : 'inside';
}

/** The line's label under the chart, saying why no line is drawn where the budget is off the axis. */
export function budgetCaption(fit: BudgetFit, placement: BudgetPlacement): string {
  const label = budgetLabel(fit);
  if (placement === 'above') return `${label}; every type fits`;
  if (placement === 'below') return `${label}; no type fits`;
  return label;
}
