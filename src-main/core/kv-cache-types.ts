/**
 * KV cache element types, named as llama.cpp's `--cache-type-k` / `--cache-type-v` name them: f16
 * (the default, as llama.cpp's), q8_0 and q4_0 (llama.cpp's block quants, about half and a
 * quarter of f16's bytes), and f32. K and V each take their own.
 */
import { ggmlRowBytes, ggmlType, type GgmlType } from './ggml-types';

export const KV_CACHE_TYPES = ['f16', 'q8_0', 'q4_0', 'f32'] as const;

export type KvCacheType = (typeof KV_CACHE_TYPES)[number];

export interface KvCacheTypes {
  k: KvCacheType;
  v: KvCacheType;
}

export const DEFAULT_KV_CACHE_TYPES: KvCacheTypes = { k: 'f16', v: 'f16' };

export function isKvCacheType(name: string): name is KvCacheType {
  return (KV_CACHE_TYPES as readonly string[]).includes(name);
}

export function kvCacheGgmlType(type: KvCacheType): GgmlType {
  return ggmlType(type.toUpperCase() as 'F16' | 'Q8_0' | 'Q4_0' | 'F32');
}

/** Bytes of `elements` cached values of `type` (a whole number of its blocks), as llama.cpp's cache holds them. */
export function kvCacheBytes(type: KvCacheType, elements: number): number {
  return ggmlRowBytes(kvCacheGgmlType(type), elements);
}
