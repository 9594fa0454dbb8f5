/**
 * The host side of the WebAssembly SIMD block decoders (assembly/decoders.ts): one instance per
 * thread, made on first use. The caller's blocks may sit anywhere (a view into a file, any byte
 * offset) and the values go to any Float32Array, so a call copies a chunk of blocks into the
 * module's memory, decodes it there and copies the values out. Chunks are small enough (128 KiB
 * of f32) to stay in the CPU cache, so both copies cost little next to the decoding, and the
 * memory never grows whatever the tensor's size.
 */
import type { GgmlType } from '../ggml-types';
import { checkSpan, type BlockDecoder } from '../quants/codec';
import { f16BitsTable } from '../quants/half';
import { IQ4NL_VALUES } from '../quants/iq-tables';
import { WASM_BASE64 } from './decoders.wasm';
import { instantiateBase64 } from './instantiate';

/** The decode functions the module exports: (blocks at, values at, block count). */
export type WasmDecoderName =
  | 'decodeQ4_0' | 'decodeQ4_1' | 'decodeQ5_0' | 'decodeQ5_1' | 'decodeQ8_0'
  | 'decodeQ2_K' | 'decodeQ3_K' | 'decodeQ4_K' | 'decodeQ5_K' | 'decodeQ6_K' | 'decodeQ8_K'
  | 'decodeIQ4_NL' | 'decodeIQ4_XS';

type Layout = 'F16_AT' | 'IQ4NL_AT' | 'IN_AT' | 'IN_BYTES' | 'OUT_AT' | 'OUT_VALUES';
type DecoderExports = Record<Layout, WebAssembly.Global> &
  Record<WasmDecoderName, (blocksAt: number, valuesAt: number, blocks: number) => void> & { memory: WebAssembly.Memory };

interface Decoders {
  exports: DecoderExports;
  inAt: number;
  outAt: number;
  /** The chunk's blocks and values, as views of the module's memory. */
  input: Uint8Array;
  output: Float32Array;
}

let decoders: Decoders | undefined;

function instantiate(): Decoders {
  const exports = instantiateBase64(WASM_BASE64).exports as unknown as DecoderExports;
  const at = (name: Layout): number => exports[name].value as number;
  const memory = exports.memory;
  const end = at('OUT_AT') + at('OUT_VALUES') * 4;
  if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / 65536));
  // Tables the decoders read, from their one definition on the JavaScript side.
  new Uint32Array(memory.buffer, at('F16_AT'), 65536).set(f16BitsTable());
  new Int8Array(memory.buffer, at('IQ4NL_AT'), 16).set(IQ4NL_VALUES);
  return {
    exports,
    inAt: at('IN_AT'),
    outAt: at('OUT_AT'),
    input: new Uint8Array(memory.buffer, at('IN_AT'), at('IN_BYTES')),
    output: new Float32Array(memory.buffer, at('OUT_AT'), at('OUT_VALUES')),
  };
}

/** The BlockDecoder of `type` that runs the module's `name`. */
export function wasmBlockDecoder(type: GgmlType, name: WasmDecoderName): BlockDecoder {
  const { typeSize, blockSize } = type;
  return (src, dst, blocks) => {
    checkSpan(type, src, dst, blocks);
    if (blocks === 0) return;
    const m = (decoders ??= instantiate());
    const decode = m.exports[name];
    const perChunk = Math.min(Math.floor(m.output.length / blockSize), Math.floor(m.input.length / typeSize));
    for (let b = 0; b < blocks; b += perChunk) {
      const n = Math.min(perChunk, blocks - b);
      m.input.set(src.subarray(b * typeSize, (b + n) * typeSize));
      decode(m.inAt, m.outAt, n);
      dst.set(m.output.subarray(0, n * blockSize), b * blockSize);
    }
  };
}
