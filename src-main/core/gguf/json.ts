import type { GgufFile } from './gguf-file';
import { GgufType, type GgufArray, type GgufValue } from './values';

/** Arrays longer than this are summarised instead of listed. */
export const JSON_ARRAY_LIMIT = 64;
const JSON_ARRAY_HEAD = 8;

export interface ElidedArray {
  readonly arrayOf: string;
  readonly length: number;
  readonly head: unknown[];
}

/** The lower-case GGUF type name ("string", "uint32", "array"). */
export function ggufTypeName(type: GgufType): string {
  return (GgufType[type] ?? `type ${type}`).toLowerCase();
}

/** The shortest decimal that reads back as the same float32 (1e-5, not 0.000009999999747378752). */
export function shortestFloat32(v: number): number {
  for (let digits = 1; digits < 9; digits++) {
    const candidate = Number(v.toPrecision(digits));
    if (Math.fround(candidate) === v) return candidate;
  }
  return v;
}

function scalarToJson(value: number | bigint | boolean | string, type: GgufType): unknown {
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  if (typeof value === 'number' && type === GgufType.FLOAT32) return shortestFloat32(value);
  return value;
}

/** Item `i` of an array as JSON (nested arrays elided as in ggufValueToJson). */
export function arrayItem(array: GgufArray, i: number): unknown {
  switch (array.itemType) {
    case GgufType.STRING:
      return array.items.at(i);
    case GgufType.ARRAY:
      return arrayToJson(array.items[i]!);
    case GgufType.BOOL:
      return array.items[i] !== 0;
    default:
      return scalarToJson(array.items[i]!, array.itemType);
  }
}

function arrayToJson(array: GgufArray): unknown[] | ElidedArray {
  const length = array.items.length;
  const take = (n: number) => Array.from({ length: Math.min(n, length) }, (_, i) => arrayItem(array, i));
  if (length <= JSON_ARRAY_LIMIT) return take(length);
  return { arrayOf: ggufTypeName(array.itemType), length, head: take(JSON_ARRAY_HEAD) };
}

/** A metadata value as JSON: 64-bit integers as numbers where exact, long arrays elided. */
export function ggufValueToJson(value: GgufValue, type: GgufType): unknown {
  return typeof value === 'object' ? arrayToJson(value) : scalarToJson(value, type);
}

/** The `gufo inspect --json` document, without the summary. */
export function ggufToJson(gguf: GgufFile) {
  return {
    version: gguf.version,
    alignment: gguf.alignment,
    dataOffset: gguf.dataOffset,
    fileBytes: gguf.fileBytes,
    metadata: Object.fromEntries(gguf.kvs.map((kv) => [kv.key, ggufValueToJson(kv.value, kv.type)])),
    tensors: gguf.tensors.map((t) => ({ name: t.name, type: t.type.name, ne: t.ne, offset: t.offset, bytes: t.bytes })),
  };
}
