/**
 * Random-weight BERT encoders (all-MiniLM, bge, e5 shapes) for tests, with bge's real WordPiece
 * vocabulary (llama.cpp's ggml-vocab-bert-bge.gguf, 30522 tokens) so llama.cpp loads them, laid
 * out as convert_hf_to_gguf writes a BertModel: token, token-type and position embeddings, the
 * embeddings' LayerNorm, per layer Q/K/V/output and up/down projections with biases and two
 * LayerNorms. Weights are seeded gaussians (F32); biases and norms are random too, so a wrong
 * bias or norm shows. Q/K/V may be one fused attn_qkv (with its bias), as llama.cpp's bert reads.
 *
 * nomic-bert (nomic-embed-text) as convert_hf_to_gguf writes a NomicBertModel: no position table
 * (RoPE, rope.freq_base 1000), a fused attn_qkv, gate/up/down FFN, and no biases but the norms'.
 */
import type { GgufKv } from '../../src-main/core/gguf/values';
import { GgufType } from '../../src-main/core/gguf/values';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { MODELS } from './paths';
import { mulberry32 } from './random';
import { join } from 'node:path';

export const BERT_VOCAB_FILE = join(MODELS, 'vocab', 'ggml-vocab-bert-bge.gguf');
export const BERT_VOCAB = 30522;
/** [CLS] and [SEP] in the bge vocabulary. */
export const BERT_CLS = 101;
export const BERT_SEP = 102;

export interface BertShape {
  /** general.architecture (default bert). */
  arch?: 'bert' | 'nomic-bert';
  /** bert: one attn_qkv (Q rows, then K, then V) and its bias instead of attn_q/k/v (nomic-bert always). */
  fusedQkv?: boolean;
  nLayer: number;
  nEmbd: number;
  nFf: number;
  nHead: number;
  /** Positions (context_length and position_embd's rows; default 128). */
  nCtx?: number;
  /** bert.pooling_type: 1 mean (all-MiniLM, e5), 2 cls (bge). */
  poolingType: number;
  /** Standard deviation of the weights (default 0.1). */
  scale?: number;
  seed?: number;
}

function vocabKvs(): GgufKv[] {
  const { gguf, file } = openGguf(BERT_VOCAB_FILE);
  try {
    return gguf.kvs.filter((kv) => kv.key.startsWith('tokenizer.'));
  } finally {
    file.close();
  }
}

/** Tensor names and dimensions (innermost first), as llama.cpp's bert and nomic-bert loaders expect them. */
function bertTensors(s: BertShape): { name: string; ne: number[] }[] {
  const { nEmbd, nFf } = s;
  const nomic = s.arch === 'nomic-bert';
  const out = [
    { name: 'token_embd.weight', ne: [nEmbd, BERT_VOCAB] },
    { name: 'token_types.weight', ne: [nEmbd, 2] },
    ...(nomic ? [] : [{ name: 'position_embd.weight', ne: [nEmbd, s.nCtx ?? 128] }]),
    { name: 'token_embd_norm.weight', ne: [nEmbd] },
    { name: 'token_embd_norm.bias', ne: [nEmbd] },
  ];
  for (let l = 0; l < s.nLayer; l++) {
    const blk = (name: string, ...ne: number[]) => out.push({ name: `blk.${l}.${name}`, ne });
    // A projection: its weight, and its bias except in nomic-bert.
    const linear = (m: string, rows: number, cols: number) => (
      blk(`${m}.weight`, rows, cols),
      nomic || blk(`${m}.bias`, cols)
    );
    if (nomic || s.fusedQkv) linear('attn_qkv', nEmbd, 3 * nEmbd);
    else for (const m of ['attn_q', 'attn_k', 'attn_v']) linear(m, nEmbd, nEmbd);
    linear('attn_output', nEmbd, nEmbd);
    blk('attn_output_norm.weight', nEmbd);
    blk('attn_output_norm.bias', nEmbd);
    linear('ffn_up', nEmbd, nFf);
    if (nomic) linear('ffn_gate', nEmbd, nFf);
    linear('ffn_down', nFf, nEmbd);
    blk('layer_output_norm.weight', nEmbd);
    blk('layer_output_norm.bias', nEmbd);
  }
  return out;
}

/** Writes a random BERT (or nomic-bert) encoder of `shape` to `path`. */
export async function writeRandomBert(path: string, shape: BertShape): Promise<void> {
  const arch = shape.arch ?? 'bert';
  const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
  const f32Kv = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
  const kvs: GgufKv[] = [
    { key: 'general.architecture', type: GgufType.STRING, value: arch },
    { key: 'general.name', type: GgufType.STRING, value: `random ${arch}` },
    u32('general.file_type', 0),
    u32(`${arch}.block_count`, shape.nLayer),
    u32(`${arch}.context_length`, shape.nCtx ?? 128),
    u32(`${arch}.embedding_length`, shape.nEmbd),
    u32(`${arch}.feed_forward_length`, shape.nFf),
    u32(`${arch}.attention.head_count`, shape.nHead),
    f32Kv(`${arch}.attention.layer_norm_epsilon`, 1e-12),
    { key: `${arch}.attention.causal`, type: GgufType.BOOL, value: false },
    u32(`${arch}.pooling_type`, shape.poolingType),
    // nomic-embed-text's base.
    ...(arch === 'nomic-bert' ? [f32Kv(`${arch}.rope.freq_base`, 1000)] : []),
    ...vocabKvs(),
  ];
  const f32 = ggmlTypeByName('F32')!;
  const tensors = bertTensors(shape).map((t) => ({ ...t, type: f32 }));
  const rng = mulberry32(shape.seed ?? 1);
  const scale = shape.scale ?? 0.1;
  await writeGguf(path, { kvs, tensors }, (i) => {
    const t = tensors[i]!;
    const n = t.ne.reduce((a, b) => a * b, 1);
    const isNorm = /norm\.weight$/.test(t.name);
    const fill = isNorm ? () => 1 + 0.1 * rng.gaussian() : () => rng.gaussian() * scale;
    const data = new Float32Array(n);
    for (let j = 0; j < n; j++) data[j] = fill();
    return [new Uint8Array(data.buffer)];
  });
}
