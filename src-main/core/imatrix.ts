import type { GgufFile } from './gguf/gguf-file';
import { dequantizeTensor } from './dequantize';
import { GgufError } from './gguf/errors';
import { ggmlTypeByName } from './ggml-types';
import type { GgufHeaderSpec } from './gguf/writer';
import { GgufType, StringArray } from './gguf/values';

/**
 * An importance matrix, as llama.cpp's `llama-imatrix` computes it: per tensor, one weight per
 * input column (times the number of experts for stacked MoE tensors), the mean squared
 * activation that column saw. Quantizers spend their precision where the weights are large.
 */
export type ImportanceMatrix = ReadonlyMap<string, Float32Array>;

/**
 * The legacy binary `imatrix.dat`: i32 entry count, then per entry an i32-length name, i32 call
 * count, i32 value count and the f32 sums. Each sum is divided by the call count, as
 * llama-quantize does when it loads one.
 */
export function parseLegacyImatrix(bytes: Uint8Array, file: string): ImportanceMatrix {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  const i32 = (field: string): number => {
    if (pos + 4 > bytes.byteLength) throw new GgufError(file, field, `file is truncated at offset ${pos}`);
    const v = view.getInt32(pos, true);
    pos += 4;
    if (v < 0) throw new GgufError(file, field, `negative count ${v}`);
    return v;
  };
  const entries = new Map<string, Float32Array>();
  const count = i32('entry count');
  for (let i = 0; i < count; i++) {
    const nameLength = i32(`entry ${i} name length`);
    if (pos + nameLength > bytes.byteLength) throw new GgufError(file, `entry ${i} name`, 'file is truncated');
    const name = new TextDecoder().decode(bytes.subarray(pos, pos + nameLength));
    pos += nameLength;
    const calls = i32(`"${name}" call count`);
    const values = i32(`"${name}" value count`);
    if (pos + values * 4 > bytes.byteLength)
      throw new GgufError(file, `"${name}" values`, `needs ${values * 4} bytes, only ${bytes.byteLength - pos} left`);
    const weights = new Float32Array(values);
    new Uint8Array(weights.buffer).set(bytes.subarray(pos, pos + values * 4));
    pos += values * 4;
    if (calls > 0) for (let j = 0; j < values; j++) weights[j]! /= calls;
    if (entries.has(name)) throw new GgufError(file, `"${name}"`, 'duplicate entry');
    entries.set(name, weights);
  }
  return entries;
}

/**
 * The GGUF imatrix format (`general.type` = "imatrix"): per tensor `<name>.in_sum2` (sums of
 * squared activations, [columns, matrices]), `<name>.counts` ([1, matrices]) and, in newer files,
 * `<name>.in_sum` (sums of the activations, shaped as in_sum2; quantizing does not use it, as
 * llama-quantize does not). The weight is sum / count, and 1 for a matrix that saw no activations
 * (an expert no token chose).
 */
export function imatrixFromGguf(gguf: GgufFile): ImportanceMatrix {
  const read = (name: string) => dequantizeTensor(gguf, gguf.tensor(name)!);
  const entries = new Map<string, Float32Array>();
  for (const t of gguf.tensors) {
    if (t.name.endsWith('.in_sum')) {
      const sums2 = gguf.tensor(`${t.name}2`);
      if (!sums2) throw new GgufError(gguf.file, `tensor "${t.name}"`, 'has no .in_sum2 beside it');
      if (sums2.ne.join() !== t.ne.join())
        throw new GgufError(
          gguf.file,
          `tensor "${t.name}"`,
          `shape [${t.ne.join(', ')}] differs from its .in_sum2's [${sums2.ne.join(', ')}]`,
        );
      continue;
    }
    if (!t.name.endsWith('.in_sum2')) continue;
    const name = t.name.slice(0, -'.in_sum2'.length);
    if (!gguf.tensor(`${name}.counts`))
      throw new GgufError(gguf.file, `tensor "${name}.counts"`, 'missing for its .in_sum2');
    const sums = read(t.name);
    const counts = read(`${name}.counts`);
    const columns = t.ne[0] ?? 1;
    if (counts.length * columns !== sums.length)
      throw new GgufError(
        gguf.file,
        `tensor "${name}.counts"`,
        `${counts.length} counts for ${sums.length / columns} matrices`,
      );
    const weights = new Float32Array(sums.length);
    for (let m = 0; m < counts.length; m++) {
      const n = counts[m]!;
      for (let j = m * columns; j < (m + 1) * columns; j++) weights[j] = n > 0 ? sums[j]! / n : 1;
    }
    entries.set(name, weights);
  }
  return entries;
}

