/** How the UI names KV cache types: in Chat settings, an answer's statistics, the loaded models and the Memory tab. */
import type { KvCacheType, KvCacheTypeEstimate, KvCacheTypes } from '../../src-preload/api';
import { formatBytes } from './format';

/** What each type takes against f16, the default (the Memory tab has the exact bytes). */
const SIZES: Record<KvCacheType, string> = {
  f16: 'the default',
  q8_0: 'about half of f16',
  q4_0: 'about a quarter of f16',
  f32: 'twice f16',
};

/** "q8_0 (about half of f16)", as a choice in Chat settings. */
export function kvCacheTypeLabel(type: KvCacheType): string {
  return `${type} (${SIZES[type]})`;
}

/** "q8_0" when K and V share a type, else "K q8_0, V f16". */
export function kvCacheTypesText(types: KvCacheTypes): string {
  return types.k === types.v ? types.k : `K ${types.k}, V ${types.v}`;
}

/** An answer's statistics item: only when the cache was not llama.cpp's default f16. */
export function kvCacheStatsItem(types: KvCacheTypes | undefined): string | null {
  return types && (types.k !== 'f16' || types.v !== 'f16') ? `KV cache ${kvCacheTypesText(types)}` : null;
}

/** The Memory tab's "Saved" cell: what the type saves against f16, with its share. */
export function savedText(row: KvCacheTypeEstimate, f16Bytes: number | null): string {
  if (row.savedBytes === null || f16Bytes === null) return '—';
  if (row.savedBytes === 0) return '—';
  const share = f16Bytes > 0 ? ` (${Math.round((Math.abs(row.savedBytes) / f16Bytes) * 100)}%)` : '';
  return row.savedBytes > 0 ? `${formatBytes(row.savedBytes)}${share}` : `${formatBytes(-row.savedBytes)} more${share}`;
}
