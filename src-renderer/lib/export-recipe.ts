/**
 * The Export screen's recipe editor, as data: a type per tensor role (or the mixture's choice),
 * optionally limited to a range of layers, turned into the export request's overrides
 * (regular expressions over tensor names, as `gufo quantize --tensor-type` takes them).
 */
import type { ExportRecipe, PredictedQuality } from '../../src-preload/api';

/** The roles the editor offers: the layers' weight matrices, then the two outside the layers. */
export const RECIPE_ROLES = ['attn_q', 'attn_k', 'attn_v', 'attn_output', 'ffn_gate', 'ffn_up', 'ffn_down', 'output', 'token_embd'] as const;
export type RecipeRole = (typeof RECIPE_ROLES)[number];

/** Types a role can take (the codecs Gufo writes without an importance matrix). */
export const RECIPE_TYPES = ['F16', 'Q8_0', 'Q6_K', 'Q5_K', 'Q5_1', 'Q5_0', 'Q4_K', 'Q4_1', 'Q4_0', 'Q3_K', 'Q2_K', 'IQ4_NL', 'IQ4_XS'] as const;

/** Roles outside the layers: the layer range does not apply to them. */
const OUTSIDE_LAYERS: readonly RecipeRole[] = ['output', 'token_embd'];

export interface LayerRange {
  first: number;
  last: number;
}

/** The pattern of one role: its tensors in every layer (or in `layers`), MoE experts included. */
export function rolePattern(role: RecipeRole, layers: LayerRange | null): string {
  if (OUTSIDE_LAYERS.includes(role)) return `^${role}\\.weight$`;
  const ids = layers ? Array.from({ length: layers.last - layers.first + 1 }, (_, i) => layers.first + i).join('|') : '\\d+';
  return `^blk\\.(?:${ids})\\.${role}(?:_exps|_shexp)?\\.weight$`;
}

/** The request's recipe for the chosen types (roles left to the mixture are absent), or undefined when none is chosen. */
export function recipeFromChoices(choices: Partial<Record<RecipeRole, string>>, layers: LayerRange | null): ExportRecipe | undefined {
  const tensorTypes = RECIPE_ROLES.flatMap((role) => {
    const type = choices[role];
    return type ? [{ pattern: rolePattern(role, layers), type }] : [];
  });
  return tensorTypes.length ? { tensorTypes } : undefined;
}

/** A layer range from the two inputs: null (every layer) when both are empty; an error text when it is not a range. */
export function parseLayerRange(first: string, last: string, layerCount: number | null): LayerRange | null | string {
  if (first.trim() === '' && last.trim() === '') return null;
  const a = first.trim() === '' ? 0 : Number(first);
  const b = last.trim() === '' ? (layerCount ?? 1) - 1 : Number(last);
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < a) return 'Layers: give a first and a last layer, first ≤ last.';
  if (layerCount !== null && b >= layerCount) return `Layers: this model has layers 0 to ${layerCount - 1}.`;
  return { first: a, last: b };
}

/** "predicted error 3.241% · SNR 29.8 dB", or what the prediction waits for. */
export function predictedQualityText(p: PredictedQuality | null): string {
  if (p === null) return 'predicted quality: once each type’s quality has been measured';
  if (p.relativeError === null) return 'predicted error: none (an all-zero model)';
  return `predicted error ${(p.relativeError * 100).toFixed(3)}%${p.snrDb === null ? '' : ` · SNR ${p.snrDb.toFixed(1)} dB`}`;
}
