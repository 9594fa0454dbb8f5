import { GGML_TYPE_COUNT, ggmlTypeById, REMOVED_GGML_TYPES } from '../ggml-types';
import type { ByteSource } from './byte-source';
import { Cursor } from './cursor';
import { GgufFile, type GgufTensorInfo } from './gguf-file';
import {
  FIXED_TYPE_BYTES,
  GgufType,
  StringArray,
  type GgufArray,
  type GgufKv,
  type GgufValue,
  type NumericArray,
  utf8Decoder,
} from './values';

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32;
/** GGML_MAX_DIMS */
export const GGUF_MAX_DIMS = 4;
/** GGML_MAX_NAME: names are stored in a 64-byte field with a terminating NUL. */
export const GGUF_MAX_TENSOR_NAME = 63;
/** Arrays of arrays deeper than this are refused rather than recursed into. */
const MAX_ARRAY_DEPTH = 8;

const TYPED_ARRAYS: Partial<Record<GgufType, { new (b: ArrayBuffer): NumericArray }>> = {
  [GgufType.UINT8]: Uint8Array,
  [GgufType.INT8]: Int8Array,
  [GgufType.UINT16]: Uint16Array,
  [GgufType.INT16]: Int16Array,
  [GgufType.UINT32]: Uint32Array,
  [GgufType.INT32]: Int32Array,
  [GgufType.FLOAT32]: Float32Array,
  [GgufType.BOOL]: Uint8Array,
  [GgufType.UINT64]: BigUint64Array,
  [GgufType.INT64]: BigInt64Array,
  [GgufType.FLOAT64]: Float64Array,
};

/** Version-dependent widths: GGUF v1 stored counts, lengths and dims as u32, later versions as u64. */
class HeaderReader {
  readonly lengthBytes: 4 | 8;

  constructor(
    readonly c: Cursor,
    readonly version: 1 | 2 | 3,
  ) {
    this.lengthBytes = version === 1 ? 4 : 8;
  }

  length(field: string): number {
    return this.version === 1 ? this.c.u32(field) : this.c.u64Number(field);
  }

  string(field: string): string {
    const n = this.length(field);
    if (n > this.c.remaining)
      this.c.fail(field, `string length ${n} exceeds the ${this.c.remaining} bytes left in the file`);
    return utf8Decoder.decode(this.c.take(n, field));
  }

  value(type: number, field: string, depth = 0): GgufValue {
    const c = this.c;
    // A number off the file, possibly no GgufType at all (the default case).
    switch (type as GgufType) {
      case GgufType.UINT8:
        return c.u8(field);
      case GgufType.INT8:
        return c.i8(field);
      case GgufType.UINT16:
        return c.u16(field);
      case GgufType.INT16:
        return c.i16(field);
      case GgufType.UINT32:
        return c.u32(field);
      case GgufType.INT32:
        return c.i32(field);
      case GgufType.FLOAT32:
        return c.f32(field);
      case GgufType.BOOL:
        return c.u8(field) !== 0;
      case GgufType.STRING:
        return this.string(field);
      case GgufType.ARRAY:
        return this.array(field, depth);
      case GgufType.UINT64:
        return c.u64(field);
      case GgufType.INT64:
        return c.i64(field);
      case GgufType.FLOAT64:
        return c.f64(field);
      default:
        return c.fail(field, `unknown metadata value type ${type}`);
    }
  }

  array(field: string, depth: number): GgufArray {
    const c = this.c;
    if (depth >= MAX_ARRAY_DEPTH) c.fail(field, `arrays nested more than ${MAX_ARRAY_DEPTH} deep`);
    // A number off the file, possibly no GgufType at all (neither branch below takes it then).
    const itemType: GgufType = c.u32(`${field} (array item type)`);
    const count = this.length(`${field} (array length)`);
    const fixed = FIXED_TYPE_BYTES[itemType];
    if (fixed !== undefined) {
      const bytes = count * fixed;
      if (bytes > c.remaining) c.fail(field, `array of ${count} items needs ${bytes} bytes, only ${c.remaining} left`);
      // A copy in a fresh, aligned buffer for the typed array (Buffer's slice() would not copy).
      const copy = new Uint8Array(c.take(bytes, field));
      const items = new TYPED_ARRAYS[itemType]!(copy.buffer);
      return { itemType, items } as GgufArray;
    }
    if (itemType === GgufType.STRING) return { itemType, items: this.stringArray(count, field) };
    if (itemType === GgufType.ARRAY) {
      const minimum = count * (4 + this.lengthBytes);
      if (minimum > c.remaining)
        c.fail(field, `array of ${count} arrays needs at least ${minimum} bytes, only ${c.remaining} left`);
      const items: GgufArray[] = [];
      for (let i = 0; i < count; i++) items.push(this.array(`${field}[${i}]`, depth + 1));
      return { itemType, items };
    }
    return c.fail(field, `unknown array item type ${itemType}`);
  }

