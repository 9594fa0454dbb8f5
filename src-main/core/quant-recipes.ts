/**
 * Quantization recipes: for a llama.cpp file type ("Q4_K_M"), the ggml type each tensor of a
 * model gets, decided the way llama.cpp's `llama-quantize` decides it (llama_tensor_get_type in
 * src/llama-quant.cpp). A file type is a mixture, not one type: sensitive tensors (attn_v,
 * ffn_down in the first and last layers, the output matrix) get more bits, tensors that are
 * never quantized keep their type, and a row length the chosen type cannot hold falls back to
 * a type whose block fits.
 *
 * The rules below follow llama.cpp v0.4.0 (node-llama-cpp 3.21.1) and are checked tensor by
 * tensor against its `llama_model_quantize` in test/core/quant-recipes.test.ts, with and without
 * an importance matrix. Of the mixtures that need one, IQ3_XXS, IQ3_XS, IQ2_M, IQ2_S, IQ2_XXS,
 * IQ2_XS, IQ1_S, IQ1_M and Q2_K_S are covered.
 */
import { ggmlType, type GgmlType, type GgmlTypeName } from './ggml-types';
import { GgufType, type GgufArray } from './gguf/values';
import { llamaFileTypeId } from './llama-file-types';
import { compileTensorTypes, matchTensorType, type TensorTypeOverride } from './recipe-overrides';
import { needsImportance } from './quants/encoders';
import { blockTensorSuffix, tensorLayer, tensorName } from './tensor-names';

export const QUANT_FILE_TYPES = [
  'F16',
  'BF16',
  'Q8_0',
  'Q6_K',
  'Q5_K_M',
  'Q5_K_S',
  'Q5_1',
  'Q5_0',
  'Q4_K_M',
  'Q4_K_S',
  'Q4_1',
  'Q4_0',
  'Q3_K_L',
  'Q3_K_M',
  'Q3_K_S',
  'Q2_K',
  'Q2_K_S',
  'IQ4_NL',
  'IQ4_XS',
  'IQ3_M',
  'IQ3_S',
  'IQ3_XS',
  'IQ3_XXS',
  'IQ2_M',
  'IQ2_S',
  'IQ2_XS',
  'IQ2_XXS',
  'IQ1_S',
  'IQ1_M',
] as const;

export type QuantFileType = (typeof QUANT_FILE_TYPES)[number];

/** `general.quantization_version` llama.cpp writes into every file it quantizes (GGML_QNT_VERSION). */
export const GGML_QUANTIZATION_VERSION = 2;

/** The type most tensors of each file type get (llama_ftype_get_default_type). */
const DEFAULT_TYPE: Record<QuantFileType, GgmlTypeName> = {
  F16: 'F16',
  BF16: 'BF16',
  Q8_0: 'Q8_0',
  Q6_K: 'Q6_K',
  Q5_K_M: 'Q5_K',
  Q5_K_S: 'Q5_K',
  Q5_1: 'Q5_1',
  Q5_0: 'Q5_0',
  Q4_K_M: 'Q4_K',
  Q4_K_S: 'Q4_K',
  Q4_1: 'Q4_1',
  Q4_0: 'Q4_0',
  Q3_K_L: 'Q3_K',
  Q3_K_M: 'Q3_K',
  Q3_K_S: 'Q3_K',
  Q2_K: 'Q2_K',
  Q2_K_S: 'Q2_K',
  IQ4_NL: 'IQ4_NL',
  IQ4_XS: 'IQ4_XS',
  IQ3_M: 'IQ3_S',
  IQ3_S: 'IQ3_S',
  IQ3_XS: 'IQ3_S',
  IQ3_XXS: 'IQ3_XXS',
  IQ2_M: 'IQ2_S',
  IQ2_S: 'IQ2_XS',
  IQ2_XS: 'IQ2_XS',
  IQ2_XXS: 'IQ2_XXS',
  IQ1_S: 'IQ1_S',
  IQ1_M: 'IQ1_M',
};

