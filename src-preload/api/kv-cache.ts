/**
 * KV cache element types, named as llama.cpp's `--cache-type-k` / `--cache-type-v` name them: f16
 * (the default, as llama.cpp's), q8_0 and q4_0 (llama.cpp's block quants: 34 and 18 bytes a
 * block of 32 elements, about half and a quarter of f16's), and f32. K and V each take their own.
 * Pure values.
 */
export const KV_CACHE_TYPES = ['f16', 'q8_0', 'q4_0', 'f32'] as const;

export type KvCacheType = (typeof KV_CACHE_TYPES)[number];

export interface KvCacheTypes {
  k: KvCacheType;
  v: KvCacheType;
}

export const DEFAULT_KV_CACHE_TYPES: KvCacheTypes = { k: 'f16', v: 'f16' };

export function isKvCacheType(name: unknown): name is KvCacheType {
  return (KV_CACHE_TYPES as readonly unknown[]).includes(name);
}
