/**
 * Numbers read from metadata that size or bound anything (layers, heads, widths, context) are
 * checked here before use: a hostile file's `block_count = 2^31` is a GgufError naming the file
 * and key, never a 2^31-element array. llama.cpp reads these keys as uint32 and refuses a value of
 * the wrong type, so nothing above 2^32 - 1, below 0 or of another type is a real model's.
 */
import { blockName, tensorLayer } from '../tensor-names';
import { GgufError } from './errors';
import type { GgufFile } from './gguf-file';
import { ggufTypeName } from './json';
import { GgufType, type GgufKv } from './values';

/** The largest count llama.cpp can read (its hyper-parameters are uint32). */
export const MAX_COUNT = 0xffffffff;

/** LLAMA_MAX_LAYERS: llama.cpp loads no model with more layers. */
export const MAX_LAYERS = 512;

const INTEGER_TYPES: ReadonlySet<GgufType> = new Set([
  GgufType.UINT8,
  GgufType.INT8,
  GgufType.UINT16,
  GgufType.INT16,
  GgufType.UINT32,
  GgufType.INT32,
  GgufType.UINT64,
  GgufType.INT64,
]);

function fail(gguf: GgufFile, key: string, problem: string): never {
  throw new GgufError(gguf.file, `metadata "${key}"`, problem);
}

/** Characters of a string value an error quotes. */
const QUOTED = 40;

/** The value as an error shows it, on one line: `float32 NaN`, `string "12"`, `an array of uint32`. */
function describe(kv: GgufKv): string {
  const { value } = kv;
  if (typeof value === 'object') return `an array of ${ggufTypeName(value.itemType)}`;
  const shown =
    typeof value === 'string'
      ? JSON.stringify(value.length > QUOTED ? `${value.slice(0, QUOTED)}…` : value)
      : String(value);
  return `${ggufTypeName(kv.type)} ${shown}`;
}

function inRange(gguf: GgufFile, key: string, value: number | bigint, max: number, item = ''): number {
  if (value < 0 || value > max)
    fail(gguf, key, `${item}${value} is out of range (expected a whole number from 0 to ${max})`);
  return Number(value);
}

/**
 * A whole-number metadata value in [0, max]; undefined when the key is absent. Any other type or
 * value throws a GgufError naming the key.
 */
export function readCount(gguf: GgufFile, key: string, max = MAX_COUNT): number | undefined {
  const kv = gguf.metadata.get(key);
  if (!kv) return undefined;
  if (!INTEGER_TYPES.has(kv.type)) fail(gguf, key, `must be a whole number, found ${describe(kv)}`);
  return inRange(gguf, key, kv.value as number | bigint, max);
}

/**
 * A count that may be given per layer (head counts, feed-forward widths): a whole number, or an
 * array of them with one entry per layer, as llama.cpp's get_key_or_arr requires. `layers`: the
 * checked layer count, or null when the file does not say.
 */
export function readPerLayerCount(
  gguf: GgufFile,
  key: string,
  layers: number | null,
  max = MAX_COUNT,
): number | number[] | undefined {
  const kv = gguf.metadata.get(key);
  if (kv?.type !== GgufType.ARRAY || typeof kv.value !== 'object') return readCount(gguf, key, max);
  const array = kv.value;
  if (!INTEGER_TYPES.has(array.itemType))
    fail(gguf, key, `must be a whole number or one per layer, found ${describe(kv)}`);
  const items = array.items as ArrayLike<number | bigint>;
  if (layers !== null && items.length !== layers) fail(gguf, key, `has ${items.length} entries for ${layers} layers`);
  if (items.length > MAX_LAYERS)
    fail(gguf, key, `has ${items.length} entries, more than the ${MAX_LAYERS} layers llama.cpp loads`);
  return Array.from(items, (v, i) => inRange(gguf, key, v, max, `entry ${i}: `));
}

/** A finite number (any numeric type: llama.cpp's float keys); undefined when absent. */
export function readFiniteNumber(gguf: GgufFile, key: string): number | undefined {
  const kv = gguf.metadata.get(key);
  if (!kv) return undefined;
  const value = kv.value;
  if (typeof value !== 'number' && typeof value !== 'bigint')
    fail(gguf, key, `must be a number, found ${describe(kv)}`);
  const n = Number(value);
  if (!Number.isFinite(n)) fail(gguf, key, `${n} is not a finite number`);
  return n;
}

/** Layers whose tensors (blk.N.*) the file holds: the highest N + 1, or 0 for none. */
function tensorLayers(gguf: GgufFile): number {
  let layers = 0;
  for (const t of gguf.tensors) layers = Math.max(layers, (tensorLayer(t.name) ?? -1) + 1);
  return layers;
}

/**
 * `{arch}.block_count`, at most LLAMA_MAX_LAYERS and, in a file holding its layers' tensors (not
 * one part of a split set), exactly the layers those tensors hold, as llama.cpp's loader requires.
 */
export function readLayerCount(gguf: GgufFile, arch: string): number | undefined {
  const key = `${arch}.block_count`;
  const layers = readCount(gguf, key);
  if (layers === undefined) return undefined;
  const held = (readCount(gguf, 'split.count') ?? 1) > 1 ? 0 : tensorLayers(gguf);
  if (held > 0 && layers !== held)
    fail(
      gguf,
      key,
      `${layers} layers, but the file's tensors hold ${held} (${blockName(0)} to ${blockName(held - 1)})`,
    );
  if (layers > MAX_LAYERS) fail(gguf, key, `${layers} layers, more than the ${MAX_LAYERS} llama.cpp loads`);
  return layers;
}