/** The 1- and 2-bit lattice mixtures (they need an importance matrix): their own rules for every role. */
const LOW_BIT: ReadonlySet<QuantFileType> = new Set(['IQ2_M', 'IQ2_S', 'IQ2_XXS', 'IQ2_XS', 'IQ1_S', 'IQ1_M']);

export function isQuantFileType(name: string): name is QuantFileType {
  return (QUANT_FILE_TYPES as readonly string[]).includes(name);
}

/**
 * Whether a tensor written as `type` in a `fileType` file needs importance weights: the types
 * ggml refuses without them, and those llama-quantize refuses (tensor_requires_imatrix): its
 * lattice types, and Q2_K in a Q2_K_S file; never the token embeddings or the output matrix.
 */
export function tensorNeedsImatrix(fileType: QuantFileType, name: string, type: GgmlType): boolean {
  if (needsImportance(type)) return true;
  if (name === tensorName('token_embd') || name === tensorName('per_layer_token_embd') || name === tensorName('output'))
    return false;
  return IMATRIX_TYPES.has(type.name) || (type === Q2_K && fileType === 'Q2_K_S');
}

/** The ggml types llama-quantize writes only with an importance matrix (beyond ggml's own). */
const IMATRIX_TYPES: ReadonlySet<GgmlTypeName> = new Set(['IQ3_XXS', 'IQ2_XXS', 'IQ2_XS', 'IQ2_S', 'IQ1_M', 'IQ1_S']);

/**
 * Whether llama-quantize refuses `fileType` without an importance matrix: its most common type
 * needs one, or (IQ3_XS) its attn_q, attn_k and middle ffn_gate/ffn_up tensors become IQ3_XXS.
 */
export function fileTypeNeedsImatrix(fileType: QuantFileType): boolean {
  return fileType === 'IQ3_XS' || tensorNeedsImatrix(fileType, '', t(DEFAULT_TYPE[fileType]));
}

/** llama-quantize's per-run overrides. */
export interface RecipeOptions {
  /** --output-tensor-type: the type of output.weight (and of tied token embeddings). */
  outputTensorType?: GgmlType;
  /** --token-embedding-type: the type of token_embd.weight (and per_layer_token_embd.weight). */
  tokenEmbeddingType?: GgmlType;
  /** --pure: every quantizable tensor gets the default type; no mixture, fallbacks still apply. */
  pure?: boolean;
  /** --leave-output-tensor: keep output.weight as it is. */
  leaveOutputTensor?: boolean;
  /** --tensor-type, in order: the first pattern found in a tensor's name sets its type instead of the mixture (fallbacks still apply). */
  tensorTypes?: readonly TensorTypeOverride[];
  /** --imatrix is given (llama.cpp's has_imatrix): the IQ4_NL/IQ4_XS and Q4_0/Q5_0 mixtures change their first ffn_down layers. */
  hasImatrix?: boolean;
}

export interface PlannedTensor {
  readonly name: string;
  readonly ne: readonly number[];
  readonly from: GgmlType;
  readonly to: GgmlType;
  /** The mixture's choice when it did not fit the row length and `to` is the fallback taken instead; else null. */
  readonly fallbackFrom: GgmlType | null;
}

export interface QuantPlan {
  readonly fileType: QuantFileType;
  /** `general.file_type` of the result. */
  readonly fileTypeId: number;
  /** `general.quantization_version` of the result. */
  readonly quantizationVersion: number;
  /** Every tensor, in the order llama.cpp writes them: by layer (non-layer tensors first), then by name. */
  readonly tensors: readonly PlannedTensor[];
}

export interface RecipeTensor {
  readonly name: string;
  readonly type: GgmlType;
  /** Dimensions innermost first (ne[0] is the row length). */
  readonly ne: readonly number[];
}

/** What the rules read from a model: its tensors and a few hyperparameters. A GgufFile is one. */
export interface RecipeModel {
  readonly tensors: readonly RecipeTensor[];
  getString(key: string): string | undefined;
  getNumber(key: string): number | undefined;
  /** Per-layer arrays (e.g. head counts); optional. */
  getArray?(key: string): GgufArray | undefined;
}

