/**
 * The error an export's tensors carry against its source's, over every element decoded to f32:
 * RMSE, relative error ‖export − source‖ / ‖source‖ and signal-to-noise ratio
 * 10·log10(Σ source² / Σ (export − source)²) in dB; per tensor, pooled by layer, by role and over
 * the whole model. A step generator, so a caller can show progress, yield to its event loop and
 * stop between chunks; memory stays bounded by the chunk size.
 */
import { dequantizeRows } from '../dequantize';
import { decodedValues } from '../quants/decoders';
import type { GgufFile, GgufTensorInfo } from '../gguf/gguf-file';
import { tensorLocation } from '../tensor-names';
import { QualityError } from './perplexity';

export interface ErrorFigures {
  elements: number;
  rmse: number;
  /** null when the source is all zeros. */
  relativeError: number | null;
  /** null when there is no error (an unchanged tensor: infinite SNR) or no signal. */
  snrDb: number | null;
}

export interface TensorError extends ErrorFigures {
  name: string;
  layer: number | null;
  role: string;
  sourceType: string;
  exportType: string;
}

export interface LayerError extends ErrorFigures {
  /** null: tensors outside the blocks (embeddings, output, final norm). */
  layer: number | null;
}

export interface RoleError extends ErrorFigures {
  role: string;
}

export interface TensorErrorReport {
  /** In the source's order. */
  tensors: TensorError[];
  /** Ascending, tensors outside the blocks last. */
  byLayer: LayerError[];
  /** In order of first appearance in the source. */
  byRole: RoleError[];
  total: ErrorFigures;
}

export interface TensorErrorProgress {
  tensor: string;
  index: number;
  count: number;
  elementsDone: number;
  elementsTotal: number;
}

/** Elements decoded from each file at a time (whole rows, at least one). */
const CHUNK_ELEMENTS = 1 << 20;

/** Σ source², Σ (other − source)² and the elements they were summed over: what the figures are made of. */
export interface ErrorSums {
  elements: number;
  signal: number;
  noise: number;
}

export const emptySums = (): ErrorSums => ({ elements: 0, signal: 0, noise: 0 });

export function addSums(into: ErrorSums, from: ErrorSums): void {
  into.elements += from.elements;
  into.signal += from.signal;
  into.noise += from.noise;
}

/** Adds the differences of `other` from `source`, element by element, to `into`. */
export function addDifferences(into: ErrorSums, source: Float32Array, other: Float32Array): void {
  for (let i = 0; i < source.length; i++) {
    const d = other[i]! - source[i]!;
    into.signal += source[i]! * source[i]!;
    into.noise += d * d;
  }
  into.elements += source.length;
}

export function figures(s: ErrorSums): ErrorFigures {
  return {
    elements: s.elements,
    rmse: s.elements > 0 ? Math.sqrt(s.noise / s.elements) : 0,
    relativeError: s.signal > 0 ? Math.sqrt(s.noise / s.signal) : null,
    snrDb: s.signal > 0 && s.noise > 0 ? 10 * Math.log10(s.signal / s.noise) : null,
  };
}

/** Each source tensor with its export counterpart; the two files must hold the same names and shapes. */
function pairTensors(source: GgufFile, exported: GgufFile): [GgufTensorInfo, GgufTensorInfo][] {
  const pairs = source.tensors.map((s): [GgufTensorInfo, GgufTensorInfo] => {
    const e = exported.tensor(s.name);
    if (!e) throw new QualityError(`${exported.file}: no tensor "${s.name}", which ${source.file} has`);
    if (e.ne.length !== s.ne.length || e.ne.some((n, i) => n !== s.ne[i])) {
      throw new QualityError(
        `${exported.file}: tensor "${s.name}" has shape [${e.ne.join(', ')}], in ${source.file} it has [${s.ne.join(', ')}]`,
      );
    }
    return [s, e];
  });
  const extra = exported.tensors.find((e) => !source.tensor(e.name));
  if (extra) throw new QualityError(`${exported.file}: tensor "${extra.name}" is not in ${source.file}`);
  return pairs;
}

/** Compares every tensor of `exported` with the same tensor of `source`; yields after each chunk. */
export function* tensorErrorSteps(
  source: GgufFile,
  exported: GgufFile,
): Generator<TensorErrorProgress, TensorErrorReport> {
  const pairs = pairTensors(source, exported);
  const elementsTotal = pairs.reduce((n, [s]) => n + s.elements, 0);
  let elementsDone = 0;
  const tensors: TensorError[] = [];
  const layers = new Map<number | null, ErrorSums>();
  const roles = new Map<string, ErrorSums>();
  const total = emptySums();
  // Each chunk is decoded into these, which the WebAssembly decoders fill without a copy out.
  let sourceValues = decodedValues(CHUNK_ELEMENTS);
  let exportValues = decodedValues(CHUNK_ELEMENTS);
  for (const [index, [s, e]] of pairs.entries()) {
    const sums = emptySums();
    const columns = s.ne[0] ?? 1;
    const rows = columns > 0 ? s.elements / columns : 0;
    const step = Math.max(1, Math.floor(CHUNK_ELEMENTS / columns));
    if (step * columns > sourceValues.length) {
      sourceValues = decodedValues(step * columns);
      exportValues = decodedValues(step * columns);
    }
    for (let row = 0; row < rows; row += step) {
      const end = Math.min(rows, row + step);
      const a = dequantizeRows(source, s, row, end, sourceValues);
      addDifferences(sums, a, dequantizeRows(exported, e, row, end, exportValues));
      elementsDone += a.length;
      yield { tensor: s.name, index, count: pairs.length, elementsDone, elementsTotal };
    }
    const { layer, role } = tensorLocation(s.name);
    tensors.push({ name: s.name, layer, role, sourceType: s.type.name, exportType: e.type.name, ...figures(sums) });
    if (!layers.has(layer)) layers.set(layer, emptySums());
    if (!roles.has(role)) roles.set(role, emptySums());
    addSums(layers.get(layer)!, sums);
    addSums(roles.get(role)!, sums);
    addSums(total, sums);
  }
  const layerOrder = (a: number | null, b: number | null) => (a === null ? 1 : b === null ? -1 : a - b);
  return {
    tensors,
    byLayer: [...layers.keys()].sort(layerOrder).map((layer) => ({ layer, ...figures(layers.get(layer)!) })),
    byRole: [...roles].map(([role, sums]) => ({ role, ...figures(sums) })),
    total: figures(total),
  };
}
