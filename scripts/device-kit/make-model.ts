/**
 * The device kit's test models: `make-model <FILE_TYPE> <out.gguf> [llama-3.2-1b|335mb|tiny]` writes a
 * random Llama of that shape, each tensor in the type Gufo's llama-quantize recipe gives it for the
 * file type, through Gufo's own GGUF writer and block encoders. Speed, not text, is measured: each
 * matrix is a few rows of random gaussians encoded once and repeated down its rows, which keeps
 * writing a 1B model to seconds. The vocabulary is synthetic (SentencePiece-style, byte fallback)
 * and as large as the shape's, so the output head weighs what it weighs in the real model.
 * `make-model --types` lists the file types KIT_TYPES=all measures (kitFileTypes).
 */
import { writeGguf } from '../../src-main/node/gguf-io';
import { ggmlType, type GgmlType } from '../../src-main/core/ggml-types';
import { GgufType, StringArray, type GgufKv } from '../../src-main/core/gguf/values';
import { encoderFor } from '../../src-main/core/quants/encoders';
import {
  fileTypeNeedsImatrix,
  isQuantFileType,
  planQuantization,
  QUANT_FILE_TYPES,
  type QuantFileType,
  type RecipeModel,
  type RecipeTensor,
} from '../../src-main/core/quant-recipes';
import { supportsGpuType } from '../../src-main/engine/gpu/weights';

interface Shape {
  nEmbd: number;
  nLayer: number;
  nHead: number;
  nHeadKv: number;
  nFf: number;
  vocab: number;
}

/**
 * Llama-3.2-1B (tied embeddings, as the real one), issue #16's 335 MB model (as Q4_K_M: a 102k
 * vocabulary, 2048 wide, 4 layers; its weight bytes are mostly the head, as in small real models)
 * and a shape small enough for software adapters.
 */
export const SHAPES: Record<string, Shape> = {
  'llama-3.2-1b': { nEmbd: 2048, nLayer: 16, nHead: 32, nHeadKv: 8, nFf: 8192, vocab: 128256 },
  '335mb': { nEmbd: 2048, nLayer: 4, nHead: 32, nHeadKv: 32, nFf: 8192, vocab: 102400 },
  tiny: { nEmbd: 256, nLayer: 2, nHead: 4, nHeadKv: 2, nFf: 768, vocab: 4096 },
  // Long-context benches on software adapters: 4 query heads per KV head of 64, as issue #27 measured.
  'gqa-1024': { nEmbd: 1024, nLayer: 8, nHead: 16, nHeadKv: 4, nFf: 2816, vocab: 8192 },
};

/** Distinct rows encoded per matrix; the rest repeat them. */
const ENCODED_ROWS = 16;
const F32 = ggmlType('F32');

function kvs(shape: Shape, fileTypeId: number, quantizationVersion: number): GgufKv[] {
  const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
  const f32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
  const str = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });
  const special = ['<unk>', '<s>', '</s>'];
  const bytes = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  const tokens = [...special, ...bytes];
  for (let i = tokens.length; i < shape.vocab; i++) tokens.push(`▁t${i.toString(36)}`);
  // llama.cpp's token types: 2 unknown, 3 control, 6 byte, 1 normal.
  const types = new Int32Array(shape.vocab).fill(1).fill(6, 3, 3 + 256);
  types.set([2, 3, 3]);
  return [
    str('general.architecture', 'llama'),
    str('general.name', 'gufo device kit random llama'),
    u32('general.file_type', fileTypeId),
    u32('general.quantization_version', quantizationVersion),
    u32('llama.vocab_size', shape.vocab),
    u32('llama.context_length', 4096),
    u32('llama.embedding_length', shape.nEmbd),
    u32('llama.block_count', shape.nLayer),
    u32('llama.feed_forward_length', shape.nFf),
    u32('llama.rope.dimension_count', shape.nEmbd / shape.nHead),
    u32('llama.attention.head_count', shape.nHead),
    u32('llama.attention.head_count_kv', shape.nHeadKv),
    f32('llama.attention.layer_norm_rms_epsilon', 1e-5),
    f32('llama.rope.freq_base', 500_000),
    str('tokenizer.ggml.model', 'llama'),
    {
      key: 'tokenizer.ggml.tokens',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.STRING, items: StringArray.fromStrings(tokens) },
    },
    {
      key: 'tokenizer.ggml.scores',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.FLOAT32, items: Float32Array.from({ length: shape.vocab }, (_, i) => -i) },
    },
    { key: 'tokenizer.ggml.token_type', type: GgufType.ARRAY, value: { itemType: GgufType.INT32, items: types } },
    u32('tokenizer.ggml.unknown_token_id', 0),
    u32('tokenizer.ggml.bos_token_id', 1),
    u32('tokenizer.ggml.eos_token_id', 2),
  ];
}

