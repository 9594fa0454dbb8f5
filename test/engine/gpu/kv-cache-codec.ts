/**
 * What the KV cache tests know of the caches' types on the CPU: values as a cache of a type holds
 * them (llama.cpp's encoder, then its decoder), and a GPU cache's words (kv-quant.wgsl's groups of
 * two blocks) rewritten as ggml's blocks, to compare with the CPU encoder byte for byte.
 */
import { blockOffsets } from '../../../src-main/core/ggml-types';
import { kvCacheGgmlType } from '../../../src-main/core/kv-cache-types';
import type { KvCacheType } from '../../../src-preload/api/kv-cache';
import { decoderFor } from '../../../src-main/core/quants/decoders';
import { encoderFor } from '../../../src-main/core/quants/encoders';
import * as ref from '../reference';

/**
 * `values` (rows of `rowLength`) as a cache of `type` gives them back; `rot`: the Hadamard chunk
 * the cache rotates them by first (OpKernels.kvRotation), turned back in double precision.
 */
export function cached(type: KvCacheType, values: Float32Array, rowLength: number, rot = 0): Float64Array {
  if (type === 'f32') return Float64Array.from(values);
  if (type === 'f16') return Float64Array.from(values, ref.roundF16);
  const decoded = Float64Array.from(
    decodeBlocks(type, ggmlBlocks(type, rot ? hadamardF32(values, rot) : values, rowLength)),
  );
  return rot ? hadamard(decoded, rot) : decoded;
}

const sign = (i: number, j: number) => (popcount(i & j) % 2 ? -1 : 1);

function popcount(x: number): number {
  let n = 0;
  for (; x; x &= x - 1) n++;
  return n;
}

/** x · H in chunks of n, in f32 as kv-quant.wgsl sums it (in order, then scaled). */
export function hadamardF32(x: Float32Array, n: number): Float32Array {
  const fr = Math.fround;
  const scale = fr(1 / fr(Math.sqrt(n)));
  const out = new Float32Array(x.length);
  for (let c = 0; c < x.length; c += n) {
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s = fr(s + sign(i, j) * x[c + j]!);
      out[c + i] = fr(s * scale);
    }
  }
  return out;
}

/** x · H in chunks of n, in double precision. */
function hadamard(x: Float64Array, n: number): Float64Array {
  const out = new Float64Array(x.length);
  for (let c = 0; c < x.length; c += n) {
    for (let i = 0; i < n; i++) {
      let s = 0;
      for (let j = 0; j < n; j++) s += sign(i, j) * x[c + j]!;
      out[c + i] = s / Math.sqrt(n);
    }
  }
  return out;
}

/** llama.cpp's blocks of `values` (rows of `rowLength`), from the repository's CPU encoder. */
export function ggmlBlocks(type: KvCacheType, values: Float32Array, rowLength: number): Uint8Array {
  const t = kvCacheGgmlType(type);
  const out = new Uint8Array((values.length / t.blockSize) * t.typeSize);
  encoderFor(t)(values, out, values.length / rowLength, rowLength, null);
  return out;
}

function decodeBlocks(type: KvCacheType, blocks: Uint8Array): Float32Array {
  const t = kvCacheGgmlType(type);
  const n = blocks.length / t.typeSize;
  const out = new Float32Array(n * t.blockSize);
  decoderFor(t)(blocks, out, n);
  return out;
}

/** The first `elements` values of a quantized GPU cache (its words) as ggml's blocks. */
export function gpuCacheBlocks(type: 'q8_0' | 'q4_0', words: Uint32Array, elements: number): Uint8Array {
  const t = kvCacheGgmlType(type);
  const { d, qs } = blockOffsets(type === 'q8_0' ? 'Q8_0' : 'Q4_0');
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  const codeBytes = (t.blockSize * (type === 'q8_0' ? 8 : 4)) / 8;
  const groupBytes = 2 * codeBytes + 4;
  const out = new Uint8Array((elements / t.blockSize) * t.typeSize);
  for (let b = 0; b < elements / t.blockSize; b++) {
    const group = Math.floor(b / 2) * groupBytes;
    const o = b * t.typeSize;
    const scale = group + 2 * codeBytes + 2 * (b % 2);
    out[o + d] = bytes[scale]!;
    out[o + d + 1] = bytes[scale + 1]!;
    const codes = group + (b % 2) * codeBytes;
    if (type === 'q8_0') {
      out.set(bytes.subarray(codes, codes + t.blockSize), o + qs);
    } else {
      // GPU: element j in nibble j of the block's codes; ggml: qs[j] = element j | element j + 16 << 4.
      const nibble = (j: number) => (bytes[codes + (j >> 1)]! >> (4 * (j & 1))) & 15;
      for (let j = 0; j < 16; j++) out[o + qs + j] = nibble(j) | (nibble(j + 16) << 4);
    }
  }
  return out;
}
