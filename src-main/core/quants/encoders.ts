import type { GgmlType, GgmlTypeName } from '../ggml-types';
import type { RowEncoder } from './codec';
import { encodeBF16, encodeF16, encodeF32 } from './float-encoders';
import { encodeIQ1_M, encodeIQ1_S } from './iq1-encoders';
import { encodeIQ2_S, encodeIQ2_XS, encodeIQ2_XXS } from './iq2-encoders';
import { encodeIQ3_S, encodeIQ3_XXS } from './iq3-encoders';
import { encodeIQ4_NL, encodeIQ4_XS } from './iq4-encoders';
import { encodeQ2_K, encodeQ3_K, encodeQ4_K, encodeQ5_K, encodeQ6_K } from './k-quant-encoders';
import { encodeQ4_0, encodeQ4_1, encodeQ5_0, encodeQ5_1, encodeQ8_0 } from './legacy-encoders';

/** The f32 → blocks encoder of each type Gufo can write, by type name (a name not in the type table is a type error). */
const ENCODERS: Readonly<Partial<Record<GgmlTypeName, RowEncoder>>> = {
  F32: encodeF32,
  F16: encodeF16,
  BF16: encodeBF16,
  Q4_0: encodeQ4_0,
  Q4_1: encodeQ4_1,
  Q5_0: encodeQ5_0,
  Q5_1: encodeQ5_1,
  Q8_0: encodeQ8_0,
  Q2_K: encodeQ2_K,
  Q3_K: encodeQ3_K,
  Q4_K: encodeQ4_K,
  Q5_K: encodeQ5_K,
  Q6_K: encodeQ6_K,
  IQ1_S: encodeIQ1_S,
  IQ1_M: encodeIQ1_M,
  IQ2_XXS: encodeIQ2_XXS,
  IQ2_XS: encodeIQ2_XS,
  IQ2_S: encodeIQ2_S,
  IQ3_XXS: encodeIQ3_XXS,
  IQ3_S: encodeIQ3_S,
  IQ4_NL: encodeIQ4_NL,
  IQ4_XS: encodeIQ4_XS,
};

/** Types llama.cpp will not quantize without an importance matrix (ggml_quantize_requires_imatrix); their encoders refuse null. */
const NEEDS_IMPORTANCE: ReadonlySet<GgmlTypeName> = new Set(['IQ2_XXS', 'IQ2_XS', 'IQ1_S']);

export function hasEncoder(type: GgmlType): boolean {
  return Object.hasOwn(ENCODERS, type.name);
}

export function needsImportance(type: GgmlType): boolean {
  return NEEDS_IMPORTANCE.has(type.name);
}

export function encoderFor(type: GgmlType): RowEncoder {
  const encode = ENCODERS[type.name];
  if (!encode) throw new Error(`Gufo cannot write ggml type ${type.name} yet`);
  return encode;
}
