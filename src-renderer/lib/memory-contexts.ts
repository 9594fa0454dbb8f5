/**
 * The Memory tab's context choices, each with what it costs: a warning past the context the model
 * was trained on, and whether the model fits the GPU memory budget there (the KV cache grows by
 * the same bytes per token, so one estimate gives every context).
 */
import type { MemoryEstimate } from '../../src-preload/api';
import { formatBytes } from './format';
import type { MemoryBudget } from './export-budget';

export const CONTEXT_CHOICES = [2048, 4096, 8192, 32768, 131072] as const;

export interface ContextChoice {
  tokens: number;
  /** Past the model's trained context (general's context_length): its answers degrade there. */
  pastTrained: boolean;
  /** Weights and KV cache within the budget; null with no budget or no KV estimate. */
  fits: boolean | null;
  /** What the button's title says about it. */
  note: string;
}

/** Weights and everything else but the KV cache, plus the KV cache at `tokens`; null without a per-token figure. */
export function bytesAt(estimate: MemoryEstimate, tokens: number): number | null {
  if (estimate.kvBytesPerToken === null || estimate.kvBytes === null) return null;
  return estimate.totalBytes - estimate.kvBytes + estimate.kvBytesPerToken * tokens;
}

export function contextChoices(
  trained: number | null,
  estimate: MemoryEstimate | null,
  budget: MemoryBudget | null,
): ContextChoice[] {
  return CONTEXT_CHOICES.map((tokens) => {
    const pastTrained = trained !== null && tokens > trained;
    const bytes = estimate && budget ? bytesAt(estimate, tokens) : null;
    const fits = bytes === null || !budget ? null : bytes <= budget.bytes;
    const notes: string[] = [];
    if (trained !== null && pastTrained)
      notes.push(
        `Past the ${trained.toLocaleString('en')} tokens the model was trained on: its answers degrade there.`,
      );
    if (fits !== null && bytes !== null && budget)
      notes.push(
        `${formatBytes(bytes)} ${fits ? 'fits' : 'is over'} the GPU memory budget of ${formatBytes(budget.bytes)} (${budget.source}).`,
      );
    return { tokens, pastTrained, fits, note: notes.join(' ') };
  });
}
