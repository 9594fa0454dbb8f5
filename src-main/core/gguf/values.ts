/** GGUF metadata value types (gguf_type in gguf.h) and the in-memory shape of their values. */
export enum GgufType {
  UINT8 = 0,
  INT8 = 1,
  UINT16 = 2,
  INT16 = 3,
  UINT32 = 4,
  INT32 = 5,
  FLOAT32 = 6,
  BOOL = 7,
  STRING = 8,
  ARRAY = 9,
  UINT64 = 10,
  INT64 = 11,
  FLOAT64 = 12,
}

/** Byte size of each fixed-size value type. */
export const FIXED_TYPE_BYTES: Partial<Record<GgufType, number>> = {
  [GgufType.UINT8]: 1,
  [GgufType.INT8]: 1,
  [GgufType.UINT16]: 2,
  [GgufType.INT16]: 2,
  [GgufType.UINT32]: 4,
  [GgufType.INT32]: 4,
  [GgufType.FLOAT32]: 4,
  [GgufType.BOOL]: 1,
  [GgufType.UINT64]: 8,
  [GgufType.INT64]: 8,
  [GgufType.FLOAT64]: 8,
};

export type NumericArray =
  | Uint8Array
  | Int8Array
  | Uint16Array
  | Int16Array
  | Uint32Array
  | Int32Array
  | Float32Array
  | Float64Array
  | BigUint64Array
  | BigInt64Array;

/** Keeps a leading U+FEFF: it is a real token in several vocabularies, not a byte-order mark. */
export const utf8Decoder = new TextDecoder('utf-8', { ignoreBOM: true });

/**
 * A GGUF string array whose items are decoded on first access: a 150k-token vocabulary opens
 * without creating 150k JS strings. `raw` holds the encoded array (length prefixes included), so
 * a writer can copy it unchanged.
 */
export class StringArray {
  private decoded: (string | undefined)[] | undefined;
  private static readonly decoder = utf8Decoder;

  constructor(
    /** The array's bytes as stored: each item is a length prefix followed by UTF-8 bytes. */
    readonly raw: Uint8Array,
    /** Width of each length prefix as stored: 4 in GGUF v1, 8 from v2 on. */
    readonly lengthBytes: 4 | 8,
    /** Where item i's UTF-8 bytes start in `raw` (not to be modified). */
    readonly starts: Uint32Array,
    /** Where item i's UTF-8 bytes end in `raw` (not to be modified). */
    readonly ends: Uint32Array,
  ) {}

  get length(): number {
    return this.starts.length;
  }

  /** The UTF-8 bytes of item `i` (a view, not a copy). */
  bytesAt(i: number): Uint8Array {
    return this.raw.subarray(this.starts[i], this.ends[i]);
  }

  at(i: number): string {
    this.decoded ??= new Array(this.length);
    return (this.decoded[i] ??= StringArray.decoder.decode(this.bytesAt(i)));
  }

  toArray(): string[] {
    return Array.from({ length: this.length }, (_, i) => this.at(i));
  }

  static fromStrings(items: readonly string[]): StringArray {
    const encoder = new TextEncoder();
    const encoded = items.map((s) => encoder.encode(s));
    const raw = new Uint8Array(encoded.reduce((n, e) => n + 8 + e.byteLength, 0));
    const view = new DataView(raw.buffer);
    const starts = new Uint32Array(items.length);
    const ends = new Uint32Array(items.length);
    let pos = 0;
    encoded.forEach((e, i) => {
      view.setBigUint64(pos, BigInt(e.byteLength), true);
      starts[i] = pos + 8;
      raw.set(e, pos + 8);
      pos += 8 + e.byteLength;
      ends[i] = pos;
    });
    return new StringArray(raw, 8, starts, ends);
  }
}

export type GgufArray =
  /** Every fixed-size item type; BOOL items are 0/1 bytes in a Uint8Array. */
  | { readonly itemType: Exclude<GgufType, GgufType.STRING | GgufType.ARRAY>; readonly items: NumericArray }
  | { readonly itemType: GgufType.STRING; readonly items: StringArray }
  | { readonly itemType: GgufType.ARRAY; readonly items: readonly GgufArray[] };

export type GgufValue = number | bigint | boolean | string | GgufArray;

/** One metadata key/value pair; `type` is kept so a rewrite stores exactly the same types. */
export interface GgufKv {
  readonly key: string;
  readonly type: GgufType;
  readonly value: GgufValue;
}
