import type { GgufFile } from '../gguf/gguf-file';
import { GgufType, StringArray } from '../gguf/values';
import { preTokenizerFlags } from './pre-tokenizers';
import { libstdcxxSort } from './libstdcxx-sort';
import { VocabError } from './vocab-error';

export { VocabError };

/** llama.cpp's token types (llama_token_type) as stored in tokenizer.ggml.token_type. */
export enum TokenType {
  UNDEFINED = 0,
  NORMAL = 1,
  UNKNOWN = 2,
  CONTROL = 3,
  USER_DEFINED = 4,
  UNUSED = 5,
  BYTE = 6,
}

/** llama.cpp's token attributes (llama_token_attr), bit flags; what llama_vocab_get_attr returns. */
export const TokenAttr = {
  UNDEFINED: 0,
  UNKNOWN: 1 << 0,
  UNUSED: 1 << 1,
  NORMAL: 1 << 2,
  CONTROL: 1 << 3,
  USER_DEFINED: 1 << 4,
  BYTE: 1 << 5,
  NORMALIZED: 1 << 6,
  LSTRIP: 1 << 7,
  RSTRIP: 1 << 8,
  SINGLE_WORD: 1 << 9,
} as const;

/**
 * The tokenizer half of a GGUF file's metadata, read once, with llama.cpp's load-time defaults and
 * fixes applied (llama_vocab::impl::load): per-model default special ids and flags, per-pre-tokenizer
 * flags, token attributes adjusted by token text, the end-of-generation set and the special-token list.
 */
export interface Vocab {
  /** Where it came from, for error messages. */
  readonly file: string;
  /** tokenizer.ggml.model: "llama" (SentencePiece), "gpt2" (byte-level BPE), "bert" (WordPiece), ... */
  readonly model: string;
  /** tokenizer.ggml.pre, or null when the file has none. */
  readonly pre: string | null;
  /** general.name, or null. */
  readonly name: string | null;
  readonly tokens: StringArray;
  readonly scores: Float32Array | null;
  /** Token types as stored (all NORMAL when the file has none). */
  readonly types: Int32Array;
  /** llama.cpp's attributes per token (TokenAttr bits) after its fixes by token text and model name. */
  readonly attrs: Uint16Array;
  /** tokenizer.ggml.merges ("a b" pairs, highest priority first), for BPE. */
  readonly merges: StringArray | null;
  /** Special ids as llama.cpp resolves them: the file's keys over per-model defaults (BOS 1, EOS 2, UNK 0 for "llama", ...); null when absent. */
  readonly bos: number | null;
  readonly eos: number | null;
  readonly eot: number | null;
  readonly eom: number | null;
  readonly unk: number | null;
  readonly sep: number | null;
  readonly pad: number | null;
  readonly mask: number | null;
  readonly fimPre: number | null;
  readonly fimSuf: number | null;
  readonly fimMid: number | null;
  readonly fimPad: number | null;
  readonly fimRep: number | null;
  readonly fimSep: number | null;
  /** llama.cpp's end-of-generation tokens (llama_vocab_is_eog), ascending. */
  readonly eog: readonly number[];
  /** add_bos_token as llama.cpp resolves it (file key, else per model/pre-tokenizer default). */
  readonly addBos: boolean;
  readonly addEos: boolean;
  readonly addSep: boolean;
  /** SentencePiece's add_dummy_prefix: a space before the text (and stripped again by detokenize). */
  readonly addSpacePrefix: boolean;
  /** Detokenize removes spaces before punctuation and some contractions (clean_up_tokenization_spaces). */
  readonly cleanSpaces: boolean;
  /** Spaces are written as U+2581 in token texts (SentencePiece style). */
  readonly escapeWhitespaces: boolean;
  /** BPE: a pre-tokenized word that is a token is taken whole, without merges. */
  readonly ignoreMerges: boolean;
  readonly removeExtraWhitespaces: boolean;
  /** WordPiece normalizer: lowercase, strip accents. */
  readonly lowercase: boolean;
  readonly stripAccents: boolean;
  /**
   * llama.cpp's special-token cache: every CONTROL, USER_DEFINED or UNKNOWN token, longest text
   * first, in the exact order llama.cpp's std::sort leaves them (the order text is matched in).
   */
  readonly specialTokens: Int32Array;
  /** Longest token text in bytes. */
  readonly maxTokenBytes: number;
  readonly chatTemplate: string | null;
}

