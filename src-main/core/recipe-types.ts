/**
 * The types an export recipe may give a tensor: every type Gufo writes, split by whether the
 * tensor then needs an importance matrix (llama-quantize's rule, as for a Q4_K_M file), most bits
 * per weight first. The Export screen's recipe editor offers them (ExportPlanView.recipeTypes).
 */
import { GGML_TYPES, type GgmlType } from './ggml-types';
import { tensorNeedsImatrix } from './quant-recipes';
import { hasEncoder } from './quants/encoders';
import { tensorName } from './tensor-names';

export interface TypesForTensor {
  /** Types the tensor takes without an importance matrix. */
  without: string[];
  /** Types it takes only with one. */
  needing: string[];
}

const bitsPerWeight = (t: GgmlType) => (8 * t.typeSize) / t.blockSize;

/** The recipe types of `tensor` (a tensor name), most bits per weight first. */
export function recipeTypesFor(tensor: string): TypesForTensor {
  const writable = GGML_TYPES.filter(hasEncoder).toSorted((a, b) => bitsPerWeight(b) - bitsPerWeight(a));
  const names = (needs: boolean) =>
    writable.filter((t) => tensorNeedsImatrix('Q4_K_M', tensor, t) === needs).map((t) => t.name);
  return { without: names(false), needing: names(true) };
}

/** The recipe types of the layers' matrices (any one stands for all) and of the two outside them. */
export function recipeTypes(): { layer: TypesForTensor; output: TypesForTensor; token_embd: TypesForTensor } {
  return {
    layer: recipeTypesFor(tensorName('ffn_down', 0)),
    output: recipeTypesFor(tensorName('output')),
    token_embd: recipeTypesFor(tensorName('token_embd')),
  };
}