  /** Walks the length prefixes once to find each item; the text is decoded only when read. */
  stringArray(count: number, field: string): StringArray {
    const c = this.c;
    const minimum = count * this.lengthBytes;
    if (minimum > c.remaining)
      c.fail(field, `array of ${count} strings needs at least ${minimum} bytes, only ${c.remaining} left`);
    const start = c.pos;
    const starts = new Uint32Array(count);
    const ends = new Uint32Array(count);
    const item = `${field} item`;
    for (let i = 0; i < count; i++) {
      const n = this.length(item);
      const at = c.pos - start;
      c.skip(n, item);
      if (c.pos - start > 0xffffffff) c.fail(field, 'string array larger than 4 GiB');
      starts[i] = at;
      ends[i] = at + n;
    }
    return new StringArray(c.since(start), this.lengthBytes, starts, ends);
  }
}

function readVersion(c: Cursor): 1 | 2 | 3 {
  const magic = c.u32('magic');
  if (magic !== GGUF_MAGIC) {
    c.fail('magic', `not a GGUF file (starts with 0x${magic.toString(16).padStart(8, '0')}, expected "GGUF")`);
  }
  const version = c.u32('version');
  if (version === 1 || version === 2 || version === 3) return version;
  if ((version & 0xffff) === 0) c.fail('version', 'big-endian GGUF files are not supported');
  return c.fail('version', `unsupported GGUF version ${version} (supported: 1, 2, 3)`);
}

function readKvs(h: HeaderReader, count: number): GgufKv[] {
  const kvs: GgufKv[] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const key = h.string(`metadata[${i}] key`);
    if (seen.has(key)) h.c.fail(`metadata "${key}"`, 'duplicate key');
    seen.add(key);
    const type = h.c.u32(`metadata "${key}" type`);
    kvs.push({ key, type, value: h.value(type, `metadata "${key}"`) });
  }
  return kvs;
}

interface RawTensorInfo {
  name: string;
  ne: number[];
  typeId: number;
  offset: number;
}

function readTensorInfos(h: HeaderReader, count: number): RawTensorInfo[] {
  const c = h.c;
  const infos: RawTensorInfo[] = [];
  for (let i = 0; i < count; i++) {
    const name = h.string(`tensor[${i}] name`);
    const field = `tensor "${name}"`;
    const dims = c.u32(`${field} n_dims`);
    if (dims > GGUF_MAX_DIMS) c.fail(`${field} n_dims`, `${dims} dimensions (at most ${GGUF_MAX_DIMS})`);
    const ne: number[] = [];
    for (let d = 0; d < dims; d++)
      ne.push(h.version === 1 ? c.u32(`${field} ne[${d}]`) : c.u64Number(`${field} ne[${d}]`));
    const typeId = c.u32(`${field} type`);
    const offset = c.u64Number(`${field} offset`);
    infos.push({ name, ne, typeId, offset });
  }
  return infos;
}

function readAlignment(c: Cursor, kvs: readonly GgufKv[]): number {
  const kv = kvs.find((k) => k.key === 'general.alignment');
  if (!kv) return GGUF_DEFAULT_ALIGNMENT;
  const field = 'metadata "general.alignment"';
  if (kv.type !== GgufType.UINT32) c.fail(field, `must be a UINT32, found ${GgufType[kv.type] ?? kv.type}`);
  const a = kv.value as number;
  if (a === 0 || (a & (a - 1)) !== 0) c.fail(field, `${a} is not a power of two`);
  return a;
}

