/**
 * The ggml type table: the one place that knows each tensor type's id, name and block layout.
 * A type is one row: its id, elements per block and the block's fields in byte order (name,
 * bytes, kind), as the block structs of ggml-common.h declare them. Bytes per block and every
 * field's offset follow from the fields. Ids, block sizes and bytes are checked against
 * llama.cpp's ggml_get_type_traits in test/core/ggml-types.test.ts. The CPU codecs, the
 * inspector's block fields and the GPU upload and kernels all read offsets from here.
 */

/** What a block field holds. */
export type BlockFieldKind =
  /** A float scale (f16 unless the field is 4 bytes: f32); E8M0 / UE4M3 exponent scales. */
  | 'f16'
  | 'f32'
  | 'e8m0'
  | 'ue4m3'
  /** Packed sub-block scales (and mins, or grid bits for the IQ1 types). */
  | 'scales'
  /** Low bits of the per-element codes (or lattice indices). */
  | 'codes'
  /** Extra high bits of the codes (Q5's fifth bits, Q3_K's hmask, Q6_K's qh, IQ grid bits). */
  | 'high bits'
  /** Sign bits of the IQ2_S / IQ3_S lattice values. */
  | 'signs'
  /** Sums of codes that serve dot products, not decoding (Q8_1's s, Q8_K's bsums). */
  | 'sums'
  /** One whole element of a plain type. */
  | 'value';

type FieldRow = readonly [name: string, bytes: number, kind: BlockFieldKind];

