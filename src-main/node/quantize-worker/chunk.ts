/**
 * One unit of quantization work, the same on the main thread (one thread) and in a worker: whole
 * rows of a source tensor, as stored in the file, decoded to f32 and encoded to the target type.
 * Rows are encoded independently, so the bytes do not depend on how a tensor is cut into chunks
 * or on which thread runs them.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { ggmlTypeByName, type GgmlType, type GgmlTypeName } from '../../core/ggml-types';
import { decodedValues, decoderFor } from '../../core/quants/decoders';
import { encoderFor } from '../../core/quants/encoders';

/** Bytes of a file, read by the thread that converts them. */
export interface FileSpan {
  path: string;
  offset: number;
  length: number;
}

export interface ChunkJob {
  /**
   * Source type and its whole blocks for `rows` rows of `columns` values: the bytes, or where they
   * lie in a file (read into a buffer the thread reuses, so no chunk leaves garbage behind: a
   * worker that allocates little collects seldom, and transferred chunks would pile up).
   */
  from: GgmlTypeName;
  source: Uint8Array | FileSpan;
  to: GgmlTypeName;
  rows: number;
  columns: number;
  /** One weight per column (this matrix's, for a stacked tensor), or null. */
  importance: Float32Array | null;
  /** Decode the written blocks back and sum the squared error (a fifth of the encoding's time). */
  measureError: boolean;
}

export interface ChunkResult {
  bytes: Uint8Array;
  /** Σ (source − written)² over the chunk's values (0 unless measured): the report's per-tensor RMSE is built from it. */
  squaredError: number;
}

/** Read buffer, reused across chunks of a thread. */
let readBuffer = new Uint8Array(0);

/** The span's bytes, in this thread's read buffer (valid until the next read). */
function readSpan({ path, offset, length }: FileSpan): Uint8Array {
  if (readBuffer.length < length) readBuffer = new Uint8Array(length);
  const fd = openSync(path, 'r');
  try {
    for (let done = 0; done < length;) {
      const n = readSync(fd, readBuffer, done, length - done, offset + done);
      if (n === 0) throw new Error(`${path}: file shrank while reading`);
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return readBuffer.subarray(0, length);
}

/** Decoded source values, reused across chunks of a thread (decodedValues: decoders write there without a copy). */
let decoded: Float32Array = new Float32Array(0);

/** The source as f32: F32 bytes as they are (when aligned, as a chunk's own buffer is), others decoded. */
function sourceValues(source: Uint8Array, from: GgmlType, n: number): Float32Array {
  if (from.name === 'F32' && source.byteOffset % 4 === 0) return new Float32Array(source.buffer, source.byteOffset, n);
  if (decoded.length < n) decoded = decodedValues(n);
  const values = decoded.subarray(0, n);
  decoderFor(from)(source, values, n / from.blockSize);
  return values;
}

/** Decode-back scratch, reused across chunks of a thread (a decodedValues buffer too). */
let back: Float32Array = new Float32Array(0);

export function quantizeChunk(job: ChunkJob): ChunkResult {
  const from = ggmlTypeByName(job.from)!;
  const to = ggmlTypeByName(job.to)!;
  const n = job.rows * job.columns;
  const values = sourceValues(job.source instanceof Uint8Array ? job.source : readSpan(job.source), from, n);
  const blocks = n / to.blockSize;
  const bytes = new Uint8Array(blocks * to.typeSize);
  encoderFor(to)(values, bytes, job.rows, job.columns, job.importance);
  if (!job.measureError) return { bytes, squaredError: 0 };
  // The round trip measures what the user gets (the written blocks as any reader decodes them),
  // not what the encoder meant to write: it is the RMSE of the report (gufo quantize --json, the
  // export's tensor table). Decoding is a fraction of encoding's cost; it runs on this thread too.
  if (back.length < n) back = decodedValues(n);
  decoderFor(to)(bytes, back, blocks);
  let squaredError = 0;
  for (let i = 0; i < n; i++) {
    const d = values[i]! - back[i]!;
    squaredError += d * d;
  }
  return { bytes, squaredError };
}
