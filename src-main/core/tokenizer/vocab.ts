import type { GgufFile } from '../gguf/gguf-file';
import { GgufType, StringArray } from '../gguf/values';

/** llama.cpp's token attributes (llama_token_type) as stored in tokenizer.ggml.token_type. */
export enum TokenType {
  UNDEFINED = 0,
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}

/** The tokenizer half of a GGUF file's metadata, read once. */
export interface Vocab {
  /** Where it came from, for error messages. */
  readonly file: string;
  /** tokenizer.ggml.model: "llama" (SentencePiece), "gpt2" (byte-level BPE), "bert" (WordPiece), ... */
  readonly model: string;
  /** tokenizer.ggml.pre, or null when the file has none. */
  readonly pre: string | null;
  readonly tokens: StringArray;
  readonly scores: Float32Array | null;
  readonly types: Int32Array;
  /** tokenizer.ggml.merges ("a b" pairs, highest priority first), for BPE. */
  readonly merges: StringArray | null;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly eot: number | null;
  readonly eom: number | null;
  readonly unk: number | null;
  readonly sep: number | null;
  readonly pad: number | null;
  readonly addBos: boolean;
  readonly addEos: boolean;
  /** SentencePiece's add_dummy_prefix: a space before the text. */
  readonly addSpacePrefix: boolean;
  readonly chatTemplate: string | null;
}

export class VocabError extends Error {
  override readonly name = 'VocabError';
}

/** Reads the vocabulary of a GGUF file; an id outside the vocabulary counts as absent (as llama.cpp treats it). */
export function readVocab(gguf: GgufFile): Vocab {
  const fail = (problem: string): never => {
    throw new VocabError(`${gguf.file}: ${problem}`);
  };
  const model = gguf.getString('tokenizer.ggml.model') ?? fail('no tokenizer (tokenizer.ggml.model is missing)');
  const tokensArray = gguf.getArray('tokenizer.ggml.tokens');
  if (!tokensArray || tokensArray.itemType !== GgufType.STRING) return fail('no tokenizer.ggml.tokens string array');
  const tokens = tokensArray.items;
  const n = tokens.length;
  const numeric = (key: string) => {
    const a = gguf.getArray(key);
    if (!a || a.itemType === GgufType.STRING || a.itemType === GgufType.ARRAY) return null;
    if (a.items.length !== n) fail(`${key} has ${a.items.length} entries for ${n} tokens`);
    return a.items;
  };
  const scoresRaw = numeric('tokenizer.ggml.scores');
  const typesRaw = numeric('tokenizer.ggml.token_type');
  const mergesArray = gguf.getArray('tokenizer.ggml.merges');
  const id = (key: string) => {
    const v = gguf.getNumber(key);
    return v !== undefined && v >= 0 && v < n ? v : null;
  };
  const flag = (key: string, fallback: boolean) => {
    const v = gguf.get(key);
    return typeof v === 'boolean' ? v : fallback;
  };
  return {
    file: gguf.file,
    model,
    pre: gguf.getString('tokenizer.ggml.pre') ?? null,
    tokens,
    scores: scoresRaw ? Float32Array.from(scoresRaw as ArrayLike<number>) : null,
    types: typesRaw ? Int32Array.from(typesRaw as ArrayLike<number>) : new Int32Array(n).fill(TokenType.NORMAL),
    merges: mergesArray?.itemType === GgufType.STRING ? mergesArray.items : null,
    bos: id('tokenizer.ggml.bos_token_id'),
    eos: id('tokenizer.ggml.eos_token_id'),
    eot: id('tokenizer.ggml.eot_token_id'),
    eom: id('tokenizer.ggml.eom_token_id'),
    unk: id('tokenizer.ggml.unknown_token_id'),
    sep: id('tokenizer.ggml.seperator_token_id'),
    pad: id('tokenizer.ggml.padding_token_id'),
    // llama.cpp's defaults per tokenizer model when the file does not say.
    addBos: flag('tokenizer.ggml.add_bos_token', model === 'llama' || model === 'bert'),
    addEos: flag('tokenizer.ggml.add_eos_token', model === 'bert'),
    addSpacePrefix: flag('tokenizer.ggml.add_space_prefix', model === 'llama'),
    chatTemplate: gguf.getString('tokenizer.chat_template') ?? null,
  };
}
