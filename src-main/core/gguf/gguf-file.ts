import type { GgmlType } from '../ggml-types';
import type { ByteSource } from './byte-source';
import { GgufType, type GgufArray, type GgufKv, type GgufValue } from './values';

export interface GgufTensorInfo {
  readonly name: string;
  readonly type: GgmlType;
  /** Dimensions innermost first, as stored (ne[0] is the row length). */
  readonly ne: readonly number[];
  /** Offset of the tensor's data from the start of the data section. */
  readonly offset: number;
  readonly elements: number;
  readonly bytes: number;
}

/**
 * A parsed GGUF file: header, metadata and tensor infos, plus the source its tensor bytes are
 * read from. Opening one reads no tensor data.
 */
export class GgufFile {
  readonly metadata: ReadonlyMap<string, GgufKv>;
  private readonly tensorsByName: ReadonlyMap<string, GgufTensorInfo>;

  constructor(
    /** The path or name used in error messages. */
    readonly file: string,
    readonly source: ByteSource,
    readonly version: 1 | 2 | 3,
    readonly alignment: number,
    /** Absolute offset of the data section (may lie past EOF in a file without tensors). */
    readonly dataOffset: number,
    readonly kvs: readonly GgufKv[],
    readonly tensors: readonly GgufTensorInfo[],
  ) {
    this.metadata = new Map(kvs.map((kv) => [kv.key, kv]));
    this.tensorsByName = new Map(tensors.map((t) => [t.name, t]));
  }

  get fileBytes(): number {
    return this.source.size;
  }

  get(key: string): GgufValue | undefined {
    return this.metadata.get(key)?.value;
  }

  getString(key: string): string | undefined {
    const v = this.get(key);
    return typeof v === 'string' ? v : undefined;
  }

  /** A numeric scalar as a JS number (64-bit values only when exact). */
  getNumber(key: string): number | undefined {
    const v = this.get(key);
    if (typeof v === 'number') return v;
    if (typeof v === 'bigint' && v <= BigInt(Number.MAX_SAFE_INTEGER) && v >= -BigInt(Number.MAX_SAFE_INTEGER)) {
      return Number(v);
    }
    return undefined;
  }

  getArray(key: string): GgufArray | undefined {
    const kv = this.metadata.get(key);
    return kv?.type === GgufType.ARRAY ? (kv.value as GgufArray) : undefined;
  }

  tensor(name: string): GgufTensorInfo | undefined {
    return this.tensorsByName.get(name);
  }

  /** The tensor's bytes: a view into the mapped file, never a copy, when the source is mapped. */
  tensorData(tensor: GgufTensorInfo): Uint8Array {
    return this.source.bytes(this.dataOffset + tensor.offset, tensor.bytes);
  }
}
