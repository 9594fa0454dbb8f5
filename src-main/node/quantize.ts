import { lstatSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname } from 'node:path';
import { encoderFor } from '../core/quants/encoders';
import type { GgufFile } from '../core/gguf/gguf-file';
import type { ImportanceMatrix } from '../core/imatrix';
import { quantizedFileKvs } from '../core/export-size';
import {
  planQuantization,
  tensorNeedsImatrix,
  type PlannedTensor,
  type QuantFileType,
  type RecipeOptions,
} from '../core/quant-recipes';
import { recipeJson } from '../core/recipe-overrides';
import { FileExistsError, removeStaleTemps } from './atomic-write';
import { openGguf, tensorChunks, writeGguf } from './gguf-io';
import type { ChunkJob, ChunkResult } from './quantize-worker/chunk';
import { ChunkPool } from './quantize-worker/pool';

export interface QuantizeOptions extends RecipeOptions {
  imatrix?: ImportanceMatrix;
  /** Convert tensors that are already quantized (through f32, losing some quality). */
  allowRequantize?: boolean;
  /**
   * Replace an existing output (renaming the new file over it: it gets the default permissions,
   * not the old file's). Without it, an output that exists or appears meanwhile is refused.
   */
  overwrite?: boolean;
  /** Threads that encode (default 1: this one; more run in worker threads). The bytes are the same for any number. */
  threads?: number;
  /**
   * With threads > 1, this thread encodes a share too, beside threads − 1 workers: a command-line
   * run, whose event loop has nothing else to do, starts one worker fewer. Without it all of them
   * are workers and this thread stays free for its events (the app's main process).
   */
  thisThreadEncodes?: boolean;
  /**
   * Measure each tensor's error (default true): every chunk is decoded back, which costs about a
   * fifth of the encoding; without it the report's rmse is null.
   */
  measureError?: boolean;
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
  /** Root-mean-square difference between the source values and the written values (null: not measured). */
  rmse: number | null;
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

/**
 * Source elements converted at a time: memory stays bounded whatever the tensor size (a few
 * chunks per thread are in flight), and big tensors are shared among the threads.
 */
const CHUNK_ELEMENTS = 1 << 18;
/**
 * Chunks started ahead of the writer, per thread: none of them waits for work. Room for each
 * worker's queue (JOBS_PER_WORKER) and then some: the writer waits for the oldest chunk, which
 * may sit at the back of a worker's queue while the other threads run on.
 */
export const AHEAD_PER_THREAD = 8;

/** The importance weights for matrix `matrix` of a tensor, checked against its row length. */
export function importanceFor(
  imatrix: ImportanceMatrix | undefined,
  t: PlannedTensor,
  matrix: number,
  file: string,
): Float32Array | null {
  const weights = imatrix?.get(t.name);
  if (!weights) return null;
  const columns = t.ne[0]!;
  const matrices = t.ne.slice(2).reduce((a, b) => a * b, 1);
  if (weights.length !== columns * matrices) {
    throw new Error(
      `${file}: importance matrix for "${t.name}" has ${weights.length} weights, the tensor needs ${columns * matrices}`,
    );
  }
  // A copy: a view would send the whole matrix's buffer to a worker.
  return weights.slice(matrix * columns, (matrix + 1) * columns);
}

/** Rows [row, end) of tensor `tensor` (an index in the plan); `matrix`: which matrix of a stacked tensor. */
interface Chunk {
  tensor: number;
  row: number;
  end: number;
  matrix: number;
}

/** The chunks of one tensor: whole rows, never straddling two matrices of a stacked tensor (each has its own expert's importance weights). */
function chunksOf(t: PlannedTensor, tensor: number, elements: number): Chunk[] {
  const columns = t.ne[0]!;
  const rowsPerMatrix = t.ne[1] ?? 1;
  const rows = elements / columns;
  const step = Math.max(1, Math.min(rowsPerMatrix, Math.floor(CHUNK_ELEMENTS / columns)));
  const chunks: Chunk[] = [];
  for (let row = 0; row < rows;) {
    const matrix = Math.floor(row / rowsPerMatrix);
    const end = Math.min(row + step, (matrix + 1) * rowsPerMatrix, rows);
    chunks.push({ tensor, row, end, matrix });
    row = end;
  }
  return chunks;
}

/** The threads that encode: this one alone, workers beside it, or workers only (see QuantizeOptions). */
function startPool(threads: number, thisThreadEncodes: boolean): ChunkPool {
  if (threads === 1) return new ChunkPool(0, { here: true });
  return thisThreadEncodes ? new ChunkPool(threads - 1, { here: true }) : new ChunkPool(threads);
}

/**
 * Converts the plan's tensors chunk by chunk on the pool's threads, starting chunks ahead of the
 * writer in file order and handing each tensor's output back in order. Each tensor's squared
 * round-trip error is summed in chunk order, so the report is the same for any number of threads.
 */
class Conversion {
  readonly #chunks: Chunk[];
  readonly #started = new Map<number, Promise<ChunkResult>>();
  readonly #ahead: number;
  #next = 0;
  readonly squaredErrors: number[];