const A = TokenAttr;

/** Token type → attribute, as llama.cpp maps them when loading (unknown types are UNDEFINED). */
function typeToAttr(type: number): number {
  switch (type as TokenType) {
    case TokenType.UNKNOWN:
      return A.UNKNOWN;
    case TokenType.UNUSED:
      return A.UNUSED;
    case TokenType.NORMAL:
      return A.NORMAL;
    case TokenType.CONTROL:
      return A.CONTROL;
    case TokenType.USER_DEFINED:
      return A.USER_DEFINED;
    case TokenType.BYTE:
      return A.BYTE;
    default:
      return A.UNDEFINED;
  }
}

// Texts llama.cpp recognizes special tokens by when the file does not name them.
const EOT_TEXTS = [
  '<|eot_id|>',
  '<|im_end|>',
  '<|end|>',
  '<end_of_turn>',
  '<|endoftext|>',
  '<|end_of_text|>',
  '<EOT>',
  '_<EOT>',
  '[EOT]',
  '<｜end▁of▁sentence｜>',
  '<end_of_utterance>',
];
const EOM_TEXTS = ['<|eom_id|>'];
const FIM_PRE_TEXTS = [
  '<|fim_prefix|>',
  '<fim-prefix>',
  '<fim_prefix>',
  '<｜fim▁begin｜>',
  '<PRE>',
  '▁<PRE>',
  '<|code_prefix|>',
  '<|prefix|>',
];
const FIM_SUF_TEXTS = [
  '<|fim_suffix|>',
  '<fim-suffix>',
  '<fim_suffix>',
  '<｜fim▁hole｜>',
  '<SUF>',
  '▁<SUF>',
  '<|code_suffix|>',
  '<|suffix|>',
];
const FIM_MID_TEXTS = [
  '<|fim_middle|>',
  '<fim-middle>',
  '<fim_middle>',
  '<｜fim▁end｜>',
  '<MID>',
  '▁<MID>',
  '<|code_middle|>',
  '<|middle|>',
];
const FIM_PAD_TEXTS = ['<|fim_pad|>', '<fim-pad>', '<fim_pad>', '<PAD>', '[PAD]'];
const FIM_REP_TEXTS = ['<|fim_repo|>', '<|repo_name|>', '<fim-repo>', '<REPO>', '<reponame>'];
const FIM_SEP_TEXTS = ['<|file_sep|>'];
const EOG_TEXTS = [
  '<|eot_id|>',
  '<|im_end|>',
  '<|end|>',
  '<|return|>',
  '<|call|>',
  '<|flush|>',
  '<|calls|>',
  '<end_of_turn>',
  '<|endoftext|>',
  '</s>',
  '<|eom_id|>',
  '<EOT>',
  '_<EOT>',
  '[EOT]',
  '[EOS]',
  '<|end_of_text|>',
  '<end_of_utterance>',
  '<eos>',
  '<turn|>',
  '<|tool_response>',
  '<｜end▁of▁sentence｜>',
  '[e~[',
];
const ALWAYS_RENDERED_TEXTS = ['<|channel|>', '<|message|>', '<|start|>', '<|constrain|>'];

const ALL_NAMED_TEXTS = [
  ...EOT_TEXTS,
  ...EOM_TEXTS,
  ...FIM_PRE_TEXTS,
  ...FIM_SUF_TEXTS,
  ...FIM_MID_TEXTS,
  ...FIM_PAD_TEXTS,
  ...FIM_REP_TEXTS,
  ...FIM_SEP_TEXTS,
  ...EOG_TEXTS,
  ...ALWAYS_RENDERED_TEXTS,
  '<unk>',
  '<s>',
  '<mask>',
  '[MASK]',
];

