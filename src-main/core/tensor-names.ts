/**
 * GGUF tensor names by role, as llama.cpp's LLM_TENSOR_NAMES (gguf-py's TENSOR_NAMES): the one
 * place a name is spelled. A full name adds ".weight" or ".bias" to the template; block tensors
 * put their layer in "{layer}". The block roles are listed in the order data flows through a layer.
 */
export const TENSOR_NAMES = {
  token_embd: 'token_embd',
  // BERT: token-type embeddings (row 0: "sentence A"), learned positions, the embeddings' LayerNorm.
  token_types: 'token_types',
  position_embd: 'position_embd',
  token_embd_norm: 'token_embd_norm',
  per_layer_token_embd: 'per_layer_token_embd',
  output_norm: 'output_norm',
  output: 'output',
  rope_freqs: 'rope_freqs',
  rope_factors_long: 'rope_factors_long',
  rope_factors_short: 'rope_factors_short',
  // EmbeddingGemma's sentence-embedding projections.
  dense_2: 'dense_2',
  dense_3: 'dense_3',
  attn_norm: 'blk.{layer}.attn_norm',
  attn_norm_2: 'blk.{layer}.attn_norm_2',
  attn_q: 'blk.{layer}.attn_q',
  attn_k: 'blk.{layer}.attn_k',
  attn_v: 'blk.{layer}.attn_v',
  attn_qkv: 'blk.{layer}.attn_qkv',
  attn_kv_b: 'blk.{layer}.attn_kv_b',
  attn_q_norm: 'blk.{layer}.attn_q_norm',
  attn_k_norm: 'blk.{layer}.attn_k_norm',
  attn_output: 'blk.{layer}.attn_output',
  attn_output_norm: 'blk.{layer}.attn_output_norm',
  attn_sinks: 'blk.{layer}.attn_sinks',
  post_attention_norm: 'blk.{layer}.post_attention_norm',
  ffn_norm: 'blk.{layer}.ffn_norm',
  ffn_gate_inp: 'blk.{layer}.ffn_gate_inp',
  ffn_gate: 'blk.{layer}.ffn_gate',
  ffn_up: 'blk.{layer}.ffn_up',
  ffn_down: 'blk.{layer}.ffn_down',
  ffn_gate_exps: 'blk.{layer}.ffn_gate_exps',
  ffn_up_exps: 'blk.{layer}.ffn_up_exps',
  ffn_gate_up_exps: 'blk.{layer}.ffn_gate_up_exps',
  ffn_down_exps: 'blk.{layer}.ffn_down_exps',
  ffn_gate_inp_shexp: 'blk.{layer}.ffn_gate_inp_shexp',
  ffn_gate_shexp: 'blk.{layer}.ffn_gate_shexp',
  ffn_up_shexp: 'blk.{layer}.ffn_up_shexp',
  ffn_down_shexp: 'blk.{layer}.ffn_down_shexp',
  post_ffw_norm: 'blk.{layer}.post_ffw_norm',
  layer_output_norm: 'blk.{layer}.layer_output_norm',
} as const;

export type TensorRole = keyof typeof TENSOR_NAMES;
/** Roles with one tensor per layer. */
export type BlockRole = {
  [R in TensorRole]: (typeof TENSOR_NAMES)[R] extends `blk.{layer}.${string}` ? R : never;
}[TensorRole];
/** Roles with one tensor in the whole model. */
export type GlobalRole = Exclude<TensorRole, BlockRole>;
export type TensorKind = 'weight' | 'bias';

const LAYER = '{layer}';
/** What every block role's template starts with. */
const BLOCK = `blk.${LAYER}`;
const BLOCK_PREFIX = /^blk\.(\d+)\./;
const BLOCK_NAME = /^blk\.(\d+)\.(.+)$/;

/** "blk.3.attn_q.weight" for ('attn_q', 3); "output_norm.weight" for ('output_norm'). */
export function tensorName(role: GlobalRole, layer?: undefined, kind?: TensorKind): string;
export function tensorName(role: BlockRole, layer: number, kind?: TensorKind): string;
export function tensorName(role: TensorRole, layer?: number, kind: TensorKind = 'weight'): string {
  const template: string = TENSOR_NAMES[role];
  if (template.includes(LAYER) !== (layer !== undefined))
    throw new Error(`tensor role ${role}: ${layer === undefined ? 'needs' : 'takes no'} layer`);
  return `${template.replace(LAYER, String(layer))}.${kind}`;
}

/** The end of a block tensor's name, after its layer ("attn_q.weight"): what names of that role contain. */
export function blockTensorSuffix(role: BlockRole, kind: TensorKind = 'weight'): string {
  return `${TENSOR_NAMES[role].slice(BLOCK.length + 1)}.${kind}`;
}

/** "blk.3": the start of every name of layer 3's tensors. */
export function blockName(layer: number): string {
  return BLOCK.replace(LAYER, String(layer));
}

/** The layer a tensor belongs to ("blk.12.attn_v.weight" → 12), undefined outside the blocks. */
export function tensorLayer(name: string): number | undefined {
  const m = BLOCK_PREFIX.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * Where a tensor sits in the model: "blk.3.attn_q.weight" → layer 3, role "attn_q";
 * "blk.3.attn_q.bias" → role "attn_q.bias"; "output.weight" → no layer, role "output".
 */
export function tensorLocation(name: string): { layer: number | null; role: string } {
  const m = BLOCK_NAME.exec(name);
  const rest = m ? m[2]! : name;
  return { layer: m ? Number(m[1]) : null, role: rest.endsWith('.weight') ? rest.slice(0, -'.weight'.length) : rest };
}
