/**
 * f32 rows to the plain float types, bit for bit as llama.cpp's ggml_quantize_chunk writes them
 * (ggml_fp32_to_fp16_row / ggml_fp32_to_bf16_row_ref): round to nearest even, NaN and Inf as ggml
 * treats them (see half-encode.ts). The importance matrix has nothing to weigh here and is ignored.
 * `dst` may sit at any byte offset; values are stored little-endian, as in a GGUF file.
 */
import type { RowEncoder } from './codec';
import { ggmlType } from '../ggml-types';
import { f32BitsToF16Bits } from './half-encode';
import { wasmEncodeBlocks } from '../wasm/encoders';

const F32 = ggmlType('F32');
const F16 = ggmlType('F16');
const BF16 = ggmlType('BF16');

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The f32 bit patterns (as int32, which keeps V8 on integer arithmetic). */
function bitsOf(src: Float32Array, count: number): Int32Array {
  return new Int32Array(src.buffer, src.byteOffset, count);
}

/** A Uint16Array over `dst` when its layout allows writing little-endian halves directly. */
function halvesOf(dst: Uint8Array, count: number): Uint16Array | null {
  return littleEndian && dst.byteOffset % 2 === 0 ? new Uint16Array(dst.buffer, dst.byteOffset, count) : null;
}

function checkSizes(name: string, src: Float32Array, dst: Uint8Array, count: number, typeSize: number): void {
  if (src.length < count) throw new RangeError(`${name}: source holds ${src.length} values, ${count} needed`);
  if (dst.length < count * typeSize)
    throw new RangeError(`${name}: destination holds ${dst.length} bytes, ${count * typeSize} needed`);
}

/** F32: a copy of the bytes (NaN payloads and signed zeros kept). */
export const encodeF32: RowEncoder = (src, dst, rows, rowLength) => {
  const n = rows * rowLength;
  checkSizes('F32', src, dst, n, F32.typeSize);
  dst.set(new Uint8Array(src.buffer, src.byteOffset, n * F32.typeSize));
};

export const encodeF16: RowEncoder = (src, dst, rows, rowLength) => {
  const n = rows * rowLength;
  checkSizes('F16', src, dst, n, F16.typeSize);
  const bits = bitsOf(src, n);
  const out = halvesOf(dst, n);
  if (out) {
    for (let i = 0; i < n; i++) out[i] = f32BitsToF16Bits(bits[i]!);
  } else {
    for (let i = 0, o = 0; i < n; i++, o += 2) {
      const h = f32BitsToF16Bits(bits[i]!);
      dst[o] = h;
      dst[o + 1] = h >>> 8;
    }
  }
};

/** BF16 in WebAssembly SIMD (assembly/encoders.ts), the same rounding as f32BitsToBF16Bits. */
export const encodeBF16: RowEncoder = (src, dst, rows, rowLength) => {
  const n = rows * rowLength;
  checkSizes('BF16', src, dst, n, BF16.typeSize);
  wasmEncodeBlocks(BF16, 'encodeBF16', src, dst, n);
};
