/**
 * llama.cpp's `general.file_type` values (enum llama_ftype in llama.h), named the way users
 * know them from file names and `llama-quantize` ("Q4_K_M"). Ids that llama.cpp retired are
 * kept so old files still get a name.
 */
const FILE_TYPE_NAMES: readonly (readonly [number, string])[] = [
  [0, 'F32'],
  [1, 'F16'],
  [2, 'Q4_0'],
  [3, 'Q4_1'],
  [4, 'Q4_1_SOME_F16'],
  [5, 'Q4_2'],
  [6, 'Q4_3'],
  [7, 'Q8_0'],
  [8, 'Q5_0'],
  [9, 'Q5_1'],
  [10, 'Q2_K'],
  [11, 'Q3_K_S'],
  [12, 'Q3_K_M'],
  [13, 'Q3_K_L'],
  [14, 'Q4_K_S'],
  [15, 'Q4_K_M'],
  [16, 'Q5_K_S'],
  [17, 'Q5_K_M'],
  [18, 'Q6_K'],
  [19, 'IQ2_XXS'],
  [20, 'IQ2_XS'],
  [21, 'Q2_K_S'],
  [22, 'IQ3_XS'],
  [23, 'IQ3_XXS'],
  [24, 'IQ1_S'],
  [25, 'IQ4_NL'],
  [26, 'IQ3_S'],
  [27, 'IQ3_M'],
  [28, 'IQ2_S'],
  [29, 'IQ2_M'],
  [30, 'IQ4_XS'],
  [31, 'IQ1_M'],
  [32, 'BF16'],
  [33, 'Q4_0_4_4'],
  [34, 'Q4_0_4_8'],
  [35, 'Q4_0_8_8'],
  [36, 'TQ1_0'],
  [37, 'TQ2_0'],
  [38, 'MXFP4_MOE'],
  [39, 'NVFP4'],
  [40, 'Q1_0'],
  [41, 'Q2_0'],
];

const byId = new Map(FILE_TYPE_NAMES);

/** Bit llama.cpp ORs into file_type when the type was guessed from the tensors. */
const GUESSED = 1024;

export function llamaFileTypeName(id: number): string {
  const guessed = id >= GUESSED;
  const name = byId.get(guessed ? id - GUESSED : id) ?? `unknown (${id})`;
  return guessed ? `${name} (guessed)` : name;
}

const byName = new Map(FILE_TYPE_NAMES.map(([id, name]) => [name, id]));

/**
 * The `general.file_type` id for a file type name ("Q4_K_M" → 15, case-insensitive), or
 * undefined for a name llama.cpp never used.
 */
export function llamaFileTypeId(name: string): number | undefined {
  return byName.get(name.toUpperCase());
}