/**
 * Token text → id over the token bytes, without creating one JS string per token: FNV-1a hashing
 * into an open-addressed table. Keys are the texts llama.cpp uses (an empty token is "[EMPTY_<id>]");
 * with duplicate texts the last id wins, as in llama.cpp's token_to_id.
 */
export class TokenLookup {
  /** The bytes every key lies in. */
  readonly keys: Uint8Array;
  readonly starts: Uint32Array;
  readonly ends: Uint32Array;
  private readonly table: Int32Array;
  private readonly mask: number;
  readonly maxTokenBytes: number;

  constructor(tokens: StringArray) {
    const n = tokens.length;
    let { starts, ends } = tokens;
    let keys = tokens.raw;
    // Empty tokens get llama.cpp's stand-in text.
    const empty: number[] = [];
    for (let i = 0; i < n; i++) if (starts[i] === ends[i]) empty.push(i);
    if (empty.length > 0) {
      const extra = empty.map((i) => new TextEncoder().encode(`[EMPTY_${i}]`));
      const grown = new Uint8Array(keys.length + extra.reduce((s, e) => s + e.length, 0));
      grown.set(keys);
      // Copies: the string array's own offsets stay as they are.
      starts = starts.slice();
      ends = ends.slice();
      let pos = keys.length;
      empty.forEach((id, k) => {
        grown.set(extra[k]!, pos);
        starts[id] = pos;
        pos += extra[k]!.length;
        ends[id] = pos;
      });
      keys = grown;
    }
    this.keys = keys;
    this.starts = starts;
    this.ends = ends;
    let cap = 16;
    while (cap < n * 2) cap *= 2;
    this.table = new Int32Array(cap).fill(-1);
    this.mask = cap - 1;
    let maxLen = 0;
    for (let id = 0; id < n; id++) {
      const s = starts[id]!;
      const e = ends[id]!;
      if (e - s > maxLen) maxLen = e - s;
      let h = 0x811c9dc5;
      for (let k = s; k < e; k++) h = Math.imul(h ^ keys[k]!, 0x01000193);
      let slot = h & this.mask;
      for (;;) {
        const other = this.table[slot]!;
        if (other < 0) {
          this.table[slot] = id;
          break;
        }
        if (this.sameKey(other, keys, s, e)) {
          this.table[slot] = id;
          break;
        }
        slot = (slot + 1) & this.mask;
      }
    }
    this.maxTokenBytes = maxLen;
  }

  private sameKey(id: number, bytes: Uint8Array, start: number, end: number): boolean {
    const s = this.starts[id]!;
    if (this.ends[id]! - s !== end - start) return false;
    const keys = this.keys;
    for (let k = 0; k < end - start; k++) if (keys[s + k] !== bytes[start + k]) return false;
    return true;
  }

  /** The id of the token whose text is bytes[start, end), or -1. */
  find(bytes: Uint8Array, start: number, end: number): number {
    let h = 0x811c9dc5;
    for (let k = start; k < end; k++) h = Math.imul(h ^ bytes[k]!, 0x01000193);
    const table = this.table;
    let slot = h & this.mask;
    for (;;) {
      const id = table[slot]!;
      if (id < 0) return -1;
      if (this.sameKey(id, bytes, start, end)) return id;
      slot = (slot + 1) & this.mask;
    }
  }

  /** The id of the token with this text, or -1. */
  findText(text: string): number {
    const b = new TextEncoder().encode(text);
    return this.find(b, 0, b.length);
  }

  /** The token's text bytes as llama.cpp holds them (a view). */
  bytesOf(id: number): Uint8Array {
    return this.keys.subarray(this.starts[id], this.ends[id]);
  }

  byteLength(id: number): number {
    return this.ends[id]! - this.starts[id]!;
  }
}

const lookups = new WeakMap<StringArray, TokenLookup>();

/** The (cached) text → id lookup of a vocabulary. */
export function tokenLookup(vocab: Pick<Vocab, 'tokens'>): TokenLookup {
  let l = lookups.get(vocab.tokens);
  if (!l) {
    l = new TokenLookup(vocab.tokens);
    lookups.set(vocab.tokens, l);
  }
  return l;
}

