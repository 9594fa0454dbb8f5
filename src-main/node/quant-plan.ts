/**
 * The quantization plan: for each file type, the exact size `gufo quantize` would write, its bits
 * per weight and fallbacks (core/export-size.ts), and its predicted quality. The prediction
 * measures, for every tensor, a sample of rows (sampleTensor: evenly spread, the same on every
 * run) encoded to the type the recipe gives it and decoded back (the inspector's round trip),
 * against the source's values, with the sums `gufo tensor-error` uses; each tensor's sums are
 * scaled to its element count, so the pooled figures weigh tensors by their elements. One round
 * trip per tensor and ggml type serves every file type that gives the tensor that type.
 */
import type { PredictedQuality } from '../../src-preload/api';
import type { GgmlType } from '../core/ggml-types';
import { planEntry, predictExport, type QuantizePlanEntry } from '../core/export-size';
import type { GgufFile, GgufTensorInfo } from '../core/gguf/gguf-file';
import type { ImportanceMatrix } from '../core/imatrix';
import { addDifferences, addSums, emptySums, figures, type ErrorSums } from '../core/quality/tensor-error';
import {
  planQuantization,
  QUANT_FILE_TYPES,
  type PlannedTensor,
  type QuantFileType,
  type RecipeOptions,
} from '../core/quant-recipes';
import { REQUANT_SAMPLE, roundTrip } from './inspect/requant-error';
import { sampleTensor, type TensorSample } from './inspect/tensor-sample';
import { importanceFor } from './quantize';

/** One row of `gufo quantize --plan --json`; bytes, bitsPerWeight and predicted are null when the type is unavailable. */
export interface QuantizePlanRow extends Omit<QuantizePlanEntry, 'bytes' | 'bitsPerWeight'> {
  bytes: number | null;
  bitsPerWeight: number | null;
  predicted: PredictedQuality | null;
  /** Why Gufo cannot write this type for this model, or null. */
  unavailable: string | null;
}