  constructor(
    private readonly gguf: GgufFile,
    private readonly tensors: readonly PlannedTensor[],
    private readonly options: QuantizeOptions,
    private readonly pool: ChunkPool,
    threads: number,
  ) {
    this.#chunks = tensors.flatMap((t, i) => (t.from === t.to ? [] : chunksOf(t, i, gguf.tensor(t.name)!.elements)));
    this.#ahead = threads * AHEAD_PER_THREAD;
    this.squaredErrors = tensors.map(() => 0);
  }

  /** Tensor `index`'s converted bytes, chunk by chunk; `progress` gets the source elements of each. */
  async *output(index: number, progress: (elements: number) => void): AsyncIterable<Uint8Array> {
    const t = this.tensors[index]!;
    for (
      let k = this.#chunks.findIndex((c) => c.tensor === index);
      k >= 0 && k < this.#chunks.length && this.#chunks[k]!.tensor === index;
      k++
    ) {
      this.options.signal?.throwIfAborted();
      while (this.#next < this.#chunks.length && this.#next < k + this.#ahead) this.#start(this.#next++);
      const promise = this.#started.get(k)!;
      this.#started.delete(k);
      let result: ChunkResult;
      try {
        result = await promise;
      } catch (err) {
        throw new Error(`${this.gguf.file}: tensor "${t.name}": ${err instanceof Error ? err.message : String(err)}`);
      }
      this.squaredErrors[index]! += result.squaredError;
      const c = this.#chunks[k]!;
      progress((c.end - c.row) * t.ne[0]!);
      yield result.bytes;
    }
  }

  #start(k: number): void {
    const c = this.#chunks[k]!;
    const t = this.tensors[c.tensor]!;
    const source = this.gguf.tensor(t.name)!;
    const columns = t.ne[0]!;
    const blocks = ((c.end - c.row) * columns) / source.type.blockSize;
    const job: ChunkJob = {
      from: source.type.name,
      // Read by the thread that converts it: the reads overlap the encoding, off this thread.
      source: {
        path: this.gguf.file,
        offset:
          this.gguf.dataOffset + source.offset + ((c.row * columns) / source.type.blockSize) * source.type.typeSize,
        length: blocks * source.type.typeSize,
      },
      to: t.to.name,
      rows: c.end - c.row,
      columns,
      importance: importanceFor(this.options.imatrix, t, c.matrix, this.gguf.file),
      measureError: this.options.measureError !== false,
    };
    const promise = this.pool.run(job);
    // Awaited in order by output(); a run that stops early never awaits the rest.
    promise.catch(() => {});
    this.#started.set(k, promise);
  }
}

/** Refuses an output that is the input itself under any name (a hard link, a symlink): always, even when overwriting. */
function refuseInputAsOutput(input: string, output: string): void {
  const from = statSync(input);
  const to = statSync(output, { throwIfNoEntry: false });
  if (to && to.dev === from.dev && to.ino === from.ino)
    throw new Error(`${output} is the input file ${input}; write the output to another file`);
}

/**
 * Re-quantizes `input` to `fileType` the way llama-quantize does, tensor by tensor with bounded
 * memory, writing `output` all or nothing, and never over an existing file unless `overwrite`.
 */
export async function quantizeFile(
  input: string,
  output: string,
  fileType: QuantFileType,
  options: QuantizeOptions = {},
): Promise<QuantizeReport> {
  const started = performance.now();
  const threads = threadCount(options.threads);
  // Started first: the workers start up while this thread opens and plans.
  const pool = startPool(threads, options.thisThreadEncodes === true);
  let opened: ReturnType<typeof openGguf> | undefined;
  try {
    // One pass over the whole file: positional reads keep memory bounded by the chunk size.
    opened = openGguf(input, { mmap: false });
    const { gguf } = opened;
    refuseInputAsOutput(input, output);
    // Checked before the work too, not only when publishing: a refusal should not cost the whole run.
    if (!options.overwrite && lstatSync(output, { throwIfNoEntry: false })) throw new FileExistsError(output);
    await removeStaleTemps(dirname(output));
    const plan = planQuantization(gguf, fileType, { ...options, hasImatrix: options.imatrix !== undefined });
    for (const t of plan.tensors) {
      if (t.from !== t.to && t.from.quantized && !options.allowRequantize) {
        throw new Error(
          `${input}: tensor "${t.name}" is already quantized (${t.from.name}); re-quantizing loses quality, pass --allow-requantize to do it anyway`,
        );
      }
      if (t.from !== t.to) encoderFor(t.to);
      if (t.from !== t.to && tensorNeedsImatrix(fileType, t.name, t.to) && !options.imatrix?.has(t.name)) {
        // As llama-quantize refuses: without importance weights these types are garbage.
        throw new Error(
          options.imatrix
            ? `${input}: tensor "${t.name}" becomes ${t.to.name}, which needs importance weights, and the importance matrix has none for it`
            : `${input}: ${fileType} needs an importance matrix (--imatrix FILE): tensor "${t.name}" becomes ${t.to.name}, which is garbage without one (llama-quantize refuses it too)`,
        );
      }
    }
    const elementsTotal = plan.tensors.reduce((n, t) => n + gguf.tensor(t.name)!.elements, 0);
    let elementsDone = 0;
    const converted = new Conversion(gguf, plan.tensors, options, pool, threads);
    const report = (index: number) => (elements: number) => {
      elementsDone += elements;
      options.onProgress?.({
        tensor: plan.tensors[index]!.name,
        index,
        count: plan.tensors.length,
        elementsDone,
        elementsTotal,
      });
    };
    await writeGguf(
      output,
      {
        kvs: quantizedFileKvs(
          gguf.kvs,
          plan.fileTypeId,
          plan.quantizationVersion,
          options.imatrix?.size,
          recipeJson(fileType, options),
        ),
        tensors: plan.tensors.map((t) => ({ name: t.name, type: t.to, ne: t.ne })),
      },
      (i) => {
        const t = plan.tensors[i]!;
        if (t.from === t.to) {
          report(i)(gguf.tensor(t.name)!.elements);
          return tensorChunks(gguf, gguf.tensor(t.name)!);
        }
        return converted.output(i, report(i));
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
        rmse:
          options.measureError === false
            ? null
            : Math.sqrt(converted.squaredErrors[i]! / gguf.tensor(t.name)!.elements),
      })),
      bytesIn: gguf.fileBytes,
      bytesOut: statSync(output).size,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    pool.close();
    opened?.file.close();
  }
}

/** The app's encoding threads: every core but one, which stays with the UI and the server. */
export function appQuantizeThreads(): number {
  return Math.max(1, availableParallelism() - 1);
}

function threadCount(threads: number | undefined): number {
  if (threads === undefined) return 1;
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`threads must be a whole number of at least 1, not ${threads}`);
  return threads;
}
