import type { GgmlType } from '../ggml-types';

/**
 * The shape every block decoder has. One function per ggml type, chosen once per tensor (see
 * decoders.ts), then run over all its blocks: nothing is looked up per block.
 */
export type BlockDecoder = (
  /** Whole blocks, `blocks × typeSize` bytes, as stored in the file. */
  src: Uint8Array,
  /** Receives `blocks × blockSize` values. */
  dst: Float32Array,
  blocks: number,
) => void;

/**
 * The shape every encoder has: whole rows, because an importance matrix weighs each column
 * (as llama.cpp's imatrix does), so the encoder must know where a row starts.
 */
export type RowEncoder = (
  /** `rows × rowLength` values. */
  src: Float32Array,
  /** Receives `rows × rowLength / blockSize × typeSize` bytes. */
  dst: Uint8Array,
  rows: number,
  /** A multiple of the type's block size. */
  rowLength: number,
  /** One non-negative weight per column (`rowLength` values), or null to weigh all alike. */
  importance: Float32Array | null,
) => void;

/** Throws unless `src` and `dst` hold `blocks` whole blocks of `type`: a decoder's precondition. */
export function checkSpan(type: GgmlType, src: Uint8Array, dst: Float32Array, blocks: number): void {
  if (src.length < blocks * type.typeSize)
    throw new RangeError(`${type.name}: ${blocks} blocks need ${blocks * type.typeSize} bytes, got ${src.length}`);
  if (dst.length < blocks * type.blockSize)
    throw new RangeError(`${type.name}: ${blocks} blocks need ${blocks * type.blockSize} values, got ${dst.length}`);
}

/** Throws unless `src`, `dst` and `importance` fit `rows` rows of `rowLength` values of `type`: an encoder's precondition. */
export function checkEncodeSpan(
  type: GgmlType,
  src: Float32Array,
  dst: Uint8Array,
  rows: number,
  rowLength: number,
  importance: Float32Array | null,
): void {
  if (
    !Number.isInteger(rows) ||
    rows < 0 ||
    !Number.isInteger(rowLength) ||
    rowLength < 0 ||
    rowLength % type.blockSize !== 0
  ) {
    throw new RangeError(`${type.name}: rows of ${rowLength} values are not whole blocks of ${type.blockSize}`);
  }
  const n = rows * rowLength;
  if (src.length < n) throw new RangeError(`${type.name}: source holds ${src.length} values, ${n} needed`);
  const bytes = (n / type.blockSize) * type.typeSize;
  if (dst.length < bytes) throw new RangeError(`${type.name}: destination holds ${dst.length} bytes, ${bytes} needed`);
  if (importance && importance.length < rowLength)
    throw new RangeError(`${type.name}: importance holds ${importance.length} weights, ${rowLength} needed`);
}

/**
 * Throws unless an importance matrix is given: for the types llama.cpp will not quantize without
 * one (the result would be too poor to use), as it refuses them.
 */
export function requireImportance(type: GgmlType, importance: Float32Array | null): asserts importance is Float32Array {
  if (!importance)
    throw new Error(
      `${type.name} needs an importance matrix (--imatrix FILE): llama.cpp refuses it without one too, the result would be garbage`,
    );
}