/** The tensors of a tied-embedding Llama, as F32 (what the recipe quantizes from). */
function tensors(shape: Shape): RecipeTensor[] {
  const { nEmbd, nFf, nHead, nHeadKv, vocab } = shape;
  const kv = (nEmbd / nHead) * nHeadKv;
  const out: RecipeTensor[] = [
    { name: 'token_embd.weight', type: F32, ne: [nEmbd, vocab] },
    { name: 'output_norm.weight', type: F32, ne: [nEmbd] },
  ];
  for (let i = 0; i < shape.nLayer; i++) {
    const blk = (name: string, ...ne: number[]) => out.push({ name: `blk.${i}.${name}.weight`, type: F32, ne });
    blk('attn_norm', nEmbd);
    blk('attn_q', nEmbd, nEmbd);
    blk('attn_k', nEmbd, kv);
    blk('attn_v', nEmbd, kv);
    blk('attn_output', nEmbd, nEmbd);
    blk('ffn_norm', nEmbd);
    blk('ffn_gate', nEmbd, nFf);
    blk('ffn_up', nEmbd, nFf);
    blk('ffn_down', nFf, nEmbd);
  }
  return out;
}

/** xorshift32 gaussians (Box–Muller): deterministic per seed. */
function gaussians(n: number, seed: number, scale: number): Float32Array {
  let s = seed >>> 0 || 1;
  const next = () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return ((s >>> 0) + 0.5) / 2 ** 32;
  };
  return Float32Array.from(
    { length: n },
    () => Math.sqrt(-2 * Math.log(next())) * Math.cos(2 * Math.PI * next()) * scale,
  );
}

/** A matrix's bytes: ENCODED_ROWS rows encoded as `type`, repeated; vectors are ones. */
function* tensorBytes(t: { ne: readonly number[]; to: GgmlType }, seed: number): Iterable<Uint8Array> {
  const cols = t.ne[0]!;
  const rows = t.ne.slice(1).reduce((a, b) => a * b, 1);
  if (t.ne.length === 1) {
    yield new Uint8Array(Float32Array.from({ length: cols }, () => 1).buffer);
    return;
  }
  const rowBytes = (cols / t.to.blockSize) * t.to.typeSize;
  const tile = new Uint8Array(ENCODED_ROWS * rowBytes);
  encoderFor(t.to)(gaussians(ENCODED_ROWS * cols, seed, 0.02), tile, ENCODED_ROWS, cols, null);
  for (let r = 0; r < rows; r += ENCODED_ROWS) yield tile.subarray(0, Math.min(ENCODED_ROWS, rows - r) * rowBytes);
}

/** The F32 model of a shape, as the quantization recipe sees it. */
function recipeModel(shape: Shape): RecipeModel {
  const numbers: Record<string, number> = {
    'llama.block_count': shape.nLayer,
    'llama.attention.head_count': shape.nHead,
    'llama.attention.head_count_kv': shape.nHeadKv,
  };
  return {
    tensors: tensors(shape),
    getString: (key) => (key === 'general.architecture' ? 'llama' : undefined),
    getNumber: (key) => numbers[key],
  };
}

/**
 * The file types KIT_TYPES=all measures: every one written without an importance matrix whose
 * tensors all have GPU kernels, so together they run every weight type's kernel.
 */
export function kitFileTypes(): QuantFileType[] {
  const model = recipeModel(SHAPES.tiny!);
  return QUANT_FILE_TYPES.filter(
    (t) => !fileTypeNeedsImatrix(t) && planQuantization(model, t).tensors.every((p) => supportsGpuType(p.to)),
  );
}

export async function makeModel(fileType: string, path: string, shapeName: string): Promise<void> {
  const shape = SHAPES[shapeName];
  if (!shape) throw new Error(`unknown shape "${shapeName}" (one of ${Object.keys(SHAPES).join(', ')})`);
  if (!isQuantFileType(fileType)) throw new Error(`unknown file type "${fileType}"`);
  const plan = planQuantization(recipeModel(shape), fileType);
  await writeGguf(
    path,
    {
      kvs: kvs(shape, plan.fileTypeId, plan.quantizationVersion),
      tensors: plan.tensors.map((t) => ({ name: t.name, ne: [...t.ne], type: t.to })),
    },
    (i) => tensorBytes(plan.tensors[i]!, 1 + i),
  );
}

const [fileType, path, shape = 'llama-3.2-1b'] = process.argv.slice(2);
if (fileType === '--types') {
  process.stdout.write(kitFileTypes().join(',') + '\n');
} else if (!fileType || !path) {
  process.stderr.write(
    'usage: make-model <Q4_K_M|Q8_0|...> <out.gguf> [llama-3.2-1b|335mb|tiny] | make-model --types\n',
  );
  process.exit(2);
} else {
  await makeModel(fileType, path, shape);
}