/**
 * What llama-imatrix collects per weight matrix, for each of its matrices (one; the experts of a
 * stacked MoE tensor): Σ x² and Σ x per input column ([matrix][column]) over the `counts[m]`
 * tokens that matrix saw (for an expert, the tokens routed to it).
 */
export interface CollectedWeight {
  weight: string;
  sums: Float32Array;
  inSums: Float32Array;
  counts: readonly number[];
}

export interface ImatrixRun {
  /** The texts the statistics came from (imatrix.datasets). */
  datasets: readonly string[];
  /** Chunks evaluated and their size in tokens (imatrix.chunk_count, imatrix.chunk_size). */
  chunkCount: number;
  chunkSize: number;
  weights: readonly CollectedWeight[];
}

/**
 * llama-imatrix's GGUF file for `run`: general.type "imatrix", its three imatrix.* keys, and per
 * weight (sorted by name, as it writes them) `<name>.in_sum2` [columns, matrices],
 * `<name>.counts` [1, matrices] and `<name>.in_sum` [columns, matrices], all F32, in that order.
 * Returns the header and each tensor's values, in order.
 */
export function imatrixGguf(run: ImatrixRun): { spec: GgufHeaderSpec; data: Float32Array[] } {
  const f32 = ggmlTypeByName('F32')!;
  const weights = [...run.weights].sort((a, b) => (a.weight < b.weight ? -1 : a.weight > b.weight ? 1 : 0));
  const tensors: GgufHeaderSpec['tensors'][number][] = [];
  const data: Float32Array[] = [];
  for (const w of weights) {
    const matrices = w.counts.length;
    const columns = w.sums.length / matrices;
    tensors.push(
      { name: `${w.weight}.in_sum2`, type: f32, ne: [columns, matrices] },
      { name: `${w.weight}.counts`, type: f32, ne: [1, matrices] },
      { name: `${w.weight}.in_sum`, type: f32, ne: [columns, matrices] },
    );
    data.push(w.sums, Float32Array.from(w.counts), w.inSums);
  }
  const kvs = [
    { key: 'general.type', type: GgufType.STRING, value: 'imatrix' },
    {
      key: 'imatrix.datasets',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.STRING, items: StringArray.fromStrings(run.datasets) },
    },
    { key: 'imatrix.chunk_count', type: GgufType.UINT32, value: run.chunkCount },
    { key: 'imatrix.chunk_size', type: GgufType.UINT32, value: run.chunkSize },
  ] as const;
  return { spec: { kvs, tensors }, data };
}

/**
 * The smallest chunk: llama-imatrix collects a dense matrix only from a batch of at least 16
 * tokens (smaller ones would give a file with just the experts' sums), so shorter chunks are refused.
 */
export const MIN_IMATRIX_CHUNK = 16;

/**
 * llama-imatrix's chunks of a tokenized text (BOS first where the vocabulary adds one): whole
 * chunks of `ctx` tokens, at most `maxChunks`, each evaluated from an empty context with its
 * first token replaced by `bos` (null: kept). It refuses a text shorter than two chunks.
 */
export function imatrixChunks(
  tokens: readonly number[],
  ctx: number,
  maxChunks: number,
  bos: number | null,
  label: string,
): number[][] {
  if (ctx < MIN_IMATRIX_CHUNK) {
    throw new Error(
      `--ctx ${ctx}: an importance matrix needs chunks of at least ${MIN_IMATRIX_CHUNK} tokens (llama-imatrix collects nothing from smaller batches)`,
    );
  }
  if (tokens.length < 2 * ctx) {
    throw new Error(
      `${label}: tokenizes to ${tokens.length} tokens; an importance matrix with --ctx ${ctx} needs at least ${2 * ctx}`,
    );
  }
  const count = Math.min(maxChunks, Math.floor(tokens.length / ctx));
  return Array.from({ length: count }, (_, i) => {
    const chunk = tokens.slice(i * ctx, (i + 1) * ctx);
    if (bos !== null) chunk[0] = bos;
    return chunk;
  });
}
