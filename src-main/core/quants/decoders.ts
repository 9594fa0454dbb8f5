import type { GgmlType, GgmlTypeName } from '../ggml-types';
import type { BlockDecoder } from './codec';
import { decodeBF16, decodeF16, decodeF32 } from './float-types';
import { decodeMXFP4, decodeNVFP4 } from './fp4-quants';
import {
  decodeIQ1_M,
  decodeIQ1_S,
  decodeIQ2_S,
  decodeIQ2_XS,
  decodeIQ2_XXS,
  decodeIQ3_S,
  decodeIQ3_XXS,
  decodeIQ4_NL,
  decodeIQ4_XS,
} from './iq-quants';
import { decodeQ2_K, decodeQ3_K, decodeQ4_K, decodeQ5_K, decodeQ6_K, decodeQ8_K } from './k-quants';
import { decodeQ4_0, decodeQ4_1, decodeQ5_0, decodeQ5_1, decodeQ8_0 } from './legacy-quants';
import { decodeQ1_0, decodeQ2_0 } from './q1-q2-quants';
import { decodeTQ1_0, decodeTQ2_0 } from './ternary-quants';

/** The types no decoder is written for: integer and f64 tensors, and Q8_1 (never stored in files). */
type Undecoded = 'Q8_1' | 'I8' | 'I16' | 'I32' | 'I64' | 'F64';

/**
 * The f32 decoder of each ggml type, by type name. Every type found in GGUF files today has one:
 * a type added to the table without a decoder here (or in Undecoded) is a type error.
 */
const DECODERS: Readonly<Record<Exclude<GgmlTypeName, Undecoded>, BlockDecoder>> = {
  F32: decodeF32,
  F16: decodeF16,
  BF16: decodeBF16,
  Q4_0: decodeQ4_0,
  Q4_1: decodeQ4_1,
  Q5_0: decodeQ5_0,
  Q5_1: decodeQ5_1,
  Q8_0: decodeQ8_0,
  Q2_K: decodeQ2_K,
  Q3_K: decodeQ3_K,
  Q4_K: decodeQ4_K,
  Q5_K: decodeQ5_K,
  Q6_K: decodeQ6_K,
  Q8_K: decodeQ8_K,
  IQ1_S: decodeIQ1_S,
  IQ1_M: decodeIQ1_M,
  IQ2_XXS: decodeIQ2_XXS,
  IQ2_XS: decodeIQ2_XS,
  IQ2_S: decodeIQ2_S,
  IQ3_XXS: decodeIQ3_XXS,
  IQ3_S: decodeIQ3_S,
  IQ4_NL: decodeIQ4_NL,
  IQ4_XS: decodeIQ4_XS,
  TQ1_0: decodeTQ1_0,
  TQ2_0: decodeTQ2_0,
  MXFP4: decodeMXFP4,
  NVFP4: decodeNVFP4,
  Q1_0: decodeQ1_0,
  Q2_0: decodeQ2_0,
};

/**
 * Where the decoders should write when a caller decodes often: a Float32Array the WebAssembly
 * decoders (most types, F16 and BF16) fill directly instead of copying their values out, which
 * makes decoding up to 1.6× faster (docs/performance.md#block-codecs, the copy-out column). Any decoder accepts it; allocate once, reuse.
 */
export { decodedValues } from '../wasm/decoders';

export function hasDecoder(type: GgmlType): boolean {
  return Object.hasOwn(DECODERS, type.name);
}

function isDecoded(name: GgmlTypeName): name is Exclude<GgmlTypeName, Undecoded> {
  return Object.hasOwn(DECODERS, name);
}

export function decoderFor(type: GgmlType): BlockDecoder {
  const name = type.name;
  if (!isDecoded(name)) throw new Error(`no f32 decoder for ggml type ${name}`);
  return DECODERS[name];
}
