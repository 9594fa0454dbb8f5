/**
 * A bounded sample of a tensor's values for statistics: every row when they fit, else rows spread
 * evenly over the tensor (first to last), so a 1 GB embedding is summarised from a few MB read.
 */
import { dequantizeRows } from '../../core/dequantize';
import type { GgufFile, GgufTensorInfo } from '../../core/gguf/gguf-file';
import { hasDecoder } from '../../core/quants/decoders';

export interface TensorSample {
  /** The sampled rows' values, row after row. */
  values: Float32Array;
  /** Row indices sampled, ascending. */
  rows: number[];
  rowLength: number;
  rowCount: number;
}

/** Rows to read so that about `cap` values are sampled (at least one row). */
export function sampleRows(rowCount: number, rowLength: number, cap: number): number[] {
  const want = Math.max(1, Math.floor(cap / Math.max(1, rowLength)));
  if (want >= rowCount) return Array.from({ length: rowCount }, (_, i) => i);
  return Array.from({ length: want }, (_, i) => Math.floor((i * rowCount) / want));
}

/** Reads and decodes the sampled rows of `tensor`; runs of consecutive rows are read at once. */
export function sampleTensor(gguf: GgufFile, tensor: GgufTensorInfo, cap: number): TensorSample {
  if (!hasDecoder(tensor.type))
    throw new Error(`${gguf.file}: tensor "${tensor.name}" is ${tensor.type.name}, which Gufo cannot decode`);
  const rowLength = tensor.ne[0] ?? 1;
  const rowCount = rowLength === 0 ? 0 : tensor.elements / rowLength;
  const rows = sampleRows(rowCount, rowLength, cap);
  const values = new Float32Array(rows.length * rowLength);
  for (let i = 0; i < rows.length;) {
    let end = i + 1;
    while (end < rows.length && rows[end] === rows[end - 1]! + 1) end++;
    values.set(dequantizeRows(gguf, tensor, rows[i]!, rows[end - 1]! + 1), i * rowLength);
    i = end;
  }
  return { values, rows, rowLength, rowCount };
}
