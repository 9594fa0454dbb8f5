/**
 * What an export to a llama.cpp file type will write, known before writing it: the exact file
 * size (the recipe's per-tensor types laid out by the same GGUF writer quantizeFile uses), bits
 * per weight, and what would stop it or cost quality (tensors that are already quantized).
 */
import type { GgufFile } from './gguf/gguf-file';
import type { ImportanceMatrix } from './imatrix';
import { GgufType, type GgufKv } from './gguf/values';
import { layoutGguf } from './gguf/writer';
import { planQuantization, tensorNeedsImatrix, type QuantFileType, type RecipeOptions } from './quant-recipes';
import { RECIPE_KEY, recipeJson } from './recipe-overrides';
import { decoderFor } from './quants/decoders';
import { encoderFor } from './quants/encoders';

/**
 * The metadata of a quantized file: the source's, with general.file_type and
 * general.quantization_version set as llama.cpp sets them (and the imatrix entry count when one
 * was used, and a custom recipe's JSON from recipeJson). node/quantize.ts writes exactly these.
 */
export function quantizedFileKvs(
  kvs: readonly GgufKv[],
  fileTypeId: number,
  quantizationVersion: number,
  imatrixEntries?: number,
  recipe?: string | null,
): GgufKv[] {
  const set: GgufKv[] = [
    { key: 'general.quantization_version', type: GgufType.UINT32, value: quantizationVersion },
    { key: 'general.file_type', type: GgufType.UINT32, value: fileTypeId },
  ];
  if (imatrixEntries !== undefined)
    set.push({ key: 'quantize.imatrix.entries_count', type: GgufType.INT32, value: imatrixEntries });
  if (recipe) set.push({ key: RECIPE_KEY, type: GgufType.STRING, value: recipe });
  // A source written with a recipe of its own does not pass it on.
  const replaced = new Set([...set.map((kv) => kv.key), RECIPE_KEY]);
  return [...kvs.filter((kv) => !replaced.has(kv.key)), ...set];
}

/** One tensor of the output, in write order. */
export interface PredictedTensor {
  name: string;
  elements: number;
  /** Source elements of the tensors written before this one. */
  elementsBefore: number;
  /** Absolute file offset of its data, and its byte length (padding not included). */
  start: number;
  bytes: number;
}

export interface ExportPrediction {
  fileType: QuantFileType;
  /** The size of the written file, exactly. */
  fileBytes: number;
  /** Tensor data without padding. */
  tensorBytes: number;
  elements: number;
  /** tensorBytes × 8 / elements, over every tensor (norms included), as the library reports it. */
  bitsPerWeight: number;
  /** Tensors whose mixture type did not fit their rows, grouped by that type and the type taken instead. */
  fallbacks: TypeFallback[];
  /** Tensors per ggml type in the output, most tensors first. */
  outputTypes: { type: string; tensors: number }[];
  /** Tensors already quantized that this type would convert again, through f32, losing quality. */
  requantized: { name: string; from: string; to: string }[];
  /** Why Gufo cannot write this type for this model (a type it has no codec for, or one that needs an importance matrix and has none), or null. */
  unsupported: string | null;
  tensors: PredictedTensor[];
}

/** `tensors` tensors the mixture wanted as `from` are written as `to`, since their rows do not hold `from`'s blocks. */
export interface TypeFallback {
  from: string;
  to: string;
  tensors: number;
}

/**
 * One target type's plan, the shape `gufo quantize --plan --json` prints and the export screen
 * shows: exact file bytes, real bits per weight, and the fallbacks behind them.
 */
export interface QuantizePlanEntry {
  type: QuantFileType;
  bytes: number;
  bitsPerWeight: number;
  fallbacks: TypeFallback[];
}

export function planEntry(p: ExportPrediction): QuantizePlanEntry {
  return { type: p.fileType, bytes: p.fileBytes, bitsPerWeight: p.bitsPerWeight, fallbacks: p.fallbacks };
}

