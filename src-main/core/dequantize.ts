import type { GgufFile, GgufTensorInfo } from './gguf/gguf-file';
import { decoderFor } from './quants/decoders';

/** A request that does not fit the tensor: names the tensor and what is wrong. */
export class TensorRangeError extends Error {
  override readonly name = 'TensorRangeError';
}

/**
 * Elements [start, end) of a tensor as f32. Reads only the blocks of that range from the file;
 * the range must start and end on block boundaries. With `into`, the values go to its start and
 * the view of them is returned: a caller that decodes chunk after chunk reuses one buffer, from
 * decodedValues() so that the WebAssembly decoders write straight into it.
 */
export function dequantizeRange(
  gguf: GgufFile,
  tensor: GgufTensorInfo,
  start: number,
  end: number,
  into?: Float32Array,
): Float32Array {
  const { blockSize, typeSize } = tensor.type;
  const fail = (problem: string): never => {
    throw new TensorRangeError(`${gguf.file}: tensor "${tensor.name}": ${problem}`);
  };
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || start < 0 || end < start || end > tensor.elements) {
    fail(`range [${start}, ${end}) is outside its ${tensor.elements} elements`);
  }
  if (start % blockSize !== 0 || end % blockSize !== 0) {
    fail(
      `range [${start}, ${end}) does not start and end on ${tensor.type.name} block boundaries (every ${blockSize} elements)`,
    );
  }
  const decode = decoderFor(tensor.type);
  const blocks = (end - start) / blockSize;
  const bytes = gguf.source.bytes(gguf.dataOffset + tensor.offset + (start / blockSize) * typeSize, blocks * typeSize);
  if (into && into.length < end - start)
    fail(`range [${start}, ${end}) needs ${end - start} values, the buffer holds ${into.length}`);
  const out = into ? into.subarray(0, end - start) : new Float32Array(end - start);
  decode(bytes, out, blocks);
  return out;
}

/** Rows [first, end) of a tensor (a row is ne[0] elements), as f32 (into `into`, if given: see dequantizeRange). */
export function dequantizeRows(
  gguf: GgufFile,
  tensor: GgufTensorInfo,
  first: number,
  end: number,
  into?: Float32Array,
): Float32Array {
  const rowLength = tensor.ne[0] ?? 1;
  return dequantizeRange(gguf, tensor, first * rowLength, end * rowLength, into);
}

/** The whole tensor as f32. */
export function dequantizeTensor(gguf: GgufFile, tensor: GgufTensorInfo): Float32Array {
  return dequantizeRange(gguf, tensor, 0, tensor.elements);
}

/**
 * Elements [start, end) of expert `e` in a stacked MoE tensor of shape [cols, rows, experts]
 * (ne order): that expert's rows × cols matrix.
 */
export function expertRange(gguf: GgufFile, tensor: GgufTensorInfo, expert: number): [number, number] {
  if (tensor.ne.length !== 3) {
    throw new TensorRangeError(
      `${gguf.file}: tensor "${tensor.name}" is not a stacked expert tensor (shape [${tensor.ne.join(', ')}])`,
    );
  }
  const [cols, rows, experts] = tensor.ne as [number, number, number];
  if (!Number.isSafeInteger(expert) || expert < 0 || expert >= experts) {
    throw new TensorRangeError(`${gguf.file}: tensor "${tensor.name}" has experts 0 to ${experts - 1}, not ${expert}`);
  }
  const size = cols * rows;
  return [expert * size, (expert + 1) * size];
}

/** Expert `e` of a stacked MoE tensor as f32, read from that expert's blocks only. */
export function dequantizeExpert(gguf: GgufFile, tensor: GgufTensorInfo, expert: number): Float32Array {
  return dequantizeRange(gguf, tensor, ...expertRange(gguf, tensor, expert));
}
