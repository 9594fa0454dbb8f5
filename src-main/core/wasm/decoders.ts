/**
 * The host side of the WebAssembly SIMD block decoders (assembly/decoders.ts). The caller's blocks
 * may sit anywhere (a view into a file, any byte offset), so a call copies a chunk of blocks at a
 * time into the module's memory and decodes it there. Where the values go:
 *
 * - Into a buffer from `decodedValues`: straight there, no copy. Such a buffer lies in the memory
 *   of an instance of its own, sized once and never grown, so the view never detaches (growing a
 *   WebAssembly memory detaches every view of it). Callers that decode often should allocate
 *   one and reuse it (the tensor-error comparison and the quantize chunks do): copying the values out of WebAssembly
 *   memory costs about as much as decoding them.
 * - Into any other Float32Array: through the thread's shared instance, a chunk (128 KiB of f32,
 *   cache-sized) decoded into its memory and copied out.
 */
import type { GgmlType } from '../ggml-types';
import { checkSpan, type BlockDecoder } from '../quants/codec';
import { f16BitsTable } from '../quants/half';
import { IQ4NL_VALUES } from '../quants/iq-tables';
import { WASM_BASE64 } from './decoders.wasm';
import { growTo, instantiateBase64 } from './instantiate';

/** The decode functions the module exports: (blocks at, values at, block count). */
export type WasmDecoderName =
  | 'decodeF16'
  | 'decodeBF16'
  | 'decodeQ4_0'
  | 'decodeQ4_1'
  | 'decodeQ5_0'
  | 'decodeQ5_1'
  | 'decodeQ8_0'
  | 'decodeQ2_K'
  | 'decodeQ3_K'
  | 'decodeQ4_K'
  | 'decodeQ5_K'
  | 'decodeQ6_K'
  | 'decodeQ8_K'
  | 'decodeIQ4_NL'
  | 'decodeIQ4_XS';

type Layout = 'F16_AT' | 'IQ4NL_AT' | 'IN_AT' | 'IN_BYTES' | 'OUT_AT' | 'OUT_VALUES';
type DecoderExports = Record<Layout, WebAssembly.Global> &
  Record<WasmDecoderName, (blocksAt: number, valuesAt: number, blocks: number) => void> & {
    memory: WebAssembly.Memory;
  };

interface Decoders {
  exports: DecoderExports;
  inAt: number;
  outAt: number;
  /** The chunk's blocks and values, as views of the module's memory. */
  input: Uint8Array;
  output: Float32Array;
  /** Where the memory's own values begin (decodedValues), after the fixed layout. */
  end: number;
}

/** wasm32 addresses memory below 4 GiB. */
const MAX_MEMORY_BYTES = 2 ** 32;

/** An instance with `extraBytes` of memory after its fixed layout; the memory does not grow again. */
function instantiate(extraBytes: number): Decoders {
  const exports = instantiateBase64(WASM_BASE64).exports as unknown as DecoderExports;
  const at = (name: Layout): number => exports[name].value as number;
  const memory = exports.memory;
  const end = at('OUT_AT') + at('OUT_VALUES') * 4;
  const size = end + extraBytes;
  if (size > MAX_MEMORY_BYTES)
    throw new RangeError(`decodedValues: ${extraBytes / 4} values do not fit a WebAssembly memory (4 GiB)`);
  growTo(memory, size);
  // Tables the decoders read, from their one definition on the JavaScript side.
  new Uint32Array(memory.buffer, at('F16_AT'), 65536).set(f16BitsTable());
  new Int8Array(memory.buffer, at('IQ4NL_AT'), 16).set(IQ4NL_VALUES);
  return {
    exports,
    inAt: at('IN_AT'),
    outAt: at('OUT_AT'),
    input: new Uint8Array(memory.buffer, at('IN_AT'), at('IN_BYTES')),
    output: new Float32Array(memory.buffer, at('OUT_AT'), at('OUT_VALUES')),
    end,
  };
}

/** The thread's instance for values going to a caller's own Float32Array, made on first use. */
let shared: Decoders | undefined;
/** The instance behind each decodedValues buffer, by the buffer (collected with it). */
const owners = new WeakMap<ArrayBufferLike, Decoders>();

/**
 * A zeroed Float32Array of `length` values that the WebAssembly decoders write into directly,
 * without copying out of their memory. Use it like any Float32Array, for as long as needed; each
 * costs an instance (about 0.6 MiB besides the values), so allocate it once and reuse it.
 */
export function decodedValues(length: number): Float32Array {
  if (!Number.isSafeInteger(length) || length < 0)
    throw new RangeError(`decodedValues: length ${length} is not a whole number of values`);
  const m = instantiate(length * 4);
  const buffer = m.exports.memory.buffer;
  owners.set(buffer, m);
  return new Float32Array(buffer, m.end, length);
}

/** The BlockDecoder of `type` that runs the module's `name`. */
export function wasmBlockDecoder(type: GgmlType, name: WasmDecoderName): BlockDecoder {
  const { typeSize, blockSize } = type;
  return (src, dst, blocks) => {
    checkSpan(type, src, dst, blocks);
    if (blocks === 0) return;
    const own = owners.get(dst.buffer);
    const m = own ?? (shared ??= instantiate(0));
    const decode = m.exports[name];
    const perChunk = own
      ? Math.floor(m.input.length / typeSize)
      : Math.min(Math.floor(m.output.length / blockSize), Math.floor(m.input.length / typeSize));
    for (let b = 0; b < blocks; b += perChunk) {
      const n = Math.min(perChunk, blocks - b);
      m.input.set(src.subarray(b * typeSize, (b + n) * typeSize));
      if (own) {
        decode(m.inAt, dst.byteOffset + b * blockSize * 4, n);
      } else {
        decode(m.inAt, m.outAt, n);
        dst.set(m.output.subarray(0, n * blockSize), b * blockSize);
      }
    }
  };
}
