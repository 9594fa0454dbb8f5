/**
 * The Export screen's recipe editor, as data: a type per tensor role (or the mixture's choice),
 * optionally limited to a range of layers, turned into the export request's overrides
 * (regular expressions over tensor names, as `gufo quantize --tensor-type` takes them).
 */
import type {
  ExportPlanView,
  ExportRecipe,
  ExportTypeOption,
  PredictedQuality,
  RecipeTypes,
} from '../../src-preload/api';

/** The roles the editor offers: the layers' weight matrices, then the two outside the layers. */
export const RECIPE_ROLES = [
  'attn_q',
  'attn_k',
  'attn_v',
  'attn_output',
  'ffn_gate',
  'ffn_up',
  'ffn_down',
  'output',
  'token_embd',
] as const;
export type RecipeRole = (typeof RECIPE_ROLES)[number];

/** Roles outside the layers: the layer range does not apply to them, nor llama-quantize's importance matrix rule. */
const OUTSIDE_LAYERS: readonly RecipeRole[] = ['output', 'token_embd'];

/** The back end's recipe types (ExportPlanView.recipeTypes). */
export type PlanRecipeTypes = ExportPlanView['recipeTypes'];

function typesOf(role: RecipeRole, types: PlanRecipeTypes): RecipeTypes {
  return role === 'output' || role === 'token_embd' ? types[role] : types.layer;
}

/** The types `role` takes without an importance matrix. */
export function typesWithoutImatrix(role: RecipeRole, types: PlanRecipeTypes): readonly string[] {
  return typesOf(role, types).without;
}

/** The types `role` takes only with an importance matrix. */
export function typesNeedingImatrix(role: RecipeRole, types: PlanRecipeTypes): readonly string[] {
  return typesOf(role, types).needing;
}

/** A group of a role's menu; `label` names why its types are apart (null: the plain ones). */
export interface TypeGroup {
  label: string | null;
  types: readonly string[];
}

/**
 * A role's menu: the types it takes without an importance matrix, then, once one is chosen (or
 * while the role still holds such a type after it was cleared), those that need one.
 */
export function roleTypeGroups(
  role: RecipeRole,
  types: PlanRecipeTypes,
  hasImatrix: boolean,
  current: string | undefined,
): TypeGroup[] {
  const needing = typesNeedingImatrix(role, types);
  const groups: TypeGroup[] = [{ label: null, types: typesWithoutImatrix(role, types) }];
  if (hasImatrix || (current !== undefined && needing.includes(current)))
    groups.push({ label: 'needs the importance matrix', types: needing });
  return groups;
}

/**
 * Why the chosen type cannot be exported, or null when it can: the roles whose type needs the
 * importance matrix when that is what stops it (the back end says so with needsImatrix), else the
 * back end's reason.
 */
export function recipeRefusal(
  option: ExportTypeOption,
  choices: Partial<Record<RecipeRole, string>>,
  hasImatrix: boolean,
  types: PlanRecipeTypes,
): string | null {
  if (option.unavailable === null) return null;
  const roles = hasImatrix
    ? []
    : RECIPE_ROLES.filter((role) => typesNeedingImatrix(role, types).includes(choices[role] ?? ''));
  if (!option.needsImatrix || roles.length === 0) return `${option.fileType} cannot be exported: ${option.unavailable}`;
  const held = roles.map((role) => `${role} is ${choices[role]}`).join(', ');
  return (
    `${option.fileType} cannot be exported with this recipe: ${held}, which ${roles.length === 1 ? 'needs' : 'need'} an importance matrix. ` +
    `Choose one under “Importance matrix”, or another type for ${roles.join(', ')}.`
  );
}

export interface LayerRange {
  first: number;
  last: number;
}

/** The pattern of one role: its tensors in every layer (or in `layers`), MoE experts included. */
export function rolePattern(role: RecipeRole, layers: LayerRange | null): string {
  if (OUTSIDE_LAYERS.includes(role)) return `^${role}\\.weight$`;
  const ids = layers
    ? Array.from({ length: layers.last - layers.first + 1 }, (_, i) => layers.first + i).join('|')
    : '\\d+';
  return `^blk\\.(?:${ids})\\.${role}(?:_exps|_shexp)?\\.weight$`;
}

/** The request's recipe for the chosen types (roles left to the mixture are absent), or undefined when none is chosen. */
export function recipeFromChoices(
  choices: Partial<Record<RecipeRole, string>>,
  layers: LayerRange | null,
): ExportRecipe | undefined {
  const tensorTypes = RECIPE_ROLES.flatMap((role) => {
    const type = choices[role];
    return type ? [{ pattern: rolePattern(role, layers), type }] : [];
  });
  return tensorTypes.length ? { tensorTypes } : undefined;
}

/**
 * Which overrides the one layer range limits: the chosen roles inside the layers (output and
 * token_embd lie outside them), e.g. "Layers of attn_v, ffn_down".
 */
export function layerRangeScope(choices: Partial<Record<RecipeRole, string>>): string {
  const roles = RECIPE_ROLES.filter((role) => choices[role] && !OUTSIDE_LAYERS.includes(role));
  return roles.length ? `Layers of ${roles.join(', ')}` : 'Layers of the layer overrides';
}

/** A layer range from the two inputs: null (every layer) when both are empty; an error text when it is not a range. */
export function parseLayerRange(first: string, last: string, layerCount: number | null): LayerRange | null | string {
  if (first.trim() === '' && last.trim() === '') return null;
  const a = first.trim() === '' ? 0 : Number(first);
  const b = last.trim() === '' ? (layerCount ?? 1) - 1 : Number(last);
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < a)
    return 'Layers: give a first and a last layer, first ≤ last.';
  if (layerCount !== null && b >= layerCount) return `Layers: this model has layers 0 to ${layerCount - 1}.`;
  return { first: a, last: b };
}

/** "predicted error 3.241% · SNR 29.8 dB", or what the prediction waits for. */
export function predictedQualityText(p: PredictedQuality | null): string {
  if (p === null) return 'predicted quality: once each type’s quality has been measured';
  if (p.relativeError === null) return 'predicted error: none (an all-zero model)';
  return `predicted error ${(p.relativeError * 100).toFixed(3)}%${p.snrDb === null ? '' : ` · SNR ${p.snrDb.toFixed(1)} dB`}`;
}
