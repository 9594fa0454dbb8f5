/** One block of a tensor, decoded for the block view: raw bytes, named fields, codes and exact values. */
import type { BlockView, JsonNumber } from '../../../src-preload/api';
import { dequantizeRange } from '../../core/dequantize';
import { shortestFloat32 } from '../../core/gguf/json';
import type { GgufFile, GgufTensorInfo } from '../../core/gguf/gguf-file';
import { blockFields } from '../../core/quants/block-fields';
import { hasDecoder } from '../../core/quants/decoders';

/** Plain float tensors have no blocks: the view shows this many elements at a time. */
export const PLAIN_GROUP = 32;

/**
 * An f32 value for the view: the shortest decimal that reads back as the same f32 (what a person
 * wants to read, and exact), −0 kept; NaN and infinities as strings, since JSON has no such numbers.
 */
export function jsonNumber(x: number): JsonNumber {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? 'Infinity' : '-Infinity';
  return Object.is(x, -0) ? -0 : shortestFloat32(x);
}

/** Elements per view block: the type's block, or PLAIN_GROUP for plain floats. */
export function viewBlockSize(tensor: GgufTensorInfo): number {
  return tensor.type.blockSize === 1 ? PLAIN_GROUP : tensor.type.blockSize;
}

export function tensorBlock(gguf: GgufFile, tensor: GgufTensorInfo, block: number): BlockView {
  const { type } = tensor;
  if (!hasDecoder(type))
    throw new Error(`${gguf.file}: tensor "${tensor.name}" is ${type.name}, which Gufo cannot decode`);
  const unit = viewBlockSize(tensor);
  const blockCount = Math.ceil(tensor.elements / unit);
  if (!Number.isSafeInteger(block) || block < 0 || block >= blockCount) {
    throw new Error(`${gguf.file}: tensor "${tensor.name}" has blocks 0 to ${blockCount - 1}, not ${block}`);
  }
  const first = block * unit;
  const count = Math.min(unit, tensor.elements - first);
  const byteCount = (count / type.blockSize) * type.typeSize;
  const bytes = gguf.source.bytes(
    gguf.dataOffset + tensor.offset + (first / type.blockSize) * type.typeSize,
    byteCount,
  );
  const described = blockFields(type, bytes);
  return {
    tensor: tensor.name,
    type: type.name,
    block,
    blockCount,
    blockSize: count,
    firstElement: first,
    row: Math.floor(first / (tensor.ne[0] ?? 1)),
    bytes: byteCount,
    hex: Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join(' '),
    fields: described.fields.map((f) => ({ name: f.name, span: f.span, values: f.values.map(jsonNumber) })),
    codes: described.codes,
    formula: described.formula,
    complete: described.complete,
    values: Array.from(dequantizeRange(gguf, tensor, first, first + count), jsonNumber),
  };
}
