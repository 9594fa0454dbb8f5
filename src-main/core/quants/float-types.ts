/**
 * Plain float tensors to f32. Values are moved as bit patterns (never through a JS number), so
 * every bit — signed zeros, subnormals, NaN payloads — comes out as llama.cpp produces it.
 * `src` may sit at any byte offset: an even one is read through a 16-bit view (GGUF data is
 * little-endian, as are the machines this runs on); an odd one is first copied, a chunk at a time,
 * into an aligned scratch buffer.
 */
import { ggmlType } from '../ggml-types';
import { checkSpan, type BlockDecoder } from './codec';
import { f16BitsTableI32 } from './half';

const [F32, F16, BF16] = (['F32', 'F16', 'BF16'] as const).map(ggmlType);

/** F32: a byte copy. */
export const decodeF32: BlockDecoder = (src, dst, blocks) => {
  checkSpan(F32, src, dst, blocks);
  new Uint8Array(dst.buffer, dst.byteOffset, blocks * 4).set(src.subarray(0, blocks * 4));
};

const CHUNK = 16384; // values per scratch copy
let scratch: Uint8Array | undefined;
let scratch16: Uint16Array | undefined;

/**
 * Runs `convert` over 16-bit words of `src` (`n` of them) as Uint16Array views, writing to `out`
 * from index 0: directly when `src` is 2-byte aligned, through the scratch buffer when not.
 */
function with16(src: Uint8Array, out: Int32Array, n: number, convert: (s16: Uint16Array, out: Int32Array, from: number, n: number) => void): void {
  if ((src.byteOffset & 1) === 0) {
    convert(new Uint16Array(src.buffer, src.byteOffset, n), out, 0, n);
    return;
  }
  scratch ??= new Uint8Array(CHUNK * 2);
  scratch16 ??= new Uint16Array(scratch.buffer);
  for (let from = 0; from < n; from += CHUNK) {
    const count = Math.min(CHUNK, n - from);
    scratch.set(src.subarray(2 * from, 2 * (from + count)));
    convert(scratch16, out, from, count);
  }
}

function f16Words(s16: Uint16Array, out: Int32Array, from: number, n: number): void {
  const t = f16BitsTableI32();
  const n4 = n & ~3;
  let i = 0;
  for (; i < n4; i += 4) {
    const z = from + i;
    out[z] = t[s16[i]!]!;
    out[z + 1] = t[s16[i + 1]!]!;
    out[z + 2] = t[s16[i + 2]!]!;
    out[z + 3] = t[s16[i + 3]!]!;
  }
  for (; i < n; i++) out[from + i] = t[s16[i]!]!;
}

function bf16Words(s16: Uint16Array, out: Int32Array, from: number, n: number): void {
  const n8 = n & ~7;
  let i = 0;
  for (; i < n8; i += 8) {
    const z = from + i;
    out[z] = s16[i]! << 16;
    out[z + 1] = s16[i + 1]! << 16;
    out[z + 2] = s16[i + 2]! << 16;
    out[z + 3] = s16[i + 3]! << 16;
    out[z + 4] = s16[i + 4]! << 16;
    out[z + 5] = s16[i + 5]! << 16;
    out[z + 6] = s16[i + 6]! << 16;
    out[z + 7] = s16[i + 7]! << 16;
  }
  for (; i < n; i++) out[from + i] = s16[i]! << 16;
}

/** F16 → F32 through the 65536-entry table (ggml quiets NaNs and keeps their payload). */
export const decodeF16: BlockDecoder = (src, dst, blocks) => {
  checkSpan(F16, src, dst, blocks);
  with16(src, new Int32Array(dst.buffer, dst.byteOffset, blocks), blocks, f16Words);
};

/** BF16 → F32: the 16 bits go on top. */
export const decodeBF16: BlockDecoder = (src, dst, blocks) => {
  checkSpan(BF16, src, dst, blocks);
  with16(src, new Int32Array(dst.buffer, dst.byteOffset, blocks), blocks, bf16Words);
};
