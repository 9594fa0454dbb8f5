/**
 * The host side of the WebAssembly SIMD block encoders (assembly/encoders.ts): one instance per
 * thread, made on first use. A call copies a chunk of values into the module's memory (64 KiB of
 * f32, cache-sized), encodes it there and copies the blocks out.
 */
import type { GgmlType } from '../ggml-types';
import { WASM_BASE64 } from './encoders.wasm';
import { growTo, instantiateBase64 } from './instantiate';

/** The encode functions the module exports: (values at, blocks at, block count). */
export type WasmEncoderName = 'encodeQ8_0' | 'encodeQ4_1' | 'encodeBF16';

type Layout = 'X_AT' | 'X_VALUES' | 'Y_AT' | 'Y_BYTES';
type EncoderExports = Record<Layout, WebAssembly.Global> &
  Record<WasmEncoderName, (valuesAt: number, blocksAt: number, blocks: number) => void> & {
    memory: WebAssembly.Memory;
    f32ToF16Bits(x: number): number;
  };

interface Encoders {
  exports: EncoderExports;
  xAt: number;
  yAt: number;
  /** A chunk's values and blocks, as views of the module's memory. */
  values: Float32Array;
  bytes: Uint8Array;
}

let encoders: Encoders | undefined;

function instantiate(): Encoders {
  const exports = instantiateBase64(WASM_BASE64).exports as unknown as EncoderExports;
  const at = (name: Layout): number => exports[name].value as number;
  const memory = exports.memory;
  const end = Math.max(at('X_AT') + at('X_VALUES') * 4, at('Y_AT') + at('Y_BYTES'));
  growTo(memory, end);
  return {
    exports,
    xAt: at('X_AT'),
    yAt: at('Y_AT'),
    values: new Float32Array(memory.buffer, at('X_AT'), at('X_VALUES')),
    bytes: new Uint8Array(memory.buffer, at('Y_AT'), at('Y_BYTES')),
  };
}

const instance = (): Encoders => (encoders ??= instantiate());

/**
 * Encodes `blocks` blocks of `type` from the values of `src` into `dst` with the module's `name`
 * (the caller has checked the spans).
 */
export function wasmEncodeBlocks(
  type: GgmlType,
  name: WasmEncoderName,
  src: Float32Array,
  dst: Uint8Array,
  blocks: number,
): void {
  const { typeSize, blockSize } = type;
  const m = instance();
  const encode = m.exports[name];
  const perChunk = Math.min(Math.floor(m.values.length / blockSize), Math.floor(m.bytes.length / typeSize));
  for (let b = 0; b < blocks; b += perChunk) {
    const n = Math.min(perChunk, blocks - b);
    m.values.set(src.subarray(b * blockSize, (b + n) * blockSize));
    encode(m.xAt, m.yAt, n);
    dst.set(m.bytes.subarray(0, n * typeSize), b * typeSize);
  }
}

/** The module's f32 → f16 conversion (for its test against half-encode.ts). */
export function wasmF32ToF16Bits(x: number): number {
  return instance().exports.f32ToF16Bits(x);
}
