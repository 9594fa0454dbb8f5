import { ggmlRowBytes, type GgmlType } from '../ggml-types';
import { GGUF_DEFAULT_ALIGNMENT, GGUF_MAGIC } from './reader';
import { FIXED_TYPE_BYTES, GgufType, StringArray, type GgufArray, type GgufKv, type GgufValue } from './values';

export interface GgufTensorSpec {
  readonly name: string;
  readonly type: GgmlType;
  /** Dimensions innermost first. */
  readonly ne: readonly number[];
}

export interface GgufHeaderSpec {
  /** 3 by default; 2 has the same layout and exists so v2 files can be rewritten unchanged. */
  readonly version?: 2 | 3;
  readonly kvs: readonly GgufKv[];
  readonly tensors: readonly GgufTensorSpec[];
}

export interface GgufLayout {
  /** Header, metadata, tensor infos and the padding up to the data section. */
  readonly header: Uint8Array;
  readonly alignment: number;
  readonly dataOffset: number;
  /** Per tensor: offset from the data section and byte length (padding not included). */
  readonly tensors: readonly { readonly offset: number; readonly bytes: number }[];
  /** Total file size: data section padded after every tensor, as llama.cpp writes it. */
  readonly fileBytes: number;
}

/** A growable little-endian byte buffer. */
class ByteWriter {
  private buf = new Uint8Array(1 << 16);
  private view = new DataView(this.buf.buffer);
  length = 0;

  /** Grows the buffer for `n` more bytes and returns where they go; call it before touching `buf`/`view`. */
  private reserve(n: number): number {
    if (this.length + n > this.buf.byteLength) {
      const next = new Uint8Array(Math.max(this.buf.byteLength * 2, this.length + n));
      next.set(this.buf.subarray(0, this.length));
      this.buf = next;
      this.view = new DataView(next.buffer);
    }
    const at = this.length;
    this.length += n;
    return at;
  }

  u8(v: number): void {
    const at = this.reserve(1);
    this.view.setUint8(at, v);
  }
  i8(v: number): void {
    const at = this.reserve(1);
    this.view.setInt8(at, v);
  }
  u16(v: number): void {
    const at = this.reserve(2);
    this.view.setUint16(at, v, true);
  }
  i16(v: number): void {
    const at = this.reserve(2);
    this.view.setInt16(at, v, true);
  }
  u32(v: number): void {
    const at = this.reserve(4);
    this.view.setUint32(at, v, true);
  }
  i32(v: number): void {
    const at = this.reserve(4);
    this.view.setInt32(at, v, true);
  }
  f32(v: number): void {
    const at = this.reserve(4);
    this.view.setFloat32(at, v, true);
  }
  f64(v: number): void {
    const at = this.reserve(8);
    this.view.setFloat64(at, v, true);
  }
  u64(v: number | bigint): void {
    const at = this.reserve(8);
    this.view.setBigUint64(at, BigInt(v), true);
  }
  i64(v: number | bigint): void {
    const at = this.reserve(8);
    this.view.setBigInt64(at, BigInt(v), true);
  }
  bytes(b: Uint8Array): void {
    const at = this.reserve(b.byteLength);
    this.buf.set(b, at);
  }
  zeros(n: number): void {
    const at = this.reserve(n);
    this.buf.fill(0, at, this.length);
  }

  string(s: string): void {
    const b = new TextEncoder().encode(s);
    this.u64(b.byteLength);
    this.bytes(b);
  }

