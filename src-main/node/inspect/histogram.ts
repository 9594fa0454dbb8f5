/** The distribution of a tensor's weights: statistics and equal-width bins over a bounded sample. */
import type { Histogram } from '../../../src-preload/api';
import type { GgufFile, GgufTensorInfo } from '../../core/gguf/gguf-file';
import { sampleTensor } from './tensor-sample';

/** Values decoded for a histogram at most (whole rows: a row longer than this is read alone). */
export const HISTOGRAM_SAMPLE = 1 << 20;
export const MAX_BINS = 1000;

export function tensorHistogram(gguf: GgufFile, tensor: GgufTensorInfo, bins: number): Histogram {
  if (!Number.isSafeInteger(bins) || bins < 1 || bins > MAX_BINS)
    throw new Error(`bins must be a whole number from 1 to ${MAX_BINS}, got ${bins}`);
  const { values, rows, rowCount } = sampleTensor(gguf, tensor, HISTOGRAM_SAMPLE);
  let min = Infinity;
  let max = -Infinity;
  let sum = 0;
  let finite = 0;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    finite++;
    sum += v;
    if (v < min) min = v;
    if (v > max) max = v;
  }
  const mean = finite ? sum / finite : 0;
  let squares = 0;
  const counts = new Array<number>(bins).fill(0);
  const width = (max - min) / bins;
  for (const v of values) {
    if (!Number.isFinite(v)) continue;
    squares += (v - mean) ** 2;
    // The top edge belongs to the last bin; a constant tensor puts everything in the first.
    counts[width > 0 ? Math.min(bins - 1, Math.floor((v - min) / width)) : 0]!++;
  }
  return {
    tensor: tensor.name,
    sampled: values.length,
    rowsSampled: rows.length,
    rows: rowCount,
    elements: tensor.elements,
    nonFinite: values.length - finite,
    min: finite ? min : 0,
    max: finite ? max : 0,
    mean,
    std: finite ? Math.sqrt(squares / finite) : 0,
    counts,
  };
}
