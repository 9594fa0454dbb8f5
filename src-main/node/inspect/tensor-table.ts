/** A GGUF file's tensors for the inspector: rows with layer and role, filters, paging, the layer × role map. */
import type { LayerMap, LayerMapCell, RecipeNote, TensorPage, TensorQuery, TensorRow } from '../../../src-preload/api';
import { bitsPerWeight, ggmlTypeByName } from '../../core/ggml-types';
import type { GgufFile, GgufTensorInfo } from '../../core/gguf/gguf-file';
import { llamaFileTypeName } from '../../core/llama-file-types';
import { isQuantFileType, planQuantization } from '../../core/quant-recipes';
import { tensorLocation, type BlockRole } from '../../core/tensor-names';
import { pageBounds, slicePage } from './paging';

export function requireTensor(gguf: GgufFile, name: string): GgufTensorInfo {
  const tensor = gguf.tensor(name);
  if (!tensor) throw new Error(`${gguf.file}: no tensor named "${name}"`);
  return tensor;
}

function tensorRow(gguf: GgufFile, t: GgufTensorInfo): TensorRow {
  return {
    name: t.name,
    type: t.type.name,
    shape: [...t.ne],
    elements: t.elements,
    bytes: t.bytes,
    offset: gguf.dataOffset + t.offset,
    ...tensorLocation(t.name),
    bitsPerWeight: bitsPerWeight(t.type),
  };
}

function filterFor(query: TensorQuery): (row: TensorRow) => boolean {
  const { layer, search } = query;
  if (layer !== undefined && layer !== 'none' && !(Number.isSafeInteger(layer) && layer >= 0)) {
    throw new Error(`layer must be a layer number or "none", got ${JSON.stringify(layer)}`);
  }
  let type: string | undefined;
  if (query.type !== undefined) {
    type = ggmlTypeByName(query.type)?.name;
    if (!type) throw new Error(`no ggml type named "${query.type}"`);
  }
  const needle = search?.trim().toLowerCase() ?? '';
  return (row) =>
    (layer === undefined || row.layer === (layer === 'none' ? null : layer)) &&
    (type === undefined || row.type === type) &&
    (needle === '' || row.name.toLowerCase().includes(needle));
}

/** Tensors in file order that pass every filter given, paged. */
export function listTensors(gguf: GgufFile, query: TensorQuery): TensorPage {
  const bounds = pageBounds(query, 100);
  const keep = filterFor(query);
  const found = gguf.tensors.map((t) => tensorRow(gguf, t)).filter(keep);
  return { tensors: slicePage(found, bounds), total: found.length };
}

/** Where each role goes in the map: attention, then feed-forward, in the order data flows; others after. */
const ROLE_ORDER: readonly BlockRole[] = [
  'attn_norm',
  'attn_norm_2',
  'attn_q',
  'attn_k',
  'attn_v',
  'attn_qkv',
  'attn_q_norm',
  'attn_k_norm',
  'attn_output',
  'post_attention_norm',
  'ffn_norm',
  'ffn_gate_inp',
  'ffn_gate',
  'ffn_up',
  'ffn_down',
  'ffn_gate_exps',
  'ffn_up_exps',
  'ffn_gate_up_exps',
  'ffn_down_exps',
  'ffn_gate_inp_shexp',
  'ffn_gate_shexp',
  'ffn_up_shexp',
  'ffn_down_shexp',
  'post_ffw_norm',
  'layer_output_norm',
];

function roleKey(role: string): [number, number, string, string] {
  const dot = role.indexOf('.');
  const base = dot < 0 ? role : role.slice(0, dot);
  const suffix = dot < 0 ? '' : role.slice(dot);
  const known = (ROLE_ORDER as readonly string[]).indexOf(base);
  const family =
    base.startsWith('attn') || base.startsWith('post_attention')
      ? 0
      : base.startsWith('ffn') || base.startsWith('post_ffw')
        ? 1
        : 2;
  return [family, known < 0 ? ROLE_ORDER.length : known, base, suffix];
}

function compareRoles(a: string, b: string): number {
  const ka = roleKey(a);
  const kb = roleKey(b);
  for (let i = 0; i < ka.length; i++) {
    const x = ka[i]!;
    const y = kb[i]!;
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

/** For each layer, each role's tensor and type (null where the layer has none); tensors outside the blocks apart. */
export function layerMap(gguf: GgufFile): LayerMap {
  const { fileType, notes } = recipeNotes(gguf);
  const byLayer = new Map<number, Map<string, LayerMapCell>>();
  const other: LayerMap['other'] = [];
  for (const t of gguf.tensors) {
    const { layer, role } = tensorLocation(t.name);
    const recipe = notes.get(t.name) ?? null;
    if (layer === null) other.push({ name: t.name, type: t.type.name, recipe });
    else {
      const roles = byLayer.get(layer) ?? new Map<string, LayerMapCell>();
      roles.set(role, { tensor: t.name, type: t.type.name, recipe });
      byLayer.set(layer, roles);
    }
  }
  const roles = [...new Set([...byLayer.values()].flatMap((m) => [...m.keys()]))].sort(compareRoles);
  // Only layers that have tensors: a file naming "blk.99999" must not make a map of 100,000 rows.
  const layers = [...byLayer.keys()]
    .sort((x, y) => x - y)
    .map((layer) => ({ layer, cells: roles.map((role) => byLayer.get(layer)!.get(role) ?? null) }));
  return { roles, layers, other, recipeFileType: fileType };
}

/**
 * The tensors whose type is not what the file type's recipe (planQuantization, as llama-quantize)
 * names, with why: a fallback for a row length the recipe's type cannot hold, or another choice.
 * None for a file type without a recipe (F32, F16, a type ggml no longer has).
 */
function recipeNotes(gguf: GgufFile): { fileType: string | null; notes: Map<string, RecipeNote> } {
  const id = gguf.getNumber('general.file_type');
  const fileType = id === undefined ? null : llamaFileTypeName(id);
  const notes = new Map<string, RecipeNote>();
  if (fileType === null || !isQuantFileType(fileType)) return { fileType: null, notes };
  let plan;
  try {
    plan = planQuantization(gguf, fileType);
  } catch {
    return { fileType: null, notes }; // a model the recipes cannot read (no block_count): nothing to compare with
  }
  for (const t of plan.tensors) {
    const held = gguf.tensor(t.name)!.type;
    const wanted = t.fallbackFrom ?? t.to;
    if (held === wanted) continue;
    notes.set(t.name, {
      recipeType: wanted.name,
      fallback: t.fallbackFrom !== null && held === t.to,
      rowLength: t.ne[0]!,
      blockSize: wanted.blockSize,
    });
  }
  return { fileType, notes };
}
