/**
 * Copies of a real GGUF file with one metadata value made hostile: every numeric key set to 0,
 * -1, 2^31, 2^32-1, 2^63, NaN and ±Inf, or given the wrong type (a string, an array). The issue
 * (#14) found `block_count = 2^31` crashing inspect and the server; these cover the class.
 */
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import type { GgufFile } from '../../src-main/core/gguf/gguf-file';
import { layoutGguf } from '../../src-main/core/gguf/writer';

export interface HostileValue {
  /** "llama.block_count = 2^31". */
  label: string;
  kv: GgufKv;
}

const INTEGER_TYPES = new Set([
  GgufType.UINT8,
  GgufType.INT8,
  GgufType.UINT16,
  GgufType.INT16,
  GgufType.UINT32,
  GgufType.INT32,
  GgufType.UINT64,
  GgufType.INT64,
]);
const FLOAT_TYPES = new Set([GgufType.FLOAT32, GgufType.FLOAT64]);

/** The scalar numeric keys of `gguf`, in file order. */
export function numericKvs(gguf: GgufFile): GgufKv[] {
  return gguf.kvs.filter((kv) => INTEGER_TYPES.has(kv.type) || FLOAT_TYPES.has(kv.type));
}

/** Each hostile value for `kv`, in a type that holds it (the key's own type where it can). */
export function hostileValues(kv: GgufKv): HostileValue[] {
  const { key } = kv;
  const float = FLOAT_TYPES.has(kv.type);
  const same = (value: number): GgufKv => ({
    key,
    type: kv.type,
    value: kv.type === GgufType.UINT64 || kv.type === GgufType.INT64 ? BigInt(value) : value,
  });
  const typed = (type: GgufType, value: number | bigint): GgufKv => ({ key, type, value });
  const f32 = (value: number) => typed(GgufType.FLOAT32, value);
  const values: [string, GgufKv][] = [
    ['0', same(0)],
    ['-1', float ? same(-1) : typed(GgufType.INT32, -1)],
    ['2^31', float ? same(2 ** 31) : typed(GgufType.UINT32, 2 ** 31)],
    ['2^32-1', float ? same(2 ** 32 - 1) : typed(GgufType.UINT32, 2 ** 32 - 1)],
    ['2^63', float ? same(2 ** 63) : typed(GgufType.UINT64, 2n ** 63n)],
    ['NaN', float ? same(Number.NaN) : f32(Number.NaN)],
    ['Inf', float ? same(Infinity) : f32(Infinity)],
    ['-Inf', float ? same(-Infinity) : f32(-Infinity)],
    ['a string', { key, type: GgufType.STRING, value: '12' }],
    [
      'an array',
      { key, type: GgufType.ARRAY, value: { itemType: GgufType.UINT32, items: new Uint32Array([3, 3, 3]) } },
    ],
  ];
  return values.map(([name, hostile]) => ({ label: `${key} = ${name}`, kv: hostile }));
}

/** The bytes of `gguf` (a v3 file) with `kv` in place of the key of the same name. */
export function withKv(gguf: GgufFile, kv: GgufKv): Uint8Array {
  const kvs = gguf.kvs.map((k) => (k.key === kv.key ? kv : k));
  const layout = layoutGguf({ kvs, tensors: gguf.tensors });
  const bytes = new Uint8Array(layout.fileBytes);
  bytes.set(layout.header);
  gguf.tensors.forEach((t, i) => bytes.set(gguf.tensorData(t), layout.dataOffset + layout.tensors[i]!.offset));
  return bytes;
}
