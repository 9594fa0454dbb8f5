/** KV cache types (the contract's names, src-preload/api/kv-cache.ts) as ggml types. */
import { ggmlRowBytes, ggmlTypeByName, type GgmlType } from './ggml-types';

/** The ggml type of a cache type name ("q8_0": Q8_0). */
export function kvCacheGgmlType(name: string): GgmlType {
  const type = ggmlTypeByName(name);
  if (!type) throw new Error(`unknown KV cache type ${name}`);
  return type;
}

/** Bytes of `elements` cached values of `type` (a whole number of its blocks), as llama.cpp's cache holds them. */
export function kvCacheBytes(type: string, elements: number): number {
  return ggmlRowBytes(kvCacheGgmlType(type), elements);
}

/** K and V cache type names (the contract's KvCacheTypes; core imports no contract). */
export interface KvTypeNames {
  readonly k: string;
  readonly v: string;
}

/** llama.cpp's default: f16 K and V. */
export const F16_KV: KvTypeNames = { k: 'f16', v: 'f16' };

/**
 * Why a cache of `type` cannot hold heads of `headSize` elements (a block may not straddle two
 * heads, as llama.cpp refuses too), or null when it can.
 */
export function kvCacheTypeProblem(type: string, headSize: number): string | null {
  const { blockSize } = kvCacheGgmlType(type);
  // f16 and f32 take any head (even a fractional one, from a file whose embedding is no multiple of its heads).
  return blockSize === 1 || headSize % blockSize === 0
    ? null
    : `a ${type} KV cache needs a head size that is a multiple of ${blockSize}; this model's heads have ${headSize}`;
}
