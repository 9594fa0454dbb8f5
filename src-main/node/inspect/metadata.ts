/** A GGUF file's metadata for the inspector: searchable and paged, long arrays shown by their first items. */
import type { ArrayPage, MetadataEntry, MetadataPage, MetadataQuery } from '../../../src-preload/api';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { arrayItem, ggufTypeName, ggufValueToJson } from '../../core/gguf/json';
import { GgufType, type GgufArray, type GgufKv } from '../../core/gguf/values';
import { pageBounds, slicePage } from './paging';

/** Items of an array value shown in the metadata table; metadataArray pages through the rest. */
export const ARRAY_PREVIEW = 8;

const arrayOf = (kv: GgufKv): GgufArray | undefined =>
  kv.type === GgufType.ARRAY ? (kv.value as GgufArray) : undefined;

function entry(kv: GgufKv): MetadataEntry {
  const array = arrayOf(kv);
  if (!array)
    return { key: kv.key, type: ggufTypeName(kv.type), value: ggufValueToJson(kv.value, kv.type), arrayLength: null };
  const length = array.items.length;
  return {
    key: kv.key,
    type: `array[${ggufTypeName(array.itemType)}]`,
    value: Array.from({ length: Math.min(ARRAY_PREVIEW, length) }, (_, i) => arrayItem(array, i)),
    arrayLength: length,
  };
}

function matches(kv: GgufKv, needle: string): boolean {
  return (
    kv.key.toLowerCase().includes(needle) || (typeof kv.value === 'string' && kv.value.toLowerCase().includes(needle))
  );
}

/** Entries whose key or string value contains `search` (case-insensitive), in file order, paged. */
export function metadataPage(gguf: GgufFile, query: MetadataQuery): MetadataPage {
  const bounds = pageBounds(query, 50);
  const needle = (query.search ?? '').trim().toLowerCase();
  const found = needle ? gguf.kvs.filter((kv) => matches(kv, needle)) : gguf.kvs;
  return { entries: slicePage(found, bounds).map(entry), total: found.length };
}

/** Items [offset, offset + limit) of the array under `key`. */
export function arrayPage(gguf: GgufFile, key: string, offset: number, limit: number): ArrayPage {
  const kv = gguf.metadata.get(key);
  if (!kv) throw new Error(`${gguf.file}: no metadata key "${key}"`);
  const array = arrayOf(kv);
  if (!array) throw new Error(`${gguf.file}: metadata "${key}" is a ${ggufTypeName(kv.type)}, not an array`);
  const bounds = pageBounds({ offset, limit }, limit);
  const end = Math.min(array.items.length, bounds.offset + bounds.limit);
  return {
    key,
    itemType: ggufTypeName(array.itemType),
    offset: bounds.offset,
    items: Array.from({ length: Math.max(0, end - bounds.offset) }, (_, i) => arrayItem(array, bounds.offset + i)),
    total: array.items.length,
  };
}