type Role =
  | 'output'
  | 'token_embd'
  | 'attn_qkv'
  | 'attn_kv_b'
  | 'attn_v'
  | 'attn_k'
  | 'attn_q'
  | 'attn_output'
  | 'ffn_up'
  | 'ffn_gate'
  | 'ffn_down'
  | 'other';

/** The model facts the mixtures depend on (llama.cpp's hparams). */
interface ModelFacts {
  readonly arch: string;
  /** {arch}.block_count. */
  readonly nLayer: number;
  /** n_head / n_head_kv of the first layer (0 when n_head_kv is 0). */
  readonly nGqa: number;
  /** {arch}.expert_count (0 for dense models). */
  readonly nExpert: number;
  /** llama.cpp's LLM_TYPE_70B: 8 layers of heads share each attn_v, so attn_v gets more bits. */
  readonly is70B: boolean;
}

/** Running state while walking the tensors in order, as llama.cpp's quantize_state_impl. */
interface RecipeState {
  readonly model: ModelFacts;
  readonly fileType: QuantFileType;
  readonly options: RecipeOptions;
  readonly tensorTypes: ReturnType<typeof compileTensorTypes>;
  /** No output.weight: token_embd doubles as the output matrix and is treated like it. */
  readonly tiedEmbeddings: boolean;
  /** attn_v-like tensors in the model, and how many were seen so far. */
  readonly nAttnV: number;
  iAttnV: number;
  /** Counters of ffn tensors seen so far; their layer position in dense models. */
  iFfnDown: number;
  iFfnGate: number;
  iFfnUp: number;
}

const t = ggmlType;
const F16 = t('F16');
const Q8_0 = t('Q8_0');
const Q6_K = t('Q6_K');
const Q5_K = t('Q5_K');
const Q4_K = t('Q4_K');
const Q4_1 = t('Q4_1');
const Q5_1 = t('Q5_1');
const Q3_K = t('Q3_K');
const Q2_K = t('Q2_K');
const IQ2_XXS = t('IQ2_XXS');
const IQ2_S = t('IQ2_S');
const IQ3_XXS = t('IQ3_XXS');
const IQ3_S = t('IQ3_S');

/** Plans the conversion of `model` to `fileType`: each tensor's type before and after. */
export function planQuantization(model: RecipeModel, fileType: QuantFileType, options: RecipeOptions = {}): QuantPlan {
  const fileTypeId = llamaFileTypeId(fileType);
  if (fileTypeId === undefined || !isQuantFileType(fileType)) throw new Error(`unsupported file type ${fileType}`);
  const facts = modelFacts(model);
  const tensors = [...model.tensors].sort(llamaTensorOrder);
  const state: RecipeState = {
    model: facts,
    fileType,
    options,
    tensorTypes: compileTensorTypes(options.tensorTypes),
    tiedEmbeddings: !tensors.some((x) => roleOf(x.name) === 'output'),
    nAttnV: tensors.filter((x) => isAttnVLike(roleOf(x.name))).length,
    iAttnV: 0,
    iFfnDown: 0,
    iFfnGate: 0,
    iFfnUp: 0,
  };
  const defaultType = t(DEFAULT_TYPE[fileType]);
  return {
    fileType,
    fileTypeId,
    quantizationVersion: GGML_QUANTIZATION_VERSION,
    tensors: tensors.map((tensor) => {
      if (!isQuantizable(tensor, options)) {
        return { name: tensor.name, ne: tensor.ne, from: tensor.type, to: tensor.type, fallbackFrom: null };
      }
      const { type, fallbackFrom } = chooseType(state, tensor, defaultType);
      return { name: tensor.name, ne: tensor.ne, from: tensor.type, to: type, fallbackFrom };
    }),
  };
}

// ---------------------------------------------------------------------------------------------
// Model facts and tensor order

