import { lstatSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { decoderFor } from '../core/quants/decoders';
import { encoderFor } from '../core/quants/encoders';
import type { GgufFile } from '../core/gguf/gguf-file';
import type { ImportanceMatrix } from '../core/imatrix';
import { dequantizeRange } from '../core/dequantize';
import { quantizedFileKvs } from '../core/export-size';
import { planQuantization, type PlannedTensor, type QuantFileType, type RecipeOptions } from '../core/quant-recipes';
import { FileExistsError, removeStaleTemps } from './atomic-write';
import { openGguf, tensorChunks, writeGguf } from './gguf-io';

export interface QuantizeOptions extends RecipeOptions {
  imatrix?: ImportanceMatrix;
  /** Convert tensors that are already quantized (through f32, losing some quality). */
  allowRequantize?: boolean;
  /**
   * Replace an existing output (renaming the new file over it: it gets the default permissions,
   * not the old file's). Without it, an output that exists or appears meanwhile is refused.
   */
  overwrite?: boolean;
  signal?: AbortSignal;
  onProgress?: (progress: QuantizeProgress) => void;
}

export interface QuantizeProgress {
  tensor: string;
  /** Index of the tensor being written, and how many there are. */
  index: number;
  count: number;
  /** Source elements converted so far, over all tensors. */
  elementsDone: number;
  elementsTotal: number;
}

export interface TensorReport {
  name: string;
  from: string;
  to: string;
  /** Root-mean-square difference between the source values and the written values. */
  rmse: number;
}

export interface QuantizeReport {
  input: string;
  output: string;
  type: QuantFileType;
  tensors: TensorReport[];
  bytesIn: number;
  bytesOut: number;
  seconds: number;
}

/** Source elements converted at a time: memory stays bounded whatever the tensor size. */
const CHUNK_ELEMENTS = 1 << 22;

/** The importance weights for matrix `matrix` of a tensor, checked against its row length. */
function importanceFor(imatrix: ImportanceMatrix | undefined, t: PlannedTensor, matrix: number, file: string): Float32Array | null {
  const weights = imatrix?.get(t.name);
  if (!weights) return null;
  const columns = t.ne[0]!;
  const matrices = t.ne.slice(2).reduce((a, b) => a * b, 1);
  if (weights.length !== columns * matrices) {
    throw new Error(`${file}: importance matrix for "${t.name}" has ${weights.length} weights, the tensor needs ${columns * matrices}`);
  }
  return weights.subarray(matrix * columns, (matrix + 1) * columns);
}

/**
 * Converts one tensor chunk by chunk: decode the source rows to f32, encode them to the target
 * type, and accumulate the round-trip error. Chunks never straddle two matrices of a stacked
 * tensor, so each gets its own expert's importance weights.
 */
function* convertTensor(
  gguf: GgufFile,
  t: PlannedTensor,
  options: QuantizeOptions,
  error: { sum: number },
  progress: (elements: number) => void,
): Iterable<Uint8Array> {
  const source = gguf.tensor(t.name)!;
  const encode = encoderFor(t.to);
  const decode = decoderFor(t.to);
  const columns = t.ne[0]!;
  const rowsPerMatrix = t.ne[1] ?? 1;
  const rows = source.elements / columns;
  const step = Math.max(1, Math.min(rowsPerMatrix, Math.floor(CHUNK_ELEMENTS / columns)));
  for (let row = 0; row < rows; ) {
    options.signal?.throwIfAborted();
    const matrix = Math.floor(row / rowsPerMatrix);
    const end = Math.min(row + step, (matrix + 1) * rowsPerMatrix, rows);
    const values = dequantizeRange(gguf, source, row * columns, end * columns);
    const blocks = values.length / t.to.blockSize;
    const out = new Uint8Array(blocks * t.to.typeSize);
    encode(values, out, end - row, columns, importanceFor(options.imatrix, t, matrix, gguf.file));
    const back = new Float32Array(values.length);
    decode(out, back, blocks);
    for (let i = 0; i < values.length; i++) error.sum += (values[i]! - back[i]!) ** 2;
    progress(values.length);
    yield out;
    row = end;
  }
}

/** Refuses an output that is the input itself under any name (a hard link, a symlink): always, even when overwriting. */
function refuseInputAsOutput(input: string, output: string): void {
  const from = statSync(input);
  const to = statSync(output, { throwIfNoEntry: false });
  if (to && to.dev === from.dev && to.ino === from.ino) throw new Error(`${output} is the input file ${input}; write the output to another file`);
}

/**
 * Re-quantizes `input` to `fileType` the way llama-quantize does, tensor by tensor with bounded
 * memory, writing `output` all or nothing, and never over an existing file unless `overwrite`.
 */
export async function quantizeFile(input: string, output: string, fileType: QuantFileType, options: QuantizeOptions = {}): Promise<QuantizeReport> {
  const started = performance.now();
  // One pass over the whole file: positional reads keep memory bounded by the chunk size.
  const { gguf, file } = openGguf(input, { mmap: false });
  try {
    refuseInputAsOutput(input, output);
    // Checked before the work too, not only when publishing: a refusal should not cost the whole run.
    if (!options.overwrite && lstatSync(output, { throwIfNoEntry: false })) throw new FileExistsError(output);
    await removeStaleTemps(dirname(output));
    const plan = planQuantization(gguf, fileType, options);
    for (const t of plan.tensors) {
      if (t.from !== t.to && t.from.quantized && !options.allowRequantize) {
        throw new Error(`${input}: tensor "${t.name}" is already quantized (${t.from.name}); re-quantizing loses quality, pass --allow-requantize to do it anyway`);
      }
      if (t.from !== t.to) encoderFor(t.to);
    }
    const elementsTotal = plan.tensors.reduce((n, t) => n + gguf.tensor(t.name)!.elements, 0);
    let elementsDone = 0;
    const errors = plan.tensors.map(() => ({ sum: 0 }));
    const report = (index: number) => (elements: number) => {
      elementsDone += elements;
      options.onProgress?.({ tensor: plan.tensors[index]!.name, index, count: plan.tensors.length, elementsDone, elementsTotal });
    };
    await writeGguf(
      output,
      { kvs: quantizedFileKvs(gguf.kvs, plan.fileTypeId, plan.quantizationVersion, options.imatrix?.size), tensors: plan.tensors.map((t) => ({ name: t.name, type: t.to, ne: t.ne })) },
      (i) => {
        const t = plan.tensors[i]!;
        if (t.from === t.to) {
          report(i)(gguf.tensor(t.name)!.elements);
          return tensorChunks(gguf, gguf.tensor(t.name)!);
        }
        return convertTensor(gguf, t, options, errors[i]!, report(i));
      },
      { signal: options.signal, overwrite: options.overwrite === true },
    );
    return {
      input,
      output,
      type: fileType,
      tensors: plan.tensors.map((t, i) => ({
        name: t.name,
        from: t.from.name,
        to: t.to.name,
        rmse: Math.sqrt(errors[i]!.sum / gguf.tensor(t.name)!.elements),
      })),
      bytesIn: gguf.fileBytes,
      bytesOut: statSync(output).size,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    file.close();
  }
}