const ROWS = [
  { id: 0, name: 'F32', blockSize: 1, fields: [['value', 4, 'value']] },
  { id: 1, name: 'F16', blockSize: 1, fields: [['value', 2, 'value']] },
  {
    id: 2,
    name: 'Q4_0',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 3,
    name: 'Q4_1',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['m', 2, 'f16'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 6,
    name: 'Q5_0',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['qh', 4, 'high bits'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 7,
    name: 'Q5_1',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['m', 2, 'f16'],
      ['qh', 4, 'high bits'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 8,
    name: 'Q8_0',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 32, 'codes'],
    ],
  },
  {
    id: 9,
    name: 'Q8_1',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['s', 2, 'sums'],
      ['qs', 32, 'codes'],
    ],
  },
  {
    id: 10,
    name: 'Q2_K',
    blockSize: 256,
    fields: [
      ['scales', 16, 'scales'],
      ['qs', 64, 'codes'],
      ['d', 2, 'f16'],
      ['dmin', 2, 'f16'],
    ],
  },
  {
    id: 11,
    name: 'Q3_K',
    blockSize: 256,
    fields: [
      ['hmask', 32, 'high bits'],
      ['qs', 64, 'codes'],
      ['scales', 12, 'scales'],
      ['d', 2, 'f16'],
    ],
  },
  {
    id: 12,
    name: 'Q4_K',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['dmin', 2, 'f16'],
      ['scales', 12, 'scales'],
      ['qs', 128, 'codes'],
    ],
  },
  {
    id: 13,
    name: 'Q5_K',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['dmin', 2, 'f16'],
      ['scales', 12, 'scales'],
      ['qh', 32, 'high bits'],
      ['qs', 128, 'codes'],
    ],
  },
  {
    id: 14,
    name: 'Q6_K',
    blockSize: 256,
    fields: [
      ['ql', 128, 'codes'],
      ['qh', 64, 'high bits'],
      ['scales', 16, 'scales'],
      ['d', 2, 'f16'],
    ],
  },
  {
    id: 15,
    name: 'Q8_K',
    blockSize: 256,
    fields: [
      ['d', 4, 'f32'],
      ['qs', 256, 'codes'],
      ['bsums', 32, 'sums'],
    ],
  },
  {
    id: 16,
    name: 'IQ2_XXS',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 64, 'codes'],
    ],
  },
  {
    id: 17,
    name: 'IQ2_XS',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 64, 'codes'],
      ['scales', 8, 'scales'],
    ],
  },
  // ggml declares qs[96]: 64 grid-index bytes, then 8 u32 of sign indices and a scale each.
  {
    id: 18,
    name: 'IQ3_XXS',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 64, 'codes'],
      ['signs_scales', 32, 'scales'],
    ],
  },
  {
    id: 19,
    name: 'IQ1_S',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 32, 'codes'],
      ['qh', 16, 'scales'],
    ],
  },
  {
    id: 20,
    name: 'IQ4_NL',
    blockSize: 32,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 21,
    name: 'IQ3_S',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 64, 'codes'],
      ['qh', 8, 'high bits'],
      ['signs', 32, 'signs'],
      ['scales', 4, 'scales'],
    ],
  },
  // ggml declares qs[64]: 32 grid-index bytes, then 32 sign bytes.
  {
    id: 22,
    name: 'IQ2_S',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 32, 'codes'],
      ['signs', 32, 'signs'],
      ['qh', 8, 'high bits'],
      ['scales', 8, 'scales'],
    ],
  },
  {
    id: 23,
    name: 'IQ4_XS',
    blockSize: 256,
    fields: [
      ['d', 2, 'f16'],
      ['scales_h', 2, 'scales'],
      ['scales_l', 4, 'scales'],
      ['qs', 128, 'codes'],
    ],
  },
  { id: 24, name: 'I8', blockSize: 1, fields: [['value', 1, 'value']] },
  { id: 25, name: 'I16', blockSize: 1, fields: [['value', 2, 'value']] },
  { id: 26, name: 'I32', blockSize: 1, fields: [['value', 4, 'value']] },
  { id: 27, name: 'I64', blockSize: 1, fields: [['value', 8, 'value']] },
  { id: 28, name: 'F64', blockSize: 1, fields: [['value', 8, 'value']] },
  // IQ1_M has no d field: its f16 scale is spread over the top nibbles of the scale words.
  {
    id: 29,
    name: 'IQ1_M',
    blockSize: 256,
    fields: [
      ['qs', 32, 'codes'],
      ['qh', 16, 'high bits'],
      ['scales', 8, 'scales'],
    ],
  },
  { id: 30, name: 'BF16', blockSize: 1, fields: [['value', 2, 'value']] },
  {
    id: 34,
    name: 'TQ1_0',
    blockSize: 256,
    fields: [
      ['qs', 48, 'codes'],
      ['qh', 4, 'codes'],
      ['d', 2, 'f16'],
    ],
  },
  {
    id: 35,
    name: 'TQ2_0',
    blockSize: 256,
    fields: [
      ['qs', 64, 'codes'],
      ['d', 2, 'f16'],
    ],
  },
  {
    id: 39,
    name: 'MXFP4',
    blockSize: 32,
    fields: [
      ['e', 1, 'e8m0'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 40,
    name: 'NVFP4',
    blockSize: 64,
    fields: [
      ['d', 4, 'ue4m3'],
      ['qs', 32, 'codes'],
    ],
  },
  {
    id: 41,
    name: 'Q1_0',
    blockSize: 128,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 16, 'codes'],
    ],
  },
  {
    id: 42,
    name: 'Q2_0',
    blockSize: 64,
    fields: [
      ['d', 2, 'f16'],
      ['qs', 16, 'codes'],
    ],
  },
] as const satisfies readonly { id: number; name: string; blockSize: number; fields: readonly FieldRow[] }[];

type Row = (typeof ROWS)[number];

/** Upper-case name as in GGML_TYPE_<NAME> ("Q4_K", "IQ2_XXS", "BF16"). */
export type GgmlTypeName = Row['name'];

/** The field names of type `N`'s block ("d", "qs", ...). */
export type BlockFieldName<N extends GgmlTypeName> = Extract<Row, { name: N }>['fields'][number][0];

