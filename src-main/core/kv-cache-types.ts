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
