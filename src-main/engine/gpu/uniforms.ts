/**
 * A uniform struct declared once, in TypeScript: its field names and scalar types give both the
 * WGSL `struct` text (which shaders take through the preprocessor's `#struct Name`, see
 * shader-source.ts) and the packer that writes a named object at the same offsets, so the two
 * cannot drift apart.
 *
 * Fields are 32-bit scalars laid out in declaration order (WGSL gives u32/i32/f32 size and
 * alignment 4); the struct is padded with `_padN: u32` fields to a multiple of 16 bytes, the size
 * uniform bindings are handed out in.
 */

export type UniformScalar = 'u32' | 'i32' | 'f32';

export type UniformFields = Readonly<Record<string, UniformScalar>>;

/** One value per field, by name: a missing or misspelled field is a type error. */
export type UniformValues<F extends UniformFields> = { readonly [K in keyof F]: number };

export interface UniformStruct<F extends UniformFields> {
  readonly name: string;
  readonly fields: F;
  /** The WGSL declaration `struct Name { ... }`. */
  readonly wgsl: string;
  /** Bytes of the struct, padding included. */
  readonly byteSize: number;
  /** Byte offset of `field` within the struct. */
  offsetOf(field: keyof F & string): number;
  /**
   * Writes `values` into `into` at `byteOffset` (default: a new buffer of byteSize) and returns
   * that buffer. Throws naming the field when a value is missing or out of its type's range.
   */
  pack(values: UniformValues<F>, into?: ArrayBuffer, byteOffset?: number): ArrayBuffer;
}

const SCALAR_BYTES = 4;
const UNIFORM_ALIGN = 16;

const RANGES: Record<Exclude<UniformScalar, 'f32'>, [number, number]> = {
  u32: [0, 2 ** 32 - 1],
  i32: [-(2 ** 31), 2 ** 31 - 1],
};

export function uniformStruct<const F extends UniformFields>(name: string, fields: F): UniformStruct<F> {
  const names = Object.keys(fields) as (keyof F & string)[];
  if (!/^[A-Za-z]\w*$/.test(name))
    throw new Error(`uniform struct name ${JSON.stringify(name)} is not a WGSL identifier`);
  for (const field of names) {
    if (!/^[A-Za-z]\w*$/.test(field))
      throw new Error(`uniform struct ${name}: field ${JSON.stringify(field)} is not a WGSL identifier`);
  }
  const offsets = new Map(names.map((field, i) => [field, i * SCALAR_BYTES]));
  const byteSize = Math.max(1, Math.ceil((names.length * SCALAR_BYTES) / UNIFORM_ALIGN)) * UNIFORM_ALIGN;
  const pads = Array.from({ length: byteSize / SCALAR_BYTES - names.length }, (_, i) => `  _pad${i}: u32,`);
  const wgsl = [`struct ${name} {`, ...names.map((field) => `  ${field}: ${fields[field]},`), ...pads, '}'].join('\n');

  return {
    name,
    fields,
    wgsl,
    byteSize,
    offsetOf(field) {
      const offset = offsets.get(field);
      if (offset === undefined) throw new Error(`uniform struct ${name} has no field ${field}`);
      return offset;
    },
    pack(values, into = new ArrayBuffer(byteSize), byteOffset = 0) {
      const view = new DataView(into, byteOffset, byteSize);
      for (const field of names) {
        const value = values[field];
        const type: UniformScalar = fields[field]!;
        if (typeof value !== 'number' || Number.isNaN(value)) {
          throw new Error(`uniform struct ${name}: ${field} is ${String(value)}, not a number`);
        }
        const offset = offsets.get(field)!;
        if (type === 'f32') {
          view.setFloat32(offset, value, true);
          continue;
        }
        const [min, max] = RANGES[type];
        if (!Number.isInteger(value) || value < min || value > max) {
          throw new Error(`uniform struct ${name}: ${field} = ${value} is not a ${type}`);
        }
        if (type === 'u32') view.setUint32(offset, value, true);
        else view.setInt32(offset, value, true);
      }
      return into;
    },
  };
}