function modelFacts(model: RecipeModel): ModelFacts {
  const arch = model.getString('general.architecture') ?? '';
  const num = (key: string): number | undefined => {
    const n = model.getNumber(`${arch}.${key}`);
    if (n !== undefined) return n;
    // A per-layer array (head counts of models whose layers differ): the rules read layer 0.
    const arr = model.getArray?.(`${arch}.${key}`);
    if (!arr || arr.itemType === GgufType.STRING || arr.itemType === GgufType.ARRAY) return undefined;
    const first = arr.items[0];
    return first === undefined ? undefined : Number(first);
  };
  const nLayer = num('block_count') ?? 0;
  const nHead = num('attention.head_count') ?? 0;
  const nHeadKv = num('attention.head_count_kv') ?? nHead;
  const nExpert = num('expert_count') ?? 0;
  const nLayerMain = nLayer - (num('nextn_predict_layers') ?? 0);
  return {
    arch,
    nLayer,
    nGqa: nHeadKv === 0 ? 0 : Math.floor(nHead / nHeadKv),
    nExpert,
    is70B: is70B(arch, nLayerMain, nHead, nHeadKv, nExpert),
  };
}

/** The architectures whose loaders call a model "70B" (the size classes llama.cpp knows). */
function is70B(arch: string, nLayer: number, nHead: number, nHeadKv: number, nExpert: number): boolean {
  switch (arch) {
    case 'llama':
      return nExpert !== 8 && nLayer === 80 && nHead !== nHeadKv; // 65B has no GQA
    case 'qwen2':
    case 'deci':
    case 'olmo':
      return nLayer === 80;
    case 'jais2':
      return nLayer === 68;
    default:
      return false;
  }
}