  result(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

function writeValue(w: ByteWriter, type: GgufType, value: GgufValue, key: string): void {
  const wrong = (): never => {
    throw new TypeError(`metadata "${key}": value does not match type ${GgufType[type] ?? type}`);
  };
  switch (type) {
    case GgufType.STRING:
      return typeof value === 'string' ? w.string(value) : wrong();
    case GgufType.BOOL:
      return typeof value === 'boolean' ? w.u8(value ? 1 : 0) : wrong();
    case GgufType.ARRAY:
      return typeof value === 'object' ? writeArray(w, value, key) : wrong();
    case GgufType.UINT64:
      return typeof value === 'bigint' || typeof value === 'number' ? w.u64(value) : wrong();
    case GgufType.INT64:
      return typeof value === 'bigint' || typeof value === 'number' ? w.i64(value) : wrong();
    default: {
      if (typeof value !== 'number') return wrong();
      const put: Partial<Record<GgufType, (v: number) => void>> = {
        [GgufType.UINT8]: (v) => w.u8(v),
        [GgufType.INT8]: (v) => w.i8(v),
        [GgufType.UINT16]: (v) => w.u16(v),
        [GgufType.INT16]: (v) => w.i16(v),
        [GgufType.UINT32]: (v) => w.u32(v),
        [GgufType.INT32]: (v) => w.i32(v),
        [GgufType.FLOAT32]: (v) => w.f32(v),
        [GgufType.FLOAT64]: (v) => w.f64(v),
      };
      const f = put[type];
      if (!f) throw new TypeError(`metadata "${key}": unknown value type ${type}`);
      return f(value);
    }
  }
}

function writeStringArray(w: ByteWriter, items: StringArray): void {
  // v2+ string arrays are stored exactly as this writer stores them: copy the bytes.
  if (items.lengthBytes === 8) return w.bytes(items.raw);
  for (let i = 0; i < items.length; i++) {
    const b = items.bytesAt(i);
    w.u64(b.byteLength);
    w.bytes(b);
  }
}

function writeArray(w: ByteWriter, array: GgufArray, key: string): void {
  w.u32(array.itemType);
  w.u64(array.items.length);
  if (array.itemType === GgufType.STRING) return writeStringArray(w, array.items);
  if (array.itemType === GgufType.ARRAY) {
    for (const item of array.items) writeArray(w, item, key);
    return;
  }
  if (FIXED_TYPE_BYTES[array.itemType] === undefined)
    throw new TypeError(`metadata "${key}": unknown array item type ${array.itemType}`);
  const items = array.items;
  w.bytes(new Uint8Array(items.buffer, items.byteOffset, items.byteLength));
}

function alignmentOf(kvs: readonly GgufKv[]): number {
  const kv = kvs.find((k) => k.key === 'general.alignment');
  return kv && typeof kv.value === 'number' ? kv.value : GGUF_DEFAULT_ALIGNMENT;
}

const alignUp = (n: number, a: number): number => Math.ceil(n / a) * a;

/**
 * Lays out a GGUF file: encodes the header with metadata in the given order and types, assigns
 * each tensor an aligned offset, and pads to the data section. A file without tensors gets no
 * padding, as llama.cpp's vocab-only files have none.
 */
export function layoutGguf(spec: GgufHeaderSpec): GgufLayout {
  const alignment = alignmentOf(spec.kvs);
  const w = new ByteWriter();
  w.u32(GGUF_MAGIC);
  w.u32(spec.version ?? 3);
  w.u64(spec.tensors.length);
  w.u64(spec.kvs.length);
  for (const kv of spec.kvs) {
    w.string(kv.key);
    w.u32(kv.type);
    writeValue(w, kv.type, kv.value, kv.key);
  }
  const tensors: { offset: number; bytes: number }[] = [];
  let offset = 0;
  for (const t of spec.tensors) {
    if ((t.ne[0] ?? 1) % t.type.blockSize !== 0) {
      throw new TypeError(
        `tensor "${t.name}": row length ${t.ne[0]} is not a multiple of the ${t.type.name} block size`,
      );
    }
    const elements = t.ne.reduce((a, b) => a * b, 1);
    const bytes = ggmlRowBytes(t.type, elements);
    w.string(t.name);
    w.u32(t.ne.length);
    for (const n of t.ne) w.u64(n);
    w.u32(t.type.id);
    w.u64(offset);
    tensors.push({ offset, bytes });
    offset = alignUp(offset + bytes, alignment);
  }
  if (spec.tensors.length > 0) w.zeros(alignUp(w.length, alignment) - w.length);
  const header = w.result();
  return { header, alignment, dataOffset: header.byteLength, tensors, fileBytes: header.byteLength + offset };
}
