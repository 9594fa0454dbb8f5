/**
 * What re-quantizing a tensor would cost in accuracy: a sample of its rows, decoded to f32, is
 * encoded to each type Gufo can write and decoded back; the error is measured against the values
 * the file holds now. Runs in the background (a 'requant-error' job), one type at a time.
 */
import type { RequantError, RequantErrorRow } from '../../../src-preload/api';
import { bitsPerWeight, GGML_TYPES, ggmlRowBytes, type GgmlType } from '../../core/ggml-types';
import type { GgufFile, GgufTensorInfo } from '../../core/gguf/gguf-file';
import { decoderFor } from '../../core/quants/decoders';
import { encoderFor, hasEncoder, needsImportance } from '../../core/quants/encoders';
import { sampleTensor } from './tensor-sample';

/** Values compared at most (whole rows, evenly spread). */
export const REQUANT_SAMPLE = 1 << 18;

/**
 * Every type Gufo can encode, but F32 (it would only copy the values) and those that need an
 * importance matrix (there is none here), highest bits per weight first.
 */
export function requantCandidates(): GgmlType[] {
  return GGML_TYPES.filter((t) => hasEncoder(t) && !needsImportance(t) && t.name !== 'F32').sort(
    (a, b) => bitsPerWeight(b) - bitsPerWeight(a),
  );
}

export interface RequantProgress {
  signal?: AbortSignal;
  /** After each type: types done, of `total`, and the type about to run (null at the end). */
  onProgress?: (done: number, total: number, next: string | null) => void;
}

/** Root-mean-square and largest absolute difference over the `count` finite source values. */
function compare(source: Float32Array, back: Float32Array, count: number): { rmse: number; maxError: number } {
  let squares = 0;
  let maxError = 0;
  for (let i = 0; i < source.length; i++) {
    const s = source[i]!;
    if (!Number.isFinite(s)) continue;
    const e = Math.abs(back[i]! - s);
    squares += e * e;
    if (e > maxError) maxError = e;
  }
  return { rmse: count ? Math.sqrt(squares / count) : 0, maxError };
}

/** `values` (`rows` rows, finite) encoded to `type`, with importance weights per column if given, and decoded back. */
export function roundTrip(
  type: GgmlType,
  values: Float32Array,
  rows: number,
  rowLength: number,
  importance: Float32Array | null = null,
): Float32Array {
  const bytes = new Uint8Array(ggmlRowBytes(type, values.length));
  encoderFor(type)(values, bytes, rows, rowLength, importance);
  const back = new Float32Array(values.length);
  decoderFor(type)(bytes, back, values.length / type.blockSize);
  return back;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export async function requantError(
  gguf: GgufFile,
  tensor: GgufTensorInfo,
  options: RequantProgress = {},
): Promise<RequantError> {
  const { values, rows, rowLength, rowCount } = sampleTensor(gguf, tensor, REQUANT_SAMPLE);
  // Encoders need finite input; NaN and infinities (corrupt weights) are encoded as 0 and left out of the error.
  const input = values.map((v) => (Number.isFinite(v) ? v : 0));
  const elements = values.reduce((n, v) => n + (Number.isFinite(v) ? 1 : 0), 0);
  const candidates = requantCandidates();
  const result: RequantErrorRow[] = [];
  for (const [i, type] of candidates.entries()) {
    options.onProgress?.(i, candidates.length, type.name);
    await nextTurn();
    options.signal?.throwIfAborted();
    const row = { type: type.name, bitsPerWeight: bitsPerWeight(type) };
    if (rowLength % type.blockSize !== 0) {
      result.push({
        ...row,
        rmse: null,
        maxError: null,
        note: `rows of ${rowLength} values are not whole ${type.name} blocks of ${type.blockSize}`,
      });
      continue;
    }
    const { rmse, maxError } = compare(values, roundTrip(type, input, rows.length, rowLength), elements);
    result.push({ ...row, rmse, maxError, note: null });
  }
  options.onProgress?.(candidates.length, candidates.length, null);
  return {
    tensor: tensor.name,
    sourceType: tensor.type.name,
    elements,
    rowsSampled: rows.length,
    rowCount,
    rows: result,
  };
}