function checkTensor(c: Cursor, raw: RawTensorInfo, alignment: number, dataOffset: number): GgufTensorInfo {
  const field = `tensor "${raw.name}"`;
  if (new TextEncoder().encode(raw.name).byteLength > GGUF_MAX_TENSOR_NAME) {
    c.fail(field, `name longer than ${GGUF_MAX_TENSOR_NAME} bytes`);
  }
  const type = ggmlTypeById(raw.typeId);
  if (!type) {
    const removed = REMOVED_GGML_TYPES.get(raw.typeId);
    if (removed)
      c.fail(`${field} type`, `type id ${raw.typeId} (${removed}) was removed from ggml; re-convert the model`);
    c.fail(`${field} type`, `unknown ggml type id ${raw.typeId} (known ids are below ${GGML_TYPE_COUNT})`);
  }
  const rowLength = raw.ne[0] ?? 1;
  if (rowLength % type.blockSize !== 0) {
    c.fail(
      `${field} ne[0]`,
      `row length ${rowLength} is not a multiple of the ${type.name} block size ${type.blockSize}`,
    );
  }
  let elements = 1;
  for (const n of raw.ne) {
    if (n !== 0 && elements > Number.MAX_SAFE_INTEGER / n)
      c.fail(`${field} ne`, `dimensions [${raw.ne.join(', ')}] overflow`);
    elements *= n;
  }
  const blocks = elements / type.blockSize;
  if (blocks > Number.MAX_SAFE_INTEGER / type.typeSize)
    c.fail(`${field} ne`, `dimensions [${raw.ne.join(', ')}] overflow`);
  const bytes = blocks * type.typeSize;
  if (raw.offset % alignment !== 0)
    c.fail(`${field} offset`, `offset ${raw.offset} is not a multiple of the alignment ${alignment}`);
  const end = dataOffset + raw.offset + bytes;
  if (end > c.size) {
    c.fail(`${field} data`, `bytes [${dataOffset + raw.offset}, ${end}) lie outside the file (${c.size} bytes)`);
  }
  return { name: raw.name, type, ne: raw.ne, offset: raw.offset, elements, bytes };
}

function checkNoOverlap(c: Cursor, tensors: readonly GgufTensorInfo[]): void {
  const sorted = [...tensors].sort((a, b) => a.offset - b.offset);
  for (let i = 1; i < sorted.length; i++) {
    const prev = sorted[i - 1]!;
    const cur = sorted[i]!;
    if (cur.offset < prev.offset + prev.bytes) {
      c.fail(`tensor "${cur.name}" data`, `overlaps tensor "${prev.name}"`);
    }
  }
}

/**
 * Parses a GGUF v1/v2/v3 header from `source`. Reads metadata and tensor infos only; every
 * count and length is checked against the bytes left before anything is allocated for it.
 * Throws GgufError, naming `file` and the field, on any malformed input.
 */
export function parseGguf(source: ByteSource, file: string): GgufFile {
  const c = new Cursor(source, file);
  const version = readVersion(c);
  const h = new HeaderReader(c, version);
  const tensorCount = h.length('tensor_count');
  const kvCount = h.length('metadata_kv_count');
  const minimumKv = h.lengthBytes + 4 + 1;
  const minimumTensor = h.lengthBytes + 4 + 4 + 8;
  if (kvCount * minimumKv + tensorCount * minimumTensor > c.remaining) {
    c.fail(
      'header',
      `claims ${kvCount} metadata entries and ${tensorCount} tensors, more than the ${c.remaining} bytes left can hold`,
    );
  }
  const kvs = readKvs(h, kvCount);
  const raws = readTensorInfos(h, tensorCount);
  const alignment = readAlignment(c, kvs);
  const dataOffset = Math.ceil(c.pos / alignment) * alignment;
  const names = new Set<string>();
  const tensors = raws.map((raw) => {
    if (names.has(raw.name)) c.fail(`tensor "${raw.name}"`, 'duplicate tensor name');
    names.add(raw.name);
    return checkTensor(c, raw, alignment, dataOffset);
  });
  checkNoOverlap(c, tensors);
  return new GgufFile(file, source, version, alignment, dataOffset, kvs, tensors);
}