/** A token's text as llama.cpp holds it: the stored text, or "[EMPTY_<id>]" for an empty one. */
export function tokenText(vocab: Pick<Vocab, 'tokens'>, id: number): string {
  const t = vocab.tokens.at(id);
  return t === '' ? `[EMPTY_${id}]` : t;
}

function toFloat32(raw: ArrayLike<number | bigint> | null, n: number): Float32Array | null {
  if (!raw) return null;
  if (raw instanceof Float32Array) return raw.slice(0, n);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i++) out[i] = Number(raw[i]);
  return out;
}

/** Reads the vocabulary of a GGUF file, resolving it the way llama.cpp's vocabulary loader does. */
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
    if (a.items.length < n) fail(`${key} has ${a.items.length} entries for ${n} tokens`);
    return a.items;
  };
  const scoresRaw = numeric('tokenizer.ggml.scores');
  const typesRaw = numeric('tokenizer.ggml.token_type');
  const mergesArray = gguf.getArray('tokenizer.ggml.merges');
  const flag = (key: string): boolean | undefined => {
    const v = gguf.get(key);
    return typeof v === 'boolean' ? v : undefined;
  };
  let pre = gguf.getString('tokenizer.ggml.pre') ?? null;

  // Per tokenizer model defaults (llama.cpp's load(), "determine vocab type").
  let bos: number | null = null;
  let eos: number | null = null;
  let unk: number | null = null;
  let sep: number | null = null;
  let pad: number | null = null;
  let mask: number | null = null;
  let addSpacePrefix = false;
  let addBos = false;
  let addEos = false;
  let addSep = false;
  let ignoreMerges = false;
  let cleanSpaces = false;
  let escapeWhitespaces = true;
  let lowercase = true;
  let bpe = false;
  switch (model) {
    case 'llama':
      [bos, eos, unk] = [1, 2, 0];
      addSpacePrefix = true;
      addBos = true;
      break;
    case 'bert':
      [bos, unk, sep, pad, mask] = [101, 100, 102, 0, 103];
      cleanSpaces = true;
      addBos = true;
      addSep = true;
      break;
    case 'gpt2':
    case 'hybriddna':
    case 'whitespace':
      [bos, eos] = [11, 11];
      bpe = true;
      break;
    case 'gemma4':
      pre = 'gemma4';
      bpe = true;
      break;
    case 't5':
      [eos, unk, pad] = [1, 2, 0];
      addEos = true;
      break;
    case 'plamo2':
      [bos, eos, unk, pad] = [1, 2, 0, 3];
      break;
    default:
      // rwkv, no_vocab, none and anything llama.cpp does not know: no defaults.
      break;
  }
  // Per pre-tokenizer flags, for BPE vocabularies (pre names llama.cpp does not list change nothing).
  const preFlags = preTokenizerFlags(pre);
  if (bpe) {
    escapeWhitespaces = preFlags.escapeWhitespaces;
    cleanSpaces = preFlags.cleanSpaces;
    ignoreMerges = preFlags.ignoreMerges;
    if (preFlags.addBos) addBos = true;
    if (preFlags.addSep) addSep = true;
    if (preFlags.noBos) bos = null;
    if (!preFlags.lowercase) lowercase = false;
  }
  addSpacePrefix = flag('tokenizer.ggml.add_space_prefix') ?? addSpacePrefix;
  const removeExtraWhitespaces = flag('tokenizer.ggml.remove_extra_whitespaces') ?? false;

  const attrs = new Uint16Array(n);

  const types = new Int32Array(n);
  if (!typesRaw) types.fill(TokenType.NORMAL);
  else if (typesRaw instanceof Int32Array) types.set(typesRaw.subarray(0, n));
  else for (let i = 0; i < n; i++) types[i] = Number(typesRaw[i]);
  for (let i = 0; i < n; i++) attrs[i] = typeToAttr(types[i]!);

  // Special ids: a default outside the vocabulary is dropped; a key inside it replaces the default.
  const id = (key: string, fallback: number | null): number | null => {
    const def = fallback !== null && fallback < n ? fallback : null;
    const v = gguf.getNumber(key);
    return v !== undefined && Number.isInteger(v) && v >= 0 && v < n ? v : def;
  };
  bos = id('tokenizer.ggml.bos_token_id', bos);
  eos = id('tokenizer.ggml.eos_token_id', eos);
  let eot = id('tokenizer.ggml.eot_token_id', null);
  let eom = id('tokenizer.ggml.eom_token_id', null);
  unk = id('tokenizer.ggml.unknown_token_id', unk);
  sep = id('tokenizer.ggml.seperator_token_id', sep);
  pad = id('tokenizer.ggml.padding_token_id', pad);
  mask = id('tokenizer.ggml.mask_token_id', mask);
  let fimPre = id('tokenizer.ggml.fim_pre_token_id', null);
  let fimSuf = id('tokenizer.ggml.fim_suf_token_id', null);
  let fimMid = id('tokenizer.ggml.fim_mid_token_id', null);
  let fimPad = id('tokenizer.ggml.fim_pad_token_id', null);
  let fimRep = id('tokenizer.ggml.fim_rep_token_id', null);
  let fimSep = id('tokenizer.ggml.fim_sep_token_id', null);
  // Deprecated names, read after the new ones.
  fimPre = id('tokenizer.ggml.prefix_token_id', fimPre);
  fimSuf = id('tokenizer.ggml.suffix_token_id', fimSuf);
  fimMid = id('tokenizer.ggml.middle_token_id', fimMid);

  addBos = flag('tokenizer.ggml.add_bos_token') ?? addBos;
  addEos = flag('tokenizer.ggml.add_eos_token') ?? addEos;
  addSep = flag('tokenizer.ggml.add_sep_token') ?? addSep;
  if (preFlags.forceAddBos) addBos = true;
  lowercase = flag('tokenizer.ggml.normalizer.lowercase') ?? lowercase;
  const stripAccents = flag('tokenizer.ggml.normalizer.strip_accents') ?? lowercase;

  // The tokens llama.cpp looks for by text (its token_to_id: with duplicate texts, the last id).
  const lookup = tokenLookup({ tokens });
  const named = new Map<string, number>();
  for (const text of new Set(ALL_NAMED_TEXTS)) {
    const hit = lookup.findText(text);
    if (hit >= 0) named.set(text, hit);
  }
  const idOf = (text: string): number | undefined => named.get(text);
  const addControl = (tid: number) => {
    attrs[tid]! |= A.CONTROL;
  };
  // llama.cpp walks its hash map and takes the first match; with one candidate per vocabulary
  // (the usual case) the order does not matter. With several, this takes the first in list order.
  const detect = (current: number | null, texts: readonly string[]): number | null => {
    if (current !== null) return current;
    for (const t of texts) {
      const tid = idOf(t);
      if (tid !== undefined) {
        addControl(tid);
        return tid;
      }
    }
    return null;
  };
  eot = detect(eot, EOT_TEXTS);
  eom = detect(eom, EOM_TEXTS);
  fimPre = detect(fimPre, FIM_PRE_TEXTS);
  fimSuf = detect(fimSuf, FIM_SUF_TEXTS);
  fimMid = detect(fimMid, FIM_MID_TEXTS);
  fimPad = detect(fimPad, FIM_PAD_TEXTS);
  fimRep = detect(fimRep, FIM_REP_TEXTS);
  fimSep = detect(fimSep, FIM_SEP_TEXTS);

  // Control tokens whose text says "unused" are unused.
  for (let i = 0; i < n; i++) {
    if ((attrs[i]! & A.CONTROL) === 0 || attrs[i]! & A.UNUSED) continue;
    if (lookup.byteLength(i) >= 6 && tokenText({ tokens }, i).split('\0')[0]!.includes('unused')) attrs[i]! |= A.UNUSED;
  }

  // End-of-generation tokens.
  const eogSet = new Set<number>();
  for (const tid of [fimPad, fimRep, fimSep]) if (tid !== null) eogSet.add(tid);
  for (const t of EOG_TEXTS) {
    const tid = idOf(t);
    if (tid === undefined) continue;
    eogSet.add(tid);
    addControl(tid);
  }
  for (const t of ALWAYS_RENDERED_TEXTS) {
    const tid = idOf(t);
    if (tid !== undefined) attrs[tid] = A.USER_DEFINED;
  }
  for (const tid of [eos, eot, eom]) if (tid !== null) eogSet.add(tid);
  {
    let hasReturn = false;
    let hasCall = false;
    let hasFlush = false;
    let endId: number | null = null;
    for (const tid of eogSet) {
      const t = tokenText({ tokens }, tid);
      if (t === '<|return|>') hasReturn = true;
      else if (t === '<|call|>' || t === '<|calls|>') hasCall = true;
      else if (t === '<|flush|>') hasFlush = true;
      else if (t === '<|end|>') endId = tid;
    }
    if (endId !== null && ((hasReturn && hasCall) || (hasCall && hasFlush))) {
      eogSet.delete(endId);
      attrs[endId] = A.USER_DEFINED;
    }
  }
  {
    let hasToolResponse = false;
    let sId: number | null = null;
    for (const tid of eogSet) {
      const t = tokenText({ tokens }, tid);
      if (t === '<|tool_response>') hasToolResponse = true;
      else if (t === '</s>') sId = tid;
    }
    if (hasToolResponse && sId !== null) {
      eogSet.delete(sId);
      attrs[sId] = A.NORMAL;
    }
  }

  // The special-token cache: CONTROL, USER_DEFINED or UNKNOWN tokens, longest first, in the order
  // libstdc++'s (unstable) std::sort leaves them.
  const special: number[] = [];
  for (let i = 0; i < n; i++) if (attrs[i]! & (A.CONTROL | A.USER_DEFINED | A.UNKNOWN)) special.push(i);
  libstdcxxSort(special, (a, b) => lookup.byteLength(a) > lookup.byteLength(b));
  const specialTokens = Int32Array.from(special);

  // Per-model attributes (llama.cpp sets these by model name).
  const name = gguf.getString('general.name') ?? null;
  const lowerName = (name ?? '').replace(/[A-Z]/g, (c) => c.toLowerCase());
  const preKey = gguf.getString('tokenizer.ggml.pre') ?? '';
  const arch = gguf.getString('general.architecture') ?? '';
  const containsAny = (s: string, subs: string[]) => subs.some((x) => s.includes(x));
  if (
    containsAny(preKey, ['jina-v2-de', 'jina-v2-es', 'jina-v2-code']) ||
    containsAny(arch, ['nomic-bert-moe', 'jina-bert-v3'])
  ) {
    const tid = idOf('<mask>');
    if (tid !== undefined) attrs[tid]! |= A.LSTRIP;
  } else if (containsAny(lowerName, ['phi-3', 'phi3'])) {
    for (const tid of specialTokens) attrs[tid]! |= A.RSTRIP;
    const s = idOf('</s>');
    if (s !== undefined) attrs[s]! |= A.RSTRIP;
    for (const t of ['<unk>', '<s>', '<|endoftext|>']) {
      const tid = idOf(t);
      if (tid !== undefined) attrs[tid]! &= ~A.RSTRIP;
    }
  } else if (containsAny(lowerName, ['modern-bert'])) {
    const tid = idOf('[MASK]');
    if (tid !== undefined) attrs[tid]! |= A.LSTRIP;
  }

  return {
    file: gguf.file,
    model,
    pre,
    name,
    tokens,
    scores: toFloat32(scoresRaw, n),
    types,
    attrs,
    merges: mergesArray?.itemType === GgufType.STRING ? mergesArray.items : null,
    bos,
    eos,
    eot,
    eom,
    unk,
    sep,
    pad,
    mask,
    fimPre,
    fimSuf,
    fimMid,
    fimPad,
    fimRep,
    fimSep,
    eog: [...eogSet].sort((a, b) => a - b),
    addBos,
    addEos,
    addSep,
    addSpacePrefix,
    cleanSpaces,
    escapeWhitespaces,
    ignoreMerges,
    removeExtraWhitespaces,
    lowercase,
    stripAccents,
    specialTokens,
    maxTokenBytes: lookup.maxTokenBytes,
    chatTemplate: gguf.getString('tokenizer.chat_template') ?? null,
  };
}
