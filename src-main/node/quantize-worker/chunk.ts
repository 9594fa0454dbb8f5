/**
 * One unit of quantization work, the same on the main thread (one thread) and in a worker: whole
 * rows of a source tensor, as stored in the file, decoded to f32 and encoded to the target type.
 * Rows are encoded independently, so the bytes do not depend on how a tensor is cut into chunks
 * or on which thread runs them.
 */
import { ggmlTypeByName, type GgmlType, type GgmlTypeName } from '../../core/ggml-types';
import { decoderFor } from '../../core/quants/decoders';
import { encoderFor } from '../../core/quants/encoders';

export interface ChunkJob {
  /** Source type and its whole blocks for `rows` rows of `columns` values. */
  from: GgmlTypeName;
  source: Uint8Array;
  to: GgmlTypeName;
  rows: number;
  columns: number;
  /** One weight per column (this matrix's, for a stacked tensor), or null. */
  importance: Float32Array | null;
}

export interface ChunkResult {
  bytes: Uint8Array;
  /** Σ (source − written)² over the chunk's values: the report's per-tensor RMSE is built from it. */
  squaredError: number;
}

/** The source as f32: F32 bytes as they are (when aligned, as a chunk's own buffer is), others decoded. */
function sourceValues(job: ChunkJob, from: GgmlType, n: number): Float32Array {
  if (from.name === 'F32' && job.source.byteOffset % 4 === 0) return new Float32Array(job.source.buffer, job.source.byteOffset, n);
  const values = new Float32Array(n);
  decoderFor(from)(job.source, values, n / from.blockSize);
  return values;
}

/** Decode-back scratch, reused across chunks of a thread. */
let back = new Float32Array(0);

export function quantizeChunk(job: ChunkJob): ChunkResult {
  const from = ggmlTypeByName(job.from)!;
  const to = ggmlTypeByName(job.to)!;
  const n = job.rows * job.columns;
  const values = sourceValues(job, from, n);
  const blocks = n / to.blockSize;
  const bytes = new Uint8Array(blocks * to.typeSize);
  encoderFor(to)(values, bytes, job.rows, job.columns, job.importance);
  // The round trip measures what the user gets (the written blocks as any reader decodes them),
  // not what the encoder meant to write: it is the RMSE of the report (gufo quantize --json, the
  // export's tensor table). Decoding is a fraction of encoding's cost; it runs on this thread too.
  if (back.length < n) back = new Float32Array(n);
  decoderFor(to)(bytes, back, blocks);
  let squaredError = 0;
  for (let i = 0; i < n; i++) {
    const d = values[i]! - back[i]!;
    squaredError += d * d;
  }
  return { bytes, squaredError };
}