export interface QuantPlanOptions extends RecipeOptions {
  imatrix?: ImportanceMatrix;
  /** Default: every file type Gufo writes. */
  types?: readonly QuantFileType[];
  signal?: AbortSignal;
  /** After each tensor measured: tensors done, of `total`, and the next one (null at the end). */
  onProgress?: (done: number, total: number, next: string | null) => void;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** The plan of every type in `options.types`, in that order; yields to the event loop between tensors. */
export async function quantizePlan(gguf: GgufFile, options: QuantPlanOptions = {}): Promise<QuantizePlanRow[]> {
  return (await measuredPlan(gguf, options)).rows;
}

/**
 * The plan and the per-tensor measurements its predictions pool: kept (plain JSON), they predict
 * any recipe over the same tensors and types (pooledPrediction) without reading the model again.
 */
export async function measuredPlan(
  gguf: GgufFile,
  options: QuantPlanOptions = {},
): Promise<{ rows: QuantizePlanRow[]; measurements: PlanMeasurements }> {
  const types = options.types ?? QUANT_FILE_TYPES;
  const planned = types.map((fileType) => {
    try {
      const prediction = predictExport(gguf, fileType, { ...options, imatrixEntries: options.imatrix?.size });
      const tensors = planQuantization(gguf, fileType, {
        ...options,
        hasImatrix: options.imatrix !== undefined,
      }).tensors;
      return { fileType, entry: planEntry(prediction), tensors, unavailable: prediction.unsupported };
    } catch (err) {
      return { fileType, entry: null, tensors: [], unavailable: err instanceof Error ? err.message : String(err) };
    }
  });
  const measured = planned.filter((p) => p.unavailable === null);
  const measurements = await measureTensors(
    gguf,
    measured.flatMap((p) => p.tensors),
    options,
  );
  const rows = planned.map(({ fileType, entry, tensors, unavailable }): QuantizePlanRow => {
    if (entry === null || unavailable !== null) {
      return {
        type: fileType,
        bytes: entry?.bytes ?? null,
        bitsPerWeight: entry?.bitsPerWeight ?? null,
        fallbacks: entry?.fallbacks ?? [],
        predicted: null,
        unavailable,
      };
    }
    return { ...entry, predicted: pooledPrediction(tensors, measurements), unavailable: null };
  });
  return { rows, measurements };
}

/** The predicted quality of an export whose tensors are `tensors`; null when one of them was converted to a type not measured. */
export function pooledPrediction(
  tensors: readonly PlannedTensor[],
  measurements: PlanMeasurements,
): PredictedQuality | null {
  const total = emptySums();
  let sampledElements = 0;
  for (const t of tensors) {
    const m = Object.hasOwn(measurements, t.name) ? measurements[t.name]! : null;
    const sums = m && (t.from === t.to ? m.unchanged : Object.hasOwn(m.byType, t.to.name) ? m.byType[t.to.name] : null);
    if (!sums) return null;
    addSums(total, sums);
    sampledElements += m.sampledElements;
  }
  return { ...figures(total), sampledElements };
}

/** A tensor's sums scaled to its whole element count: unchanged (signal only) and per target ggml type name. */
export interface TensorMeasurement {
  sampledElements: number;
  unchanged: ErrorSums;
  byType: Record<string, ErrorSums>;
}

/** Per tensor name. */
export type PlanMeasurements = Record<string, TensorMeasurement>;

/** Round-trips each tensor's sample through every type the plans give it; one sample read per tensor. */
async function measureTensors(
  gguf: GgufFile,
  planned: readonly PlannedTensor[],
  options: QuantPlanOptions,
): Promise<PlanMeasurements> {
  const targets = new Map<string, { tensor: PlannedTensor; types: Map<string, GgmlType> }>();
  for (const t of planned) {
    if (!targets.has(t.name)) targets.set(t.name, { tensor: t, types: new Map() });
    if (t.from !== t.to) targets.get(t.name)!.types.set(t.to.name, t.to);
  }
  const result: PlanMeasurements = {};
  const names = [...targets.keys()];
  for (const [index, name] of names.entries()) {
    options.onProgress?.(index, names.length, name);
    await nextTurn();
    options.signal?.throwIfAborted();
    const { tensor, types } = targets.get(name)!;
    const info = gguf.tensor(name)!;
    const sample = sampleTensor(gguf, info, REQUANT_SAMPLE);
    // Encoders need finite input; NaN and infinities (corrupt weights) are measured as 0.
    const values = sample.values.map((v) => (Number.isFinite(v) ? v : 0));
    const scale = (s: ErrorSums): ErrorSums => {
      const f = s.elements === 0 ? 0 : info.elements / s.elements;
      return { elements: info.elements, signal: s.signal * f, noise: s.noise * f };
    };
    const unchanged = emptySums();
    addDifferences(unchanged, values, values);
    const byType: Record<string, ErrorSums> = {};
    for (const [typeName, type] of types) {
      const sums = emptySums();
      addDifferences(sums, values, roundTripSample(gguf, tensor, info, sample, values, type, options.imatrix));
      byType[typeName] = scale(sums);
    }
    result[name] = { sampledElements: values.length, unchanged: scale(unchanged), byType };
  }
  options.onProgress?.(names.length, names.length, null);
  return result;
}

/**
 * The sample encoded to `type` and decoded back. With an importance matrix, each run of sampled
 * rows from one matrix of a stacked tensor (one expert) is encoded with that matrix's weights.
 */
function roundTripSample(
  gguf: GgufFile,
  tensor: PlannedTensor,
  info: GgufTensorInfo,
  sample: TensorSample,
  values: Float32Array,
  type: GgmlType,
  imatrix: ImportanceMatrix | undefined,
): Float32Array {
  const { rows, rowLength } = sample;
  if (!imatrix?.has(tensor.name)) return roundTrip(type, values, rows.length, rowLength);
  const rowsPerMatrix = info.ne[1] ?? 1;
  const back = new Float32Array(values.length);
  for (let i = 0; i < rows.length;) {
    const matrix = Math.floor(rows[i]! / rowsPerMatrix);
    let end = i + 1;
    while (end < rows.length && Math.floor(rows[end]! / rowsPerMatrix) === matrix) end++;
    const part = values.subarray(i * rowLength, end * rowLength);
    back.set(
      roundTrip(type, part, end - i, rowLength, importanceFor(imatrix, tensor, matrix, gguf.file)),
      i * rowLength,
    );
    i = end;
  }
  return back;
}