/** One field of a block: `bytes` bytes from byte `offset`. */
export interface BlockLayoutField {
  readonly name: string;
  readonly offset: number;
  readonly bytes: number;
  readonly kind: BlockFieldKind;
}

export interface GgmlType {
  /** The ggml_type enum value stored in GGUF tensor infos. */
  readonly id: number;
  readonly name: GgmlTypeName;
  /** Elements per block (1 for plain types). */
  readonly blockSize: number;
  /** Bytes per block: the sum of its fields. */
  readonly typeSize: number;
  /** True for block-quantized types (blocks of more than one element). */
  readonly quantized: boolean;
  /** The block's fields in byte order; they tile the block's typeSize bytes. */
  readonly layout: readonly BlockLayoutField[];
}

function fromRow(row: Row): GgmlType {
  let offset = 0;
  const layout = row.fields.map(([name, bytes, kind]: FieldRow) => {
    const field = { name, offset, bytes, kind };
    offset += bytes;
    return field;
  });
  return {
    id: row.id,
    name: row.name,
    blockSize: row.blockSize,
    typeSize: offset,
    quantized: row.blockSize > 1,
    layout,
  };
}

export const GGML_TYPES: readonly GgmlType[] = ROWS.map(fromRow);

/** Ids ggml once used and has since removed; files that carry them must be re-converted. */
export const REMOVED_GGML_TYPES: ReadonlyMap<number, string> = new Map([
  [4, 'Q4_2'],
  [5, 'Q4_3'],
  [31, 'Q4_0_4_4'],
  [32, 'Q4_0_4_8'],
  [33, 'Q4_0_8_8'],
  [36, 'IQ4_NL_4_4'],
  [37, 'IQ4_NL_4_8'],
  [38, 'IQ4_NL_8_8'],
]);

/** One past the largest id ggml defines (GGML_TYPE_COUNT). */
export const GGML_TYPE_COUNT = 43;

const byId = new Map(GGML_TYPES.map((t) => [t.id, t]));
const byName = new Map<string, GgmlType>(GGML_TYPES.map((t) => [t.name, t]));

export function ggmlTypeById(id: number): GgmlType | undefined {
  return byId.get(id);
}

/** Case-insensitive lookup ("q4_k" and "Q4_K" both work). */
export function ggmlTypeByName(name: string): GgmlType | undefined {
  return byName.get(name.toUpperCase());
}

/** The type named `name`, for names the table is known to hold. */
export function ggmlType(name: GgmlTypeName): GgmlType {
  return byName.get(name)!;
}

/** The types named `names`, in order, as a tuple (so each destructured name is a GgmlType). */
export function ggmlTypes<const N extends readonly GgmlTypeName[]>(
  ...names: N
): { -readonly [K in keyof N]: GgmlType } {
  return names.map(ggmlType) as { -readonly [K in keyof N]: GgmlType };
}

/** The field `field` of `name`'s block. */
export function blockField<N extends GgmlTypeName>(name: N, field: BlockFieldName<N>): BlockLayoutField {
  return ggmlType(name).layout.find((f) => f.name === field)!;
}

/**
 * Byte offsets of every field of `name`'s block, by field name: read once at module load by the
 * codecs, so their loops add constants, not look-ups.
 */
export function blockOffsets<N extends GgmlTypeName>(name: N): Readonly<Record<BlockFieldName<N>, number>> {
  return Object.fromEntries(ggmlType(name).layout.map((f) => [f.name, f.offset])) as Record<BlockFieldName<N>, number>;
}

/** Bytes taken by `elements` values of `type`; `elements` must be a whole number of blocks. */
export function ggmlRowBytes(type: GgmlType, elements: number): number {
  return (elements / type.blockSize) * type.typeSize;
}

export function bitsPerWeight(type: GgmlType): number {
  return (type.typeSize * 8) / type.blockSize;
}