/** Counts of equal keys, most first (ties in first-seen order). */
function countBy<T>(items: readonly T[], key: (item: T) => string): [string, number][] {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return [...counts].sort((a, b) => b[1] - a[1]);
}

/**
 * Predicts the export of `model` to `fileType`; throws when the recipe cannot plan it.
 * `imatrixEntries`: the matrices of the importance matrix used, if any (the file records the count,
 * and some mixtures differ with one).
 * `imatrix`: that matrix itself, when at hand: then a tensor it has no weights for cannot take a
 * type that needs them (without it, any importance matrix is taken to cover every tensor).
 */
export function predictExport(
  model: GgufFile,
  fileType: QuantFileType,
  options: RecipeOptions & { imatrixEntries?: number; imatrix?: ImportanceMatrix } = {},
): ExportPrediction {
  const plan = planQuantization(model, fileType, {
    ...options,
    hasImatrix: options.imatrix !== undefined || options.imatrixEntries !== undefined,
  });
  const layout = layoutGguf({
    kvs: quantizedFileKvs(
      model.kvs,
      plan.fileTypeId,
      plan.quantizationVersion,
      options.imatrixEntries,
      recipeJson(fileType, options),
    ),
    tensors: plan.tensors.map((t) => ({ name: t.name, type: t.to, ne: t.ne })),
  });
  const requantized: ExportPrediction['requantized'] = [];
  let unsupported: string | null = null;
  let elements = 0;
  let tensorBytes = 0;
  const tensors = plan.tensors.map((t, i): PredictedTensor => {
    const count = t.ne.reduce((a, b) => a * b, 1);
    const { offset, bytes } = layout.tensors[i]!;
    const tensor = {
      name: t.name,
      elements: count,
      elementsBefore: elements,
      start: layout.dataOffset + offset,
      bytes,
    };
    elements += count;
    tensorBytes += bytes;
    if (t.from === t.to) return tensor;
    if (t.from.quantized) requantized.push({ name: t.name, from: t.from.name, to: t.to.name });
    try {
      // The codecs quantizeFile will need: decode the source, encode the target.
      decoderFor(t.from);
      encoderFor(t.to);
      if (
        tensorNeedsImatrix(fileType, t.name, t.to) &&
        !(options.imatrix ? options.imatrix.has(t.name) : options.imatrixEntries !== undefined)
      ) {
        // Named as the file type's choice: an IQ3_XXS file's mixture puts IQ2_S on some tensors.
        throw new Error(
          options.imatrix
            ? `${fileType} makes it ${t.to.name}, which needs importance weights, and the importance matrix has none for it`
            : `${fileType} makes it ${t.to.name}, which needs an importance matrix (--imatrix FILE)`,
        );
      }
    } catch (err) {
      unsupported ??= `tensor "${t.name}": ${(err as Error).message}`;
    }
    return tensor;
  });
  const fellBack = plan.tensors.filter((x) => x.fallbackFrom !== null);
  return {
    fileType,
    fileBytes: layout.fileBytes,
    tensorBytes,
    elements,
    bitsPerWeight: elements === 0 ? 0 : (tensorBytes * 8) / elements,
    fallbacks: countBy(fellBack, (x) => `${x.fallbackFrom!.name}\n${x.to.name}`).map(([key, tensors]) => {
      const [from, to] = key.split('\n') as [string, string];
      return { from, to, tensors };
    }),
    outputTypes: countBy(plan.tensors, (x) => x.to.name).map(([type, tensors]) => ({ type, tensors })),
    requantized,
    unsupported,
    tensors,
  };
}

/**
 * Output bytes written by the time quantizeFile reports `elementsDone` source elements converted
 * while on tensor `index` (its progress counts elements; the UI shows bytes of the predicted size).
 */
export function bytesWrittenAt(prediction: ExportPrediction, index: number, elementsDone: number): number {
  const t = prediction.tensors[index];
  if (!t) return prediction.fileBytes;
  const fraction = t.elements === 0 ? 1 : Math.min(1, Math.max(0, (elementsDone - t.elementsBefore) / t.elements));
  return t.start + Math.round(fraction * t.bytes);
}
