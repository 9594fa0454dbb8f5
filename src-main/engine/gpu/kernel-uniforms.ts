/**
 * The uniform structs of every kernel under shaders/, each declared once: shaders place one with
 * `#struct Name` (shader-source.ts), the factories in ops.ts and matmul.ts pack it by field name.
 * Offsets and sizes are in elements (f32 or u32) unless a name says otherwise.
 */
import { uniformStruct, type UniformFields, type UniformStruct } from './uniforms';

/** Every kernel's: where the submission starts in the sequence and how many tokens it has (step.wgsl). */
export const StepUniform = uniformStruct('StepUniform', {
  pos0: 'u32',
  nTokens: 'u32',
});

/** The weight kernels' (matmul.wgsl, embedding.wgsl and the block decoders of quant/, as `P`). */
export const WeightUniform = uniformStruct('WeightUniform', {
  rows: 'u32', // rows in this part (expert matmul: rows computed per expert)
  cols: 'u32', // values per row (ne[0])
  n: 'u32', // tokens (vectors) in this dispatch
  units: 'u32', // 32-value units per row: ceil(cols / 32)
  blocks_per_row: 'u32', // ggml blocks per row
  scale_word: 'u32', // first u32 of the scale plane of a repacked type (see weights.ts)
  x_offset: 'u32', // matmul: first element of x; embedding: first id
  y_offset: 'u32', // first element of the output
  y_stride: 'u32', // output elements between consecutive tokens
  row_start: 'u32', // the part's first row within the whole tensor
  total_rows: 'u32', // rows of the whole tensor
  x_stride: 'u32', // matmul: x elements between consecutive tokens
  glu_pairs: 'u32', // 1: gate|up rows uploaded in pairs (weights.ts), written back in gate|up order
  accumulate: 'u32', // 1: y += W · x (a residual add folded into the product), else y = W · x
  // Expert matmul (matmul.wgsl with EXPERTS) only:
  part_rows: 'u32', // rows in this part
  expert_rows: 'u32', // rows of one expert's matrix in the stacked tensor
  expert_row0: 'u32', // first row computed within each expert (merged gate_up: 0 or n_ff)
  x_group: 'u32', // routed pairs per x vector: experts per token for gate/up, 1 for down
});

/** norm.wgsl's. */
export const NormUniform = uniformStruct('NormUniform', {
  n: 'u32', // row length
  rowsPerToken: 'u32',
  eps: 'f32',
  lastOnly: 'u32', // 1: only the batch's last token (its rows go to the start of y)
  wOffset: 'u32', // the weight has n values from here
  tokenStride: 'u32', // elements from one token's first row to the next's; 0: rowsPerToken · n (packed)
  wSplit: 'u32', // rows of a token from this one on use the weight's next n values; 0: none
});

/** kv-store.wgsl's, attention-prefill.wgsl's and attention-decode.wgsl's. */
export const AttentionUniform = uniformStruct('AttentionUniform', {
  nHead: 'u32',
  nKvHead: 'u32',
  headDim: 'u32',
  scale: 'f32', // 1/sqrt(headDim)
  qStride: 'u32', // elements per token row of out (nHead * headDim)
  kvStride: 'u32', // elements per cached row (the cache part's KV heads * headDim)
  nRot: 'u32', // RoPE dimensions per head
  neox: 'u32', // 1: NeoX pairs
  inStride: 'u32', // elements per token row of the inputs
  qkOffset: 'u32', // where q (attention) or k (store_kv) starts in an input row
  vOffset: 'u32', // store_kv, decode attention with STORE: where v starts in an input row
  kOffset: 'u32', // decode attention with STORE: where k starts in a row of its k input
  window: 'u32', // sliding window in positions; 0: none
  softcap: 'f32', // 0: off
  invSoftcap: 'f32', // 1 / softcap, as llama.cpp multiplies by it
  headBlock: 'u32', // attention-decode.wgsl: query heads (of one KV head) per workgroup
  kvHead0: 'u32', // attention: the cache part's first KV head (its query heads are the dispatch's)
});

/** elementwise.wgsl's. */
export const ElementwiseUniform = uniformStruct('ElementwiseUniform', {
  width: 'u32', // elements per token
  rows: 'u32', // token rows; 0: the step's token count
  a: 'f32', // the op's constants
  b: 'f32',
});

/** square_sums.wgsl's. */
export const SquareSumUniform = uniformStruct('SquareSumUniform', {
  width: 'u32', // columns summed
  stride: 'u32', // elements between the input's token rows
});

/** square_sums_moe.wgsl's. */
export const SquareSumMoeUniform = uniformStruct('SquareSumMoeUniform', {
  width: 'u32', // columns summed per expert
  stride: 'u32', // elements between the input's rows
  experts: 'u32',
  used: 'u32', // experts per token
  per_pair: 'u32', // 1: one input row per (token, expert) pair; 0: per token
});

/** moe.wgsl's. */
export const MoeUniform = uniformStruct('MoeUniform', {
  experts: 'u32',
  used: 'u32',
  norm: 'u32', // moe_route: 1 to normalize the weights
  width: 'u32', // moe_combine: elements per token
  tile: 'u32', // moe_group: pairs per tile
  pairs_at: 'u32', // moe_group: table index of the first pair entry
  gating: 'u32', // moe_route: 0 softmax, 1 softmax_weight
});

/** sample.wgsl's. */
export const SampleUniform = uniformStruct('SampleUniform', {
  vocab: 'u32',
  topK: 'u32', // 0: off
  lastN: 'u32', // penalty window (<= RING)
  seed: 'u32',
  temperature: 'f32', // <= 0: greedy
  topP: 'f32', // >= 1: off
  minP: 'f32', // <= 0: off
  repeatPenalty: 'f32',
  presencePenalty: 'f32',
  frequencyPenalty: 'f32',
  nLogprobs: 'u32', // top_logprobs: how many
});

const KERNEL_UNIFORMS: readonly UniformStruct<UniformFields>[] = [
  StepUniform,
  WeightUniform,
  NormUniform,
  AttentionUniform,
  ElementwiseUniform,
  SquareSumUniform,
  SquareSumMoeUniform,
  MoeUniform,
  SampleUniform,
];

const byName = new Map(KERNEL_UNIFORMS.map((s) => [s.name, s]));

/** The struct `#struct name` places, or undefined. */
export function kernelUniform(name: string): UniformStruct<UniformFields> | undefined {
  return byName.get(name);
}

/** The names `#struct` knows. */
export function kernelUniformNames(): string[] {
  return [...byName.keys()];
}