/** llama.cpp's weights_map order: by layer, tensors outside layers first, then by name. */
function llamaTensorOrder(a: RecipeTensor, b: RecipeTensor): number {
  const la = tensorLayer(a.name) ?? -1;
  const lb = tensorLayer(b.name) ?? -1;
  if (la !== lb) return la - lb;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

// ---------------------------------------------------------------------------------------------
// Which tensors are quantized at all

/** Substrings of tensors that stay as they are: small, or too sensitive to lose bits. */
const NEVER_QUANTIZED = [
  '_norm.weight', // norms
  blockTensorSuffix('ffn_gate_inp'), // MoE router
  'ffn_gate_tid2eid.weight', // DeepSeek-V4 token→expert table (i32)
  'altup',
  'laurel', // Gemma 3n: tiny (e.g. 4x4)
  'per_layer_model_proj', // Gemma 3n: small enough to keep
  'ssm_conv1d',
  'shortconv.conv.weight', // Mamba/LFM conv1d weights are small
  'indexer.k_proj.weight',
  'indexer.q_proj.weight', // tiny indexer projections
  'time_mix_first.weight',
  'time_mix_w0.weight',
  'time_mix_w1.weight',
  'time_mix_w2.weight',
  'time_mix_v0.weight',
  'time_mix_v1.weight',
  'time_mix_v2.weight',
  'time_mix_a0.weight',
  'time_mix_a1.weight',
  'time_mix_a2.weight',
  'time_mix_g1.weight',
  'time_mix_g2.weight',
  'time_mix_decay_w1.weight',
  'time_mix_decay_w2.weight',
  'time_mix_lerp_fused.weight', // RWKV
  'attn_rel_b.weight', // T5 relative position bias
  '.position_embd',
  'sam.pos_embd',
  'sam.neck.',
  'sam.net_',
  '.rel_pos',
  '.patch_embd',
  '.patch_merger', // vision
  'a.rvq.codebook',
  'mm.a.code_embd', // audio codebooks
];

/** Exact names that stay as they are: learned position embeddings and BERT token types. */
const NEVER_QUANTIZED_NAMES = new Set([tensorName('position_embd'), tensorName('token_types')]);

/** Only 2-D and 3-D (expert) weight matrices are quantized; vectors and special tensors keep their type. */
function isQuantizable(tensor: RecipeTensor, options: RecipeOptions): boolean {
  if (nDims(tensor.ne) < 2) return false;
  const name = tensor.name;
  if (!name.endsWith('weight')) return false;
  if (options.leaveOutputTensor && name === tensorName('output')) return false;
  if (NEVER_QUANTIZED_NAMES.has(name)) return false;
  return !NEVER_QUANTIZED.some((s) => name.includes(s));
}

/** ggml_n_dims: trailing dimensions of size 1 do not count ([4096, 1] is a vector). */
function nDims(ne: readonly number[]): number {
  for (let i = ne.length - 1; i >= 1; i--) if (ne[i]! > 1) return i + 1;
  return 1;
}

// ---------------------------------------------------------------------------------------------
// Tensor roles

/** The role of a tensor, by name; the order matters ("attn_qkv" before "attn_v"...). */
function roleOf(name: string): Role {
  if (name === tensorName('output')) return 'output';
  if (name === tensorName('token_embd') || name === tensorName('per_layer_token_embd')) return 'token_embd';
  for (const role of ['attn_qkv', 'attn_kv_b', 'attn_v', 'attn_k', 'attn_q', 'attn_output'] as const) {
    if (name.includes(blockTensorSuffix(role))) return role;
  }
  // These match the _exps / _shexp variants too.
  if (name.includes('ffn_up')) return 'ffn_up';
  if (name.includes('ffn_gate')) return 'ffn_gate';
  if (name.includes('ffn_down')) return 'ffn_down';
  return 'other';
}

/** Tensors that carry V (alone or fused): the most sensitive to quantization. */
function isAttnVLike(role: Role): boolean {
  return role === 'attn_v' || role === 'attn_qkv' || role === 'attn_kv_b';
}

// ---------------------------------------------------------------------------------------------
// Choosing a type

/** One quantizable tensor's type: user overrides first, then the mixture, then a fallback that fits. */
function chooseType(
  state: RecipeState,
  tensor: RecipeTensor,
  defaultType: GgmlType,
): { type: GgmlType; fallbackFrom: GgmlType | null } {
  const { options } = state;
  const role = roleOf(tensor.name);
  // Explicit types for the embeddings and the output matrix are taken as given.
  if (options.tokenEmbeddingType && role === 'token_embd') return exactly(tensor, options.tokenEmbeddingType);
  if (options.outputTensorType && role === 'output') return exactly(tensor, options.outputTensorType);
  // F16/BF16 files are plain conversions: no mixture.
  if (!defaultType.quantized) return { type: defaultType, fallbackFrom: null };
  // A --tensor-type match skips the mixture, whose layer counters then do not count this tensor (as in llama.cpp).
  const wanted =
    matchTensorType(state.tensorTypes, tensor.name) ??
    (options.pure ? defaultType : mixtureType(state, tensor, role, defaultType));
  const type = fallbackType(tensor, wanted);
  return { type, fallbackFrom: type === wanted ? null : wanted };
}

/**
 * An override llama.cpp applies without a fallback: a row length the type cannot hold makes
 * llama.cpp abort, so the plan refuses it instead.
 */
function exactly(tensor: RecipeTensor, type: GgmlType): { type: GgmlType; fallbackFrom: null } {
  if (tensor.ne[0]! % type.blockSize !== 0) {
    throw new Error(
      `${tensor.name}: rows of ${tensor.ne[0]} cannot be stored as ${type.name} (blocks of ${type.blockSize})`,
    );
  }
  return { type, fallbackFrom: null };
}

/** The file type's mixture: which roles and layers get more (or fewer) bits than the default. */
function mixtureType(state: RecipeState, tensor: RecipeTensor, role: Role, defaultType: GgmlType): GgmlType {
  if (role === 'output' || (role === 'token_embd' && state.tiedEmbeddings))
    return outputType(state, tensor, defaultType);
  if (LOW_BIT.has(state.fileType)) return lowBitType(state, role, defaultType);
  // Untied token embeddings keep the default (only the IQ1/IQ2 mixtures and IQ3_XXS change them).
  if (role === 'token_embd') return state.fileType === 'IQ3_XXS' ? IQ3_S : defaultType;
  if (isAttnVLike(role)) return attnVType(state, defaultType);
  switch (role) {
    case 'attn_k':
      return attnKType(state, defaultType);
    case 'attn_q':
      return attnQType(state, defaultType);
    case 'ffn_down':
      return ffnDownType(state, tensor, defaultType);
    case 'attn_output':
      return attnOutputType(state, defaultType);
    case 'ffn_gate':
      return ffnGateUpType(state, tensor, state.iFfnGate++, defaultType);
    case 'ffn_up':
      return ffnGateUpType(state, tensor, state.iFfnUp++, defaultType);
    default:
      return defaultType;
  }
}

/**
 * use_more_bits: the first and last eighth of the layers, and every third layer between them,
 * get more bits in the _M mixtures.
 */
function useMoreBits(i: number, n: number): boolean {
  const eighth = Math.trunc(n / 8);
  return i < eighth || i >= Math.trunc((7 * n) / 8) || (i - eighth) % 3 === 2;
}

/** The output matrix (and tied token embeddings) decides the logits: Q6_K unless the file is Q8_0 (or 1 to 3 bits: Q5_K). */
function outputType(state: RecipeState, tensor: RecipeTensor, defaultType: GgmlType): GgmlType {
  if (state.options.outputTensorType) return state.options.outputTensorType;
  // Falcon's output, and rows the default's blocks do not fit, go to Q8_0.
  if (state.model.arch === 'falcon' || tensor.ne[0]! % defaultType.blockSize !== 0) return Q8_0;
  if (LOW_BIT.has(state.fileType) || state.fileType === 'IQ3_XXS') return Q5_K;
  return defaultType === Q8_0 ? Q8_0 : Q6_K;
}

/**
 * The 1- and 2-bit lattice mixtures: lattice codes for most weights; where they would hurt most
 * (token embeddings, attn_v, the first eighth of the ffn_down tensors) Q2_K, or IQ3_S in IQ2_S
 * and IQ2_M; Q4_K for attn_v shared by 4+ heads or experts and attn_k of 8-expert models, Q5_K
 * for their attn_output; otherwise attn_output is IQ2_XXS in IQ1_S and IQ1_M, IQ3_S in IQ2_S
 * and IQ2_M.
 */
function lowBitType(state: RecipeState, role: Role, defaultType: GgmlType): GgmlType {
  const { model } = state;
  // IQ2_S and IQ2_M protect those tensors with IQ3_S instead of Q2_K.
  const iq2sm = state.fileType === 'IQ2_S' || state.fileType === 'IQ2_M';
  const protect = iq2sm ? IQ3_S : Q2_K;
  if (role === 'token_embd') return protect;
  if (isAttnVLike(role)) {
    state.iAttnV++;
    return model.nGqa >= 4 || model.nExpert >= 4 ? Q4_K : protect;
  }
  if (role === 'attn_k' && model.nExpert === 8) return Q4_K;
  // Counted in file order over every ffn_down tensor (experts included) against the layer count.
  if (role === 'ffn_down') return state.iFfnDown++ < Math.trunc(model.nLayer / 8) ? protect : defaultType;
  if (role === 'attn_output')
    return model.nExpert === 8
      ? Q5_K
      : state.fileType === 'IQ1_S' || state.fileType === 'IQ1_M'
        ? IQ2_XXS
        : iq2sm
          ? IQ3_S
          : defaultType;
  return defaultType;
}

/**
 * attn_v is small (shared by several heads under GQA) and sensitive: it gets more bits. Fused
 * attn_qkv and MLA's attn_kv_b follow the same rule (llama.cpp also has an attn_qkv rule, but it
 * sits after this one in its if-chain and never applies).
 */
function attnVType(state: RecipeState, defaultType: GgmlType): GgmlType {
  const { fileType, model } = state;
  const i = state.iAttnV++;
  let type = defaultType;
  if (fileType === 'Q2_K') type = model.nGqa >= 4 ? Q4_K : Q3_K;
  else if (fileType === 'Q2_K_S' && model.nGqa >= 4) type = Q4_K;
  // Without an importance matrix IQ3_XXS would hurt attn_v too much: IQ3_S instead.
  else if (fileType === 'IQ3_XXS') type = model.nGqa >= 4 ? Q4_K : state.options.hasImatrix ? IQ3_XXS : IQ3_S;
  else if ((fileType === 'IQ3_XS' || fileType === 'IQ3_S') && model.nGqa >= 4) type = Q4_K;
  else if (fileType === 'IQ3_M') type = Q4_K;
  else if (fileType === 'Q3_K_M') type = i < 2 ? Q5_K : Q4_K;
  else if (fileType === 'Q3_K_L') type = Q5_K;
  else if ((fileType === 'IQ4_NL' || fileType === 'IQ4_XS') && model.nGqa >= 4) type = Q5_K;
  else if ((fileType === 'Q4_K_M' || fileType === 'Q5_K_M') && useMoreBits(i, state.nAttnV)) type = Q6_K;
  else if (fileType === 'Q4_K_S' && i < 4) type = Q5_K;
  // In a 70B, attn_v is 8x smaller than attn_q: more bits cost almost nothing.
  if (model.is70B && (type === Q3_K || type === Q4_K)) type = Q5_K;
  // Mixtral-like 8-expert models: the attention is a tiny share of the weights.
  if (model.nExpert === 8) type = Q8_0;
  return type;
}

function attnKType(state: RecipeState, defaultType: GgmlType): GgmlType {
  if (state.model.nExpert === 8) return Q8_0;
  return attnQType(state, defaultType);
}

/** attn_q (and attn_k but in 8-expert models) take fewer bits in the smallest IQ3 mixtures. */
function attnQType(state: RecipeState, defaultType: GgmlType): GgmlType {
  if (state.fileType === 'IQ3_XS') return IQ3_XXS;
  if (state.fileType === 'IQ3_XXS') return IQ2_S;
  return defaultType;
}

/** IQ3_XS stores the middle three quarters of the ffn_gate and ffn_up layers as IQ3_XXS; the layer is checked for every file type, as llama.cpp does. */
function ffnGateUpType(state: RecipeState, tensor: RecipeTensor, seen: number, defaultType: GgmlType): GgmlType {
  const [i, n] = ffnLayer(state, tensor, seen);
  return state.fileType === 'IQ3_XS' && i >= Math.trunc(n / 8) && i < Math.trunc((7 * n) / 8) ? IQ3_XXS : defaultType;
}

/** ffn_down suffers most from quantization, above all in the first layers. */
function ffnDownType(state: RecipeState, tensor: RecipeTensor, defaultType: GgmlType): GgmlType {
  const { fileType, model } = state;
  const [i, n] = ffnLayer(state, tensor, state.iFfnDown++);
  const falcon = model.arch === 'falcon';
  const hasImatrix = state.options.hasImatrix === true;
  switch (fileType) {
    case 'Q2_K':
      return Q3_K;
    case 'Q2_K_S':
      return i < Math.trunc(n / 8) ? Q4_K : defaultType;
    case 'IQ3_XXS':
      return hasImatrix ? defaultType : i < Math.trunc(n / 8) ? Q4_K : Q3_K;
    case 'IQ3_M':
      return i < Math.trunc(n / 8) || (model.nExpert === 8 && useMoreBits(i, n)) ? Q4_K : defaultType;
    case 'Q3_K_M':
      return i < Math.trunc(n / 16) ? Q5_K : !falcon || useMoreBits(i, n) ? Q4_K : Q3_K;
    case 'Q3_K_L':
      return falcon ? Q4_K : Q5_K;
    case 'Q4_K_M':
      if (falcon) return i < Math.trunc(n / 16) ? Q6_K : useMoreBits(i, n) ? Q5_K : Q4_K;
      return useMoreBits(i, n) ? Q6_K : defaultType;
    // With an importance matrix the 4-bit non-linear types hold the first layers well enough.
    case 'IQ4_NL':
    case 'IQ4_XS':
      return !hasImatrix && i < Math.trunc(n / 8) ? Q5_K : defaultType;
    case 'Q5_K_M':
      return useMoreBits(i, n) ? Q6_K : defaultType;
    case 'Q4_K_S':
      return !falcon && i < Math.trunc(n / 8) ? Q5_K : defaultType;
    // Q4_0/Q5_0 can still go wrong in the first layers with an importance matrix; without one,
    // llama.cpp keeps the mixture it always had.
    case 'Q4_0':
      return hasImatrix && i < Math.trunc(n / 8) ? Q4_1 : defaultType;
    case 'Q5_0':
      return hasImatrix && i < Math.trunc(n / 8) ? Q5_1 : defaultType;
    default:
      return defaultType;
  }
}

/**
 * The layer of an ffn tensor and the layer count. Dense models count ffn tensors as they come
 * (layer order); in MoE models experts need not be consecutive, so the name says the layer.
 */
function ffnLayer(state: RecipeState, tensor: RecipeTensor, seen: number): [number, number] {
  const n = state.model.nLayer;
  if (state.model.nExpert <= 1) return [seen, n];
  const i = tensorLayer(tensor.name);
  if (i === undefined) throw new Error(`cannot tell the layer of tensor ${tensor.name}`);
  if (i >= n) throw new Error(`bad layer ${i} for tensor ${tensor.name}: must be in [0, ${n})`);
  return [i, n];
}

function attnOutputType(state: RecipeState, defaultType: GgmlType): GgmlType {
  const { fileType, model } = state;
  if (model.arch === 'falcon') return fileType === 'Q3_K_L' ? Q4_K : defaultType;
  if (model.nExpert === 8) {
    const bumped: readonly QuantFileType[] = [
      'Q2_K',
      'IQ3_XS',
      'IQ3_XXS',
      'Q3_K_S',
      'Q3_K_M',
      'IQ4_NL',
      'Q4_K_S',
      'Q4_K_M',
      'IQ3_S',
      'IQ3_M',
      'IQ4_XS',
    ];
    return bumped.includes(fileType) ? Q5_K : defaultType;
  }
  switch (fileType) {
    case 'Q2_K':
      return Q3_K;
    case 'IQ3_XXS':
      return IQ3_S;
    case 'Q3_K_M':
      return Q4_K;
    case 'Q3_K_L':
      return Q5_K;
    case 'IQ3_M':
      return Q4_K;
    default:
      return defaultType;
  }
}

// ---------------------------------------------------------------------------------------------
// Fallbacks for row lengths a type cannot hold

/** The nearest type with 32-element blocks for each type with larger blocks. */
const SMALLER_BLOCK: Readonly<Partial<Record<GgmlTypeName, GgmlTypeName>>> = {
  IQ1_S: 'IQ4_NL',
  IQ1_M: 'IQ4_NL',
  IQ2_XXS: 'IQ4_NL',
  IQ2_XS: 'IQ4_NL',
  IQ2_S: 'IQ4_NL',
  IQ3_XXS: 'IQ4_NL',
  IQ3_S: 'IQ4_NL',
  IQ4_XS: 'IQ4_NL',
  Q2_0: 'Q4_0',
  Q2_K: 'Q4_0',
  Q3_K: 'Q4_0',
  TQ1_0: 'Q4_0',
  TQ2_0: 'Q4_0',
  Q4_K: 'Q5_0',
  Q5_K: 'Q5_1',
  Q6_K: 'Q8_0',
};

/**
 * A type whose blocks fit the row length (ne[0]): the wanted type, else its 32-block
 * counterpart, else F16 (rows not a multiple of 32 are rare).
 */
function fallbackType(tensor: RecipeTensor, wanted: GgmlType): GgmlType {
  const cols = tensor.ne[0]!;
  if (cols % wanted.blockSize === 0) return wanted;
  let type = wanted;
  const smaller = SMALLER_BLOCK[wanted.name];
  if (smaller) type = t(smaller);
  else if (wanted.blockSize > 32)
    throw new Error(`no fallback type is defined for ${wanted.name} (tensor ${tensor.name})`);
  return cols % type.blockSize === 0 ? type : F16;
}
