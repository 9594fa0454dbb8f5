/**
 * The ggml type table: the one place that knows each tensor type's id, name and block geometry.
 * Ids and sizes follow ggml.h / ggml.c (checked against llama.cpp's ggml_type_size and
 * ggml_blck_size in test/core/ggml-types.test.ts). Everything else reads this table.
 */
export interface GgmlType {
  /** The ggml_type enum value stored in GGUF tensor infos. */
  readonly id: number;
  /** Upper-case name as in GGML_TYPE_<NAME> ("Q4_K", "IQ2_XXS", "BF16"). */
  readonly name: string;
  /** Elements per block (1 for plain types). */
  readonly blockSize: number;
  /** Bytes per block. */
  readonly typeSize: number;
  /** True for block-quantized types. */
  readonly quantized: boolean;
}

const plain = (id: number, name: string, bytes: number): GgmlType => ({
  id, name, blockSize: 1, typeSize: bytes, quantized: false,
});
const quant = (id: number, name: string, blockSize: number, typeSize: number): GgmlType => ({
  id, name, blockSize, typeSize, quantized: true,
});

export const GGML_TYPES: readonly GgmlType[] = [
  plain(0, 'F32', 4),
  plain(1, 'F16', 2),
  quant(2, 'Q4_0', 32, 18),
  quant(3, 'Q4_1', 32, 20),
  quant(6, 'Q5_0', 32, 22),
  quant(7, 'Q5_1', 32, 24),
  quant(8, 'Q8_0', 32, 34),
  quant(9, 'Q8_1', 32, 36),
  quant(10, 'Q2_K', 256, 84),
  quant(11, 'Q3_K', 256, 110),
  quant(12, 'Q4_K', 256, 144),
  quant(13, 'Q5_K', 256, 176),
  quant(14, 'Q6_K', 256, 210),
  quant(15, 'Q8_K', 256, 292),
  quant(16, 'IQ2_XXS', 256, 66),
  quant(17, 'IQ2_XS', 256, 74),
  quant(18, 'IQ3_XXS', 256, 98),
  quant(19, 'IQ1_S', 256, 50),
  quant(20, 'IQ4_NL', 32, 18),
  quant(21, 'IQ3_S', 256, 110),
  quant(22, 'IQ2_S', 256, 82),
  quant(23, 'IQ4_XS', 256, 136),
  plain(24, 'I8', 1),
  plain(25, 'I16', 2),
  plain(26, 'I32', 4),
  plain(27, 'I64', 8),
  plain(28, 'F64', 8),
  quant(29, 'IQ1_M', 256, 56),
  plain(30, 'BF16', 2),
  quant(34, 'TQ1_0', 256, 54),
  quant(35, 'TQ2_0', 256, 66),
  quant(39, 'MXFP4', 32, 17),
  quant(40, 'NVFP4', 64, 36),
  quant(41, 'Q1_0', 128, 18),
  quant(42, 'Q2_0', 64, 18),
];

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
const byName = new Map(GGML_TYPES.map((t) => [t.name, t]));

export function ggmlTypeById(id: number): GgmlType | undefined {
  return byId.get(id);
}

/** Case-insensitive lookup ("q4_k" and "Q4_K" both work). */
export function ggmlTypeByName(name: string): GgmlType | undefined {
  return byName.get(name.toUpperCase());
}

/** Bytes taken by `elements` values of `type`; `elements` must be a whole number of blocks. */
export function ggmlRowBytes(type: GgmlType, elements: number): number {
  return (elements / type.blockSize) * type.typeSize;
}

export function bitsPerWeight(type: GgmlType): number {
  return (type.typeSize * 8) / type.blockSize;
}
