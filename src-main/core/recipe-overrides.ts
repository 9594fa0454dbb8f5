/**
 * Custom recipes: llama-quantize's per-run overrides on top of a file type's mixture
 * (`--tensor-type PATTERN=TYPE`, `--output-tensor-type`, `--token-embedding-type`, `--pure`),
 * checked with clear errors, and written into the output as one metadata key so that the
 * inspector of the result can say how it was made.
 *
 * As in llama.cpp (src/llama-quant.cpp), a pattern is a regular expression searched anywhere in
 * the tensor name; the first pattern that matches decides, and the type it names replaces the
 * mixture's choice but still falls back when the rows cannot hold its blocks.
 */
import { ggmlTypeByName, type GgmlType } from './ggml-types';

/** The metadata key of a file written with a custom recipe: the recipe as JSON (see RecipeRecord). */
export const RECIPE_KEY = 'gufo.quantize.recipe';

export interface TensorTypeOverride {
  /** A regular expression, searched in each tensor name. */
  readonly pattern: string;
  readonly type: GgmlType;
}

/** The overrides of a recipe, as the CLI, the export API and the stored key spell them (type names). */
export interface RecipeOverrides {
  tensorTypes?: { pattern: string; type: string }[];
  outputTensorType?: string;
  tokenEmbeddingType?: string;
  pure?: boolean;
}

/** What RECIPE_KEY holds: the file type and the overrides it was written with. */
export interface RecipeRecord extends RecipeOverrides {
  fileType: string;
}

/** A ggml type by name (any case), or an error naming `what` and the bad name. */
export function overrideType(name: string, what: string): GgmlType {
  const type = ggmlTypeByName(name.trim());
  if (!type) throw new Error(`${what}: unknown ggml type "${name}" (e.g. q8_0, q6_k, q4_k, f16)`);
  return type;
}

/** One override, checked: the pattern must be a valid regular expression and the type a ggml type. */
export function tensorTypeOverride(pattern: string, typeName: string): TensorTypeOverride {
  if (pattern === '') throw new Error(`tensor type "=${typeName}": the pattern is empty`);
  try {
    new RegExp(pattern);
  } catch (err) {
    throw new Error(`tensor type pattern "${pattern}" is not a valid regular expression: ${(err as Error).message}`);
  }
  return { pattern, type: overrideType(typeName, `tensor type pattern "${pattern}"`) };
}

/** `PATTERN=TYPE` as llama-quantize's --tensor-type reads it: the pattern in lower case. */
export function parseTensorTypeArg(text: string): TensorTypeOverride {
  const eq = text.indexOf('=');
  if (eq < 0) throw new Error(`--tensor-type "${text}": expected PATTERN=TYPE, e.g. attn_v=q8_0`);
  const typeName = text.slice(eq + 1);
  if (typeName === '') throw new Error(`--tensor-type "${text}": the type after "=" is missing`);
  return tensorTypeOverride(text.slice(0, eq).toLowerCase(), typeName);
}

/** The type the first matching pattern gives `name`, or undefined when none matches. */
export function matchTensorType(
  overrides: readonly { regex: RegExp; type: GgmlType }[],
  name: string,
): GgmlType | undefined {
  return overrides.find((o) => o.regex.test(name))?.type;
}

/** Compiled once per plan (no global flag: test() keeps no state). */
export function compileTensorTypes(
  overrides: readonly TensorTypeOverride[] | undefined,
): { regex: RegExp; type: GgmlType }[] {
  return (overrides ?? []).map((o) => ({ regex: new RegExp(o.pattern), type: o.type }));
}

/** Options with types resolved, as the recipe rules take them. */
export interface ResolvedOverrides {
  tensorTypes?: readonly TensorTypeOverride[];
  outputTensorType?: GgmlType;
  tokenEmbeddingType?: GgmlType;
  pure?: boolean;
}

/** Checks overrides from outside (the export API): clear errors naming the pattern or option and what is wrong. */
export function resolveOverrides(o: RecipeOverrides): ResolvedOverrides {
  if (o.tensorTypes !== undefined && !Array.isArray(o.tensorTypes))
    throw new Error('tensorTypes must be a list of { pattern, type }');
  return {
    tensorTypes: o.tensorTypes?.map((t) => {
      if (typeof t?.pattern !== 'string' || typeof t.type !== 'string')
        throw new Error(`tensor type ${JSON.stringify(t)}: expected { pattern, type } strings`);
      return tensorTypeOverride(t.pattern, t.type);
    }),
    outputTensorType:
      o.outputTensorType === undefined ? undefined : overrideType(o.outputTensorType, 'output tensor type'),
    tokenEmbeddingType:
      o.tokenEmbeddingType === undefined ? undefined : overrideType(o.tokenEmbeddingType, 'token embedding type'),
    pure: o.pure === true ? true : undefined,
  };
}

/** The JSON RECIPE_KEY holds for these options, or null when there is nothing beyond the file type's mixture. */
export function recipeJson(fileType: string, o: ResolvedOverrides): string | null {
  const record: RecipeRecord = { fileType };
  if (o.tensorTypes?.length) record.tensorTypes = o.tensorTypes.map((t) => ({ pattern: t.pattern, type: t.type.name }));
  if (o.outputTensorType) record.outputTensorType = o.outputTensorType.name;
  if (o.tokenEmbeddingType) record.tokenEmbeddingType = o.tokenEmbeddingType.name;
  if (o.pure) record.pure = true;
  return Object.keys(record).length === 1 ? null : JSON.stringify(record);
}

/**
 * What a file written with these overrides is named after: the file type alone for its mixture,
 * else "Q8_0-custom-Q4_K-Q6_K" (the types the recipe sets, in order; "pure" when it is), so that
 * a custom file is not taken for the mixture's.
 */
export function recipeFileTag(fileType: string, o: ResolvedOverrides): string {
  const types = [
    ...(o.tensorTypes ?? []).map((t) => t.type.name),
    ...(o.outputTensorType ? [o.outputTensorType.name] : []),
    ...(o.tokenEmbeddingType ? [o.tokenEmbeddingType.name] : []),
    ...(o.pure ? ['pure'] : []),
  ];
  return types.length ? [fileType, 'custom', ...new Set(types)].join('-') : fileType;
}

/** One line for people: "Q4_K_M; attn_v=Q8_0, output Q8_0, pure". The raw text when it is not a recipe. */
export function recipeText(json: string): string {
  let r: RecipeRecord;
  try {
    r = JSON.parse(json) as RecipeRecord;
  } catch {
    return json;
  }
  if (typeof r !== 'object' || r === null || typeof r.fileType !== 'string') return json;
  const parts = [
    ...(r.tensorTypes ?? []).map((t) => `${t.pattern}=${t.type}`),
    ...(r.outputTensorType ? [`output ${r.outputTensorType}`] : []),
    ...(r.tokenEmbeddingType ? [`token embedding ${r.tokenEmbeddingType}`] : []),
    ...(r.pure ? ['pure'] : []),
  ];
  return parts.length ? `${r.fileType}; ${parts.join(', ')}` : r.fileType;
}
