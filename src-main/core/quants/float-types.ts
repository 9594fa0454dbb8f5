/**
 * Plain float tensors to f32. Values are moved as bit patterns (never through a JS number), so
 * every bit — signed zeros, subnormals, NaN payloads — comes out as llama.cpp produces it. F16 and
 * BF16 are WebAssembly decoders (assembly/decoders.ts), which take `src` at any byte offset.
 */
import { ggmlTypes } from '../ggml-types';
import { checkSpan, type BlockDecoder } from './codec';
import { wasmBlockDecoder } from '../wasm/decoders';

const [F32, F16, BF16] = ggmlTypes('F32', 'F16', 'BF16');

/** F32: a byte copy. */
export const decodeF32: BlockDecoder = (src, dst, blocks) => {
  checkSpan(F32, src, dst, blocks);
  new Uint8Array(dst.buffer, dst.byteOffset, blocks * 4).set(src.subarray(0, blocks * 4));
};

/** F16 → F32 in WebAssembly SIMD, exactly as ggml_fp16_to_fp32 (subnormals; NaNs made quiet, payload kept). */
export const decodeF16: BlockDecoder = wasmBlockDecoder(F16, 'decodeF16');

/** BF16 → F32 in WebAssembly SIMD: the 16 bits go on top. */
export const decodeBF16: BlockDecoder = wasmBlockDecoder(BF16, 'decodeBF16');
