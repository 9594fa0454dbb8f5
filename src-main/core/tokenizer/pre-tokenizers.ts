import {
  ACCENT_MARK,
  CATEGORY_MASK,
  codepointFlags,
  LETTER,
  NUMBER,
  PUNCTUATION,
  SYMBOL,
  WHITESPACE,
} from './unicode-flags';
import { VocabError } from './vocab-error';

/*
 * BPE pre-tokenizers as llama.cpp runs them (llama-vocab.cpp picks a list of regexes per
 * tokenizer.ggml.pre; unicode.cpp applies them one after another, each splitting every piece the
 * previous ones left):
 *   - the regexes llama.cpp has a hand-written splitter for (GPT-2's, Llama 3's, Qwen2's, ...)
 *     use one here too, with the same decisions, including where they differ from the regex;
 *   - a regex with \p{..} classes runs, as in llama.cpp, over a "collapsed" text in which every
 *     code point above 0x7F is one stand-in character per category (whitespace as \v) and each
 *     \p{..} becomes [stand-in + its ASCII members]; so \p{Lu} means any letter there, as in llama.cpp;
 *   - any other regex runs over the code points, non-ASCII whitespace turned into \v and \s
 *     meaning ASCII whitespace only (llama.cpp's std::wregex in the C locale).
 * Categories come from llama.cpp's own Unicode table (unicode-flags.ts).
 */

/** How llama.cpp treats one tokenizer.ggml.pre value. */
export interface PreTokenizer {
  /** The tokenizer.ggml.pre value ("default" when the file has none). */
  readonly name: string;
  /** llama.cpp's pre-tokenizer type (LLAMA_VOCAB_PRE_TYPE_*, lower case), shared by aliases. */
  readonly type: string;
  /** A word that is a whole token is taken as is, without merges (Llama 3, Tekken, ...). */
  readonly ignoreMerges: boolean;
  /** llama.cpp's add_bos when the file has no tokenizer.ggml.add_bos_token. */
  readonly addBosDefault: boolean;
  /** llama.cpp's add_sep when the file has no tokenizer.ggml.add_sep_token. */
  readonly addSepDefault: boolean;
  /** clean_up_tokenization_spaces, used when detokenizing. */
  readonly cleanSpaces: boolean;
  /** llama.cpp ignores the file's BOS id for this pre-tokenizer (ChatGLM). */
  readonly noBos: boolean;
  /**
   * Splits code points `cps[0..n)` into words; returns their lengths in code points, in order,
   * summing to n.
   */
  split(cps: Int32Array, n: number): number[];
}

// ---------------------------------------------------------------------------------------------
// The regexes (as llama.cpp writes them, escapes decoded)

const CONTRACTIONS = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])";
const RE_GPT2 = "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)";
const RE_LLAMA3 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const RE_LLAMA3_ORIGINAL =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const RE_QWEN2 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const RE_QWEN35 = `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?[\\p{L}\\p{M}]+|\\p{N}| ?[^\\s\\p{L}\\p{M}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`;
const RE_NEWLINES = '[^\\n]+|[\\n]+';
const RE_CJK_DEEPSEEK = '[一-龥ࠀ-一가-퟿]+';
const RE_PORO = ' ?[^(\\s|.,!?…。，、।۔،)]+';
const RE_GPT4O_LETTERS = (cls: string) =>
  `[^\\r\\n\\p{L}\\p{N}]?((?=[${cls}])([^a-z]))*((?=[${cls}])([^A-Z]))+${CONTRACTIONS}?|[^\\r\\n\\p{L}\\p{N}]?((?=[${cls}])([^a-z]))+((?=[${cls}])([^A-Z]))*${CONTRACTIONS}?`;

/** The regex list of each pre-tokenizer type, in llama.cpp's order. */
const TYPE_REGEXES: Record<string, readonly string[]> = {
  default: ['[\\p{P}\\$\\+<=>\\^~\\|]+', RE_GPT2, '\\p{N}+', '[0-9][0-9][0-9]'],
  llama3: [RE_LLAMA3],
  'jais-2': [
    `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s{512}(?!\\S)|\\s{256}(?!\\S)|\\s{128}(?!\\S)|\\s{64}(?!\\S)|\\s{32}(?!\\S)|\\s{16}(?!\\S)|\\s{8}(?!\\S)|\\s{4}(?!\\S)|\\s{1,2}(?!\\S)|\\s{1}`,
  ],
  dbrx: [RE_LLAMA3],
  smaug: [RE_LLAMA3],
  'deepseek-llm': [
    '[\r\n]',
    '\\s?[A-Za-z\u00b5\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u01ba\u01bc-\u01bf\u01c4-\u0293\u0295-\u02af\u0370-\u0373\u0376\u0377\u037b-\u037d\u037f\u0386\u0388-\u038a\u038c\u038e-\u03a1\u03a3-\u03f5\u03f7-\u0481\u048a-\u052f\u0531-\u0556\u10a0-\u10c5\u13a0-\u13f5\u13f8-\u13fd\u1c90-\u1cba\u1cbd-\u1cbf\u1d00-\u1d2b\u1d6b-\u1d77\u1d79-\u1d9a\u1e00-\u1f15\u1f18-\u1f1d\u1f20-\u1f45\u1f48-\u1f4d\u1f50-\u1f57\u1f59\u1f5b\u1f5d\u1f5f-\u1f7d\u1f80-\u1fb4\u1fb6-\u1fbc\u1fbe\u1fc2-\u1fc4\u1fc6-\u1fcc\u1fd0-\u1fd3\u1fd6-\u1fdb\u1fe0-\u1fec\u1ff2-\u1ff4\u1ff6-\u1ffc\u2102\u2107\u210a-\u2113\u2115\u2119-\u211d\u2124\u2126\u2128\u212a-\u212d\u212f-\u2134\u2139\u213c-\u213f\u2145-\u2149\u214e\u2183\u2184\u2c00-\u2c7b\u2c7e-\u2ce4\u2ceb-\u2cee\u2cf2\u2cf3\ua640-\ua66d\ua680-\ua69b\ua722-\ua76f\ua771-\ua787\ua78b-\ua78e\uab70-\uabbf\ufb00-\ufb06\ufb13-\ufb17\uff21-\uff3a\uff41-\uff5a\u{10400}-\u{1044f}\u{104b0}-\u{104d3}\u{104d8}-\u{104fb}\u{10c80}-\u{10cb2}\u{10cc0}-\u{10cf2}\u{118a0}-\u{118df}\u{1e900}-\u{1e943}]+',
    '\\s?[!-/:-~！-／：-～‘-‟　-。]+',
    '\\s+$',
    RE_CJK_DEEPSEEK,
    '\\p{N}+',
  ],
  'deepseek3-llm': [
    '\\p{N}{1,3}',
    '[一-龥぀-ゟ゠-ヿ]+',
    '[!"#$%&\'()*+,\\-./:;<=>?@\\[\\\\\\]^_`{|}~][A-Za-z]+|[^\r\n\\p{L}\\p{P}\\p{S}]?[\\p{L}\\p{M}]+| ?[\\p{P}\\p{S}]+[\r\n]*|\\s*[\r\n]+|\\s+(?!\\S)|\\s+',
  ],
  youtu: [
    '[가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+',
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTIONS}?|[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTIONS}?|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  ],
  'deepseek-coder': ['[\r\n]', '\\s?\\p{L}+', '\\s?\\p{P}+', RE_CJK_DEEPSEEK, '\\p{N}'],
  falcon: ['[\\p{P}\\$\\+<=>\\^~\\|`]+', RE_GPT2, '[0-9][0-9][0-9]'],
  starcoder: ['\\p{N}', RE_GPT2],
  gpt2: [RE_GPT2],
  qwen2: [RE_QWEN2],
  qwen35: [RE_QWEN35],
  poro: [RE_PORO],
  chatglm4: [RE_LLAMA3],
  viking: [RE_PORO, '\\p{N}'],
  tekken: [
    `${RE_GPT4O_LETTERS('\\p{L}').replaceAll(`${CONTRACTIONS}?`, '')}|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  ],
  chameleon: [
    '<sentinel:[0-9]+>',
    '(IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z',
    '([\\t\\n]|    |  )',
    '\\p{N}',
    '[\\p{P}!-/:-@\\[-`{-~]',
    RE_GPT2,
  ],
  'gpt-4o': [
    `${RE_GPT4O_LETTERS('\\p{L}')}|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  ],
  'granite-emb-multi': [
    `${RE_GPT4O_LETTERS('\\p{L}\\p{M}')}|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  ],
  bailingmoe: [
    "'(?:[sSdDmMtT]|[lL][lL]|[vV][eE]|[rR][eE])|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+",
  ],
  'seed-coder': [
    `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1}| ?[^\\s\\p{L}\\p{N}\\r\\n]+|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  ],
  'grok-2': [RE_QWEN2],
  laguna: [RE_NEWLINES, RE_QWEN2],
  'exaone-moe': [
    `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?(?:\\p{L}\\p{M}*(?: \\p{L}\\p{M}*)*)+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]?|\\s*[\\r\\n]|\\s+(?!\\S)|\\s+`,
  ],
  minicpm5: [
    '\\p{N}{1,3}',
    `${CONTRACTIONS}|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}+| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+`,
  ],
};

/**
 * llama.cpp's settings for one tokenizer.ggml.pre value of a BPE vocabulary (llama-vocab.cpp, load):
 * what the vocabulary reader applies and what the tokenizer splits by. The one table of them is
 * PRE_SETTINGS below.
 */
export interface PreTokenizerFlags {
  /** llama.cpp's pre-tokenizer type (LLAMA_VOCAB_PRE_TYPE_*, lower case); null where Gufo does not split text this way. */
  readonly type: string | null;
  /** A word that is a whole token is taken as is, without merges (Llama 3, Tekken, ...). */
  readonly ignoreMerges: boolean;
  /** llama.cpp's add_bos when the file has no tokenizer.ggml.add_bos_token. */
  readonly addBos: boolean;
  /** add_bos whatever the file says (llama.cpp sets it after reading the key). */
  readonly forceAddBos: boolean;
  /** llama.cpp's add_sep when the file has no tokenizer.ggml.add_sep_token. */
  readonly addSep: boolean;
  /** clean_up_tokenization_spaces, used when detokenizing. */
  readonly cleanSpaces: boolean;
  /** llama.cpp drops the default BOS id (ChatGLM). */
  readonly noBos: boolean;
  /** Spaces are written as U+2581 in token texts. */
  readonly escapeWhitespaces: boolean;
  /** The normalizer's lowercase default. */
  readonly lowercase: boolean;
}

type PreSettings = Partial<PreTokenizerFlags>;

const DEFAULT_FLAGS: PreTokenizerFlags = {
  type: null,
  ignoreMerges: false,
  addBos: false,
  forceAddBos: false,
  addSep: false,
  cleanSpaces: true,
  noBos: false,
  escapeWhitespaces: false,
  lowercase: true,
};

/**
 * tokenizer.ggml.pre values llama.cpp knows, with the settings it applies (llama-vocab.cpp, load);
 * those without a type are the ones Gufo does not split text for (yet).
 */
const PRE_SETTINGS: Record<string, PreSettings> = (() => {
  const table: Record<string, PreSettings> = {};
  const add = (names: string[], settings: PreSettings) => names.forEach((n) => (table[n] = settings));
  const noClean = { cleanSpaces: false };
  add(['default'], { type: 'default' });
  add(['llama3', 'llama-v3', 'llama-bpe', 'falcon3', 'falcon-h1', 'pixtral', 'midm-2.0', 'lfm2', 'jina-v5-nano'], {
    type: 'llama3',
    ignoreMerges: true,
    addBos: true,
  });
  add(['deepseek-llm'], { type: 'deepseek-llm', ...noClean });
  add(['deepseek-coder'], { type: 'deepseek-coder', ...noClean });
  add(['deepseek-v3'], { type: 'deepseek3-llm', ...noClean });
  add(['youtu'], { type: 'youtu', ignoreMerges: true, ...noClean });
  add(['falcon'], { type: 'falcon' });
  add(['mpt'], { type: 'gpt2' });
  add(['starcoder'], { type: 'starcoder' });
  add(
    [
      'gpt-2',
      'phi-2',
      'jina-es',
      'jina-de',
      'gigachat',
      'jina-v2-es',
      'jina-v2-de',
      'a.x-4.0',
      'mellum',
      'modern-bert',
    ],
    {
      type: 'gpt2',
    },
  );
  add(['jais-2'], { type: 'jais-2' });
  add(['jina-v1-en', 'jina-v2-code', 'roberta-bpe'], { type: 'gpt2', addSep: true });
  add(['refact'], { type: 'starcoder' });
  add(['command-r'], { type: 'starcoder', ...noClean });
  add(['qwen2', 'deepseek-r1-qwen', 'kormo', 'f2llmv2'], { type: 'qwen2', ...noClean });
  add(['qwen35'], { type: 'qwen35', ...noClean });
  add(['stablelm2'], { type: 'qwen2' });
  add(['olmo'], { type: 'gpt2' });
  add(['dbrx'], { type: 'dbrx' });
  add(['smaug-bpe'], { type: 'smaug' });
  add(['poro-chat'], { type: 'poro', ...noClean });
  add(['glm4', 'chatglm-bpe'], { type: 'chatglm4', noBos: true });
  add(['viking'], { type: 'viking', ...noClean });
  add(['jais'], { type: 'gpt2' });
  add(['tekken'], { type: 'tekken', ignoreMerges: true, addBos: true, ...noClean });
  add(['smollm'], { type: 'starcoder', ...noClean });
  add(['codeshell'], { type: 'starcoder' });
  add(['bloom', 'gpt3-finnish'], { type: 'poro' });
  add(['exaone'], { type: 'starcoder' });
  add(['exaone4'], { type: 'gpt2' });
  add(['exaone-moe'], { type: 'exaone-moe' });
  add(['chameleon'], { type: 'chameleon', addBos: true, ...noClean });
  add(['minerva-7b'], { type: 'starcoder' });
  add(['megrez'], { type: 'qwen2' });
  add(['gpt-4o', 'llama4', 'kanana2', 'talkie'], { type: 'gpt-4o', ...noClean });
  add(['granite-embed-multi-97m'], { type: 'granite-emb-multi', ignoreMerges: true, ...noClean });
  add(['trillion', 'granite-docling'], { type: 'gpt2', ...noClean });
  add(['bailingmoe', 'bailingmoe2', 'llada-moe'], { type: 'bailingmoe', ...noClean });
  add(['seed-coder'], { type: 'seed-coder', ...noClean });
  add(['hunyuan'], { type: 'qwen2', ...noClean });
  add(['hunyuan-dense', 'joyai-llm'], { type: 'deepseek3-llm', ...noClean });
  add(['grok-2'], { type: 'grok-2', ...noClean });
  add(['laguna'], { type: 'laguna', ...noClean });
  add(['minimax-m2'], { type: 'gpt-4o', ...noClean });
  add(['solar-open'], { type: 'qwen2', ...noClean });
  add(['mellum2'], { type: 'starcoder' });
  add(['minicpm5'], { type: 'minicpm5', ignoreMerges: true });
  // Known to llama.cpp but needing machinery not written here (a custom digit splitter, raw-UTF-8
  // BPE without the byte-level alphabet, or no merges at all): no type, only the flags.
  add(['kimi-k2', 'afmoe', 'tiny_aya', 'cohere2moe', 'superbpe'], { ...noClean });
  add(['gemma4', 'granite-embed-multi-311m'], { escapeWhitespaces: true, forceAddBos: true });
  add(['sarvam-moe'], { escapeWhitespaces: true, ...noClean });
  add(['whitespace'], { lowercase: false });
  return table;
})();

/** The table's name for a tokenizer.ggml.pre value (null or empty: llama.cpp's "default"). */
function preName(pre: string | null): string {
  return pre === null || pre === '' ? 'default' : pre;
}

function settingsOf(name: string): PreSettings | undefined {
  return Object.hasOwn(PRE_SETTINGS, name) ? PRE_SETTINGS[name] : undefined;
}

/**
 * llama.cpp's flags for a tokenizer.ggml.pre value, whether or not Gufo splits text for it (a name
 * llama.cpp does not know gets the defaults; tokenizing refuses it, see resolvePreTokenizer).
 */
export function preTokenizerFlags(pre: string | null): PreTokenizerFlags {
  return { ...DEFAULT_FLAGS, ...settingsOf(preName(pre)) };
}

/** Pre-tokenizers llama.cpp knows that Gufo does not split text for. */
export const KNOWN_UNSUPPORTED_PRE_TOKENIZERS: ReadonlySet<string> = new Set(
  Object.keys(PRE_SETTINGS).filter((n) => PRE_SETTINGS[n]!.type === undefined),
);

/** Every tokenizer.ggml.pre value this module tokenizes. */
export const SUPPORTED_PRE_TOKENIZERS: readonly string[] = Object.keys(PRE_SETTINGS).filter(
  (n) => PRE_SETTINGS[n]!.type !== undefined,
);

/** The pre-tokenizer for a tokenizer.ggml.pre value (null: the file has none, llama.cpp's default). */
export function resolvePreTokenizer(pre: string | null, file = ''): PreTokenizer {
  const name = preName(pre);
  const flags = preTokenizerFlags(name);
  if (flags.type === null) {
    const where = file ? `${file}: ` : '';
    throw new VocabError(
      KNOWN_UNSUPPORTED_PRE_TOKENIZERS.has(name)
        ? `${where}unsupported pre-tokenizer "${name}" (tokenizer.ggml.pre): llama.cpp knows it, Gufo does not tokenize it yet`
        : `${where}unsupported pre-tokenizer "${name}" (tokenizer.ggml.pre): unknown to llama.cpp and Gufo`,
    );
  }
  const steps = TYPE_REGEXES[flags.type]!.map(compileStep);
  return {
    name,
    type: flags.type,
    ignoreMerges: flags.ignoreMerges,
    addBosDefault: flags.addBos,
    addSepDefault: flags.addSep,
    cleanSpaces: flags.cleanSpaces,
    noBos: flags.noBos,
    split: (cps, n) => runSteps(steps, cps, n),
  };
}

// ---------------------------------------------------------------------------------------------
// Splitting machinery

/** The text being split, with the derived forms regexes run over (built when first needed). */
class SplitText {
  private collapsedText: string | undefined;
  private wideText: { text: string; cpToUnit: Int32Array | null; unitToCp: Int32Array | null } | undefined;

  constructor(
    readonly cps: Int32Array,
    readonly n: number,
  ) {}

  /** One character per code point: ASCII as is, others as their category's stand-in. */
  collapsed(): string {
    if (this.collapsedText !== undefined) return this.collapsedText;
    const flags = codepointFlags();
    const units = new Uint16Array(this.n);
    for (let i = 0; i < this.n; i++) {
      const cp = this.cps[i]!;
      units[i] = cp < 128 ? cp : collapsedChar(flags[cp]!);
    }
    return (this.collapsedText = unitsToString(units));
  }

  /** The code points as a string, non-ASCII whitespace as \v, with index maps when some are astral. */
  wide(): { text: string; cpToUnit: Int32Array | null; unitToCp: Int32Array | null } {
    if (this.wideText) return this.wideText;
    const flags = codepointFlags();
    let astral = 0;
    for (let i = 0; i < this.n; i++) if (this.cps[i]! > 0xffff) astral++;
    const units = new Uint16Array(this.n + astral);
    const cpToUnit = astral ? new Int32Array(this.n + 1) : null;
    const unitToCp = astral ? new Int32Array(this.n + astral + 1) : null;
    let u = 0;
    for (let i = 0; i < this.n; i++) {
      let cp = this.cps[i]!;
      if (cp > 0x7f && flags[cp]! & WHITESPACE) cp = 0x0b;
      if (cpToUnit) cpToUnit[i] = u;
      if (unitToCp) unitToCp[u] = i;
      if (cp > 0xffff) {
        cp -= 0x10000;
        units[u++] = 0xd800 + (cp >> 10);
        if (unitToCp) unitToCp[u] = i;
        units[u++] = 0xdc00 + (cp & 0x3ff);
      } else {
        units[u++] = cp;
      }
    }
    if (cpToUnit) cpToUnit[this.n] = u;
    if (unitToCp) unitToCp[u] = this.n;
    return (this.wideText = { text: unitsToString(units), cpToUnit, unitToCp });
  }
}

const utf16 = new TextDecoder('utf-16le');

function unitsToString(units: Uint16Array): string {
  if (units.length < 64) return String.fromCharCode.apply(null, units as unknown as number[]);
  return utf16.decode(units);
}

/** llama.cpp's stand-in bytes for the categories of code points above 0x7F. */
const STAND_IN_NUMBER = 0xd1;
const STAND_IN_LETTER = 0xd2;
const STAND_IN_PUNCTUATION = 0xd3;
const STAND_IN_ACCENT_MARK = 0xd4;
const STAND_IN_SYMBOL = 0xd5;
const STAND_IN_OTHER = 0xd0;

function collapsedChar(flags: number): number {
  if (flags & WHITESPACE) return 0x0b;
  switch (flags & CATEGORY_MASK) {
    case NUMBER:
      return STAND_IN_NUMBER;
    case LETTER:
      return STAND_IN_LETTER;
    case PUNCTUATION:
      return STAND_IN_PUNCTUATION;
    case ACCENT_MARK:
      return STAND_IN_ACCENT_MARK;
    case SYMBOL:
      return STAND_IN_SYMBOL;
    default:
      return STAND_IN_OTHER;
  }
}

/** \p{..} classes llama.cpp rewrites for the collapsed text: stand-in + ASCII members. */
const CATEGORY_CLASSES: Record<string, string> = (() => {
  const ch = String.fromCharCode;
  const number = ch(STAND_IN_NUMBER) + '0-9';
  const letter = ch(STAND_IN_LETTER) + 'A-Za-z';
  return {
    '\\p{N}': number,
    '\\p{L}': letter,
    '\\p{P}': ch(STAND_IN_PUNCTUATION) + '!-#%-*,-/:-;?-@\\[-\\]_\\{\\}',
    '\\p{M}': ch(STAND_IN_ACCENT_MARK),
    '\\p{S}': ch(STAND_IN_SYMBOL) + '\\$\\+<->\\^`\\|\\~',
    // llama.cpp maps every letter subcategory to "letter".
    '\\p{Lu}': letter,
    '\\p{Ll}': letter,
    '\\p{Lt}': letter,
    '\\p{Lm}': letter,
    '\\p{Lo}': letter,
  };
})();

type Segmenter = (text: SplitText, segments: number[]) => number[];

function compileStep(source: string): Segmenter {
  const custom = CUSTOM_SPLITTERS[source];
  if (custom) return (text, segments) => eachSegment(text, segments, custom);
  const usesCategories = Object.keys(CATEGORY_CLASSES).some((c) => source.includes(c));
  if (usesCategories) {
    const regex = new RegExp(collapsePattern(source), 'g');
    return (text, segments) => regexSplit(segments, regex, text.collapsed(), null, null);
  }
  const regex = new RegExp(asciiWhitespacePattern(source), 'gu');
  return (text, segments) => {
    const wide = text.wide();
    return regexSplit(segments, regex, wide.text, wide.cpToUnit, wide.unitToCp);
  };
}

/** Scans a pattern as llama.cpp does: a [ or ] not after a backslash opens or closes a class. */
function rewritePattern(source: string, replace: (token: string, inside: boolean) => string | null): string {
  let out = '';
  let inside = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === '[' && (i === 0 || source[i - 1] !== '\\')) {
      inside = true;
      out += c;
      continue;
    }
    if (inside && c === ']' && source[i - 1] !== '\\') {
      inside = false;
      out += c;
      continue;
    }
    if (c === '\\' && i + 1 < source.length) {
      const close = source[i + 1] === 'p' && source[i + 2] === '{' ? source.indexOf('}', i + 3) : -1;
      const token = close >= 0 && close <= i + 10 ? source.slice(i, close + 1) : source.slice(i, i + 2);
      out += replace(token, inside) ?? token;
      i += token.length - 1;
      continue;
    }
    out += c;
  }
  return out;
}

function collapsePattern(source: string): string {
  for (const ch of source)
    if (ch.charCodeAt(0) >= 128) throw new Error(`regex mixes categories and non-ASCII: ${source}`);
  return rewritePattern(source, (token, inside) => {
    const cls = CATEGORY_CLASSES[token];
    if (cls === undefined) return null;
    return inside ? cls : `[${cls}]`;
  });
}

function asciiWhitespacePattern(source: string): string {
  return rewritePattern(source, (token, inside) => {
    if (token === '\\s') return inside ? '\\t-\\r ' : '[\\t-\\r ]';
    if (token === '\\S') {
      if (inside) throw new Error(`\\S inside a class is not supported: ${source}`);
      return '[^\\t-\\r ]';
    }
    return null;
  });
}

/**
 * Splits each segment by a regex as llama.cpp's unicode_regex_split_stl: every match is a piece,
 * and so is every stretch between matches. The regex sees only the segment.
 */
function regexSplit(
  segments: number[],
  regex: RegExp,
  text: string,
  cpToUnit: Int32Array | null,
  unitToCp: Int32Array | null,
): number[] {
  const out: number[] = [];
  let start = 0;
  for (const length of segments) {
    const end = start + length;
    const from = cpToUnit ? cpToUnit[start]! : start;
    const to = cpToUnit ? cpToUnit[end]! : end;
    const piece = text.slice(from, to);
    regex.lastIndex = 0;
    let done = start; // code point index up to which pieces were emitted
    for (let m = regex.exec(piece); m !== null; m = regex.exec(piece)) {
      if (m[0].length === 0) {
        // Never produced by llama.cpp's lists that are supported here; skip rather than loop.
        regex.lastIndex++;
        continue;
      }
      const mStart = unitToCp ? unitToCp[from + m.index]! : start + m.index;
      const mEnd = unitToCp ? unitToCp[from + m.index + m[0].length]! : start + m.index + m[0].length;
      if (mStart > done) out.push(mStart - done);
      out.push(mEnd - mStart);
      done = mEnd;
    }
    if (end > done) out.push(end - done);
    start = end;
  }
  return out;
}

function runSteps(steps: readonly Segmenter[], cps: Int32Array, n: number): number[] {
  if (n === 0) return [];
  const text = new SplitText(cps, n);
  let segments = [n];
  for (const step of steps) segments = step(text, segments);
  return segments;
}

type CustomSplitter = (cps: Int32Array, flags: Uint16Array, start: number, end: number, out: number[]) => void;

function eachSegment(text: SplitText, segments: number[], splitter: CustomSplitter): number[] {
  const out: number[] = [];
  const flags = codepointFlags();
  let start = 0;
  for (const length of segments) {
    splitter(text.cps, flags, start, start + length, out);
    start += length;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Hand-written splitters, decision for decision as llama.cpp's unicode.cpp takes them.

const APOSTROPHE = 0x27;
const SPACE = 0x20;
const CR = 0x0d;
const LF = 0x0a;
const WLN = WHITESPACE | LETTER | NUMBER;

/** 's 't 'm 'd 're 've 'll at pos (an apostrophe); returns its length or 0. `fold` lowercases ASCII. */
function contractionLength(cps: Int32Array, pos: number, end: number, fold: boolean): number {
  if (pos + 1 >= end) return 0;
  let a = cps[pos + 1]!;
  if (fold && a >= 0x41 && a <= 0x5a) a += 0x20;
  if (a === 0x73 || a === 0x74 || a === 0x6d || a === 0x64) return 2; // s t m d
  if (pos + 2 >= end) return 0;
  let b = cps[pos + 2]!;
  if (fold && b >= 0x41 && b <= 0x5a) b += 0x20;
  if ((a === 0x72 && b === 0x65) || (a === 0x76 && b === 0x65) || (a === 0x6c && b === 0x6c)) return 3; // re ve ll
  return 0;
}

/** GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+ */
function splitGpt2(cps: Int32Array, flags: Uint16Array, start: number, end: number, out: number[]): void {
  const at = (p: number) => (p < end ? flags[cps[p]!]! : 0);
  let pos = start;
  while (pos < end) {
    const from = pos;
    const cp = cps[pos]!;
    if (cp === APOSTROPHE) {
      const len = contractionLength(cps, pos, end, false);
      if (len) {
        out.push(len);
        pos += len;
        continue;
      }
    }
    const f2 = cp === SPACE ? at(pos + 1) : flags[cp]!;
    if (f2 & LETTER) {
      if (cp === SPACE) pos++;
      while (at(pos) & LETTER) pos++;
    } else if (f2 & NUMBER) {
      if (cp === SPACE) pos++;
      while (at(pos) & NUMBER) pos++;
    } else if (!(f2 & WLN) && f2 !== 0) {
      if (cp === SPACE) pos++;
      for (let f = at(pos); !(f & WLN) && f !== 0; f = at(pos)) pos++;
    } else {
      let spaces = 0;
      while (at(pos + spaces) & WHITESPACE) spaces++;
      if (spaces > 1 && pos + spaces < end) pos += spaces - 1;
      else if (spaces > 0) pos += spaces;
      else pos++;
    }
    out.push(pos - from);
  }
}

/**
 * Llama 3 (digits = 3), Qwen2 (digits = 1) and Qwen3.5 (digits = 1, marks count as letters):
 * (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,digits}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
 */
function makeLlama3Splitter(digits: number, marksAreLetters: boolean): CustomSplitter {
  const letterish = marksAreLetters ? LETTER | ACCENT_MARK : LETTER;
  const notPunct = marksAreLetters ? WLN | ACCENT_MARK : WLN;
  return (cps, flags, start, end, out) => {
    const at = (p: number) => (p < end ? flags[cps[p]!]! : 0);
    let pos = start;
    while (pos < end) {
      let from = pos;
      const cp = cps[pos]!;
      const f = flags[cp]!;
      if (cp === APOSTROPHE) {
        const len = contractionLength(cps, pos, end, true);
        if (len) {
          out.push(len);
          pos += len;
          continue;
        }
      }
      if (!(cp === CR || cp === LF || f & NUMBER) && (f & letterish || at(pos + 1) & letterish)) {
        pos++;
        while (at(pos) & letterish) pos++;
        out.push(pos - from);
        continue;
      }
      if (f & NUMBER) {
        while (at(pos) & NUMBER) {
          pos++;
          if (pos - from >= digits) {
            out.push(pos - from);
            from = pos;
          }
        }
        if (pos > from) out.push(pos - from);
        continue;
      }
      const f2 = cp === SPACE ? at(pos + 1) : f;
      if (!(f2 & notPunct)) {
        if (cp === SPACE) pos++;
        for (let g = at(pos); !(g & notPunct) && g !== 0; g = at(pos)) pos++;
        while (pos < end && (cps[pos] === CR || cps[pos] === LF)) pos++;
        out.push(pos - from);
        continue;
      }
      let spaces = 0;
      let afterLastNewline = 0;
      while (at(pos + spaces) & WHITESPACE) {
        const c = cps[pos + spaces]!;
        if (c === CR || c === LF) afterLastNewline = pos + spaces + 1;
        spaces++;
      }
      if (afterLastNewline > 0) pos = afterLastNewline;
      else if (spaces > 1 && pos + spaces < end) pos += spaces - 1;
      else if (spaces > 0) pos += spaces;
      else pos++;
      out.push(pos - from);
    }
  };
}

/** [^\n]+|[\n]+ */
function splitNewlines(cps: Int32Array, _flags: Uint16Array, start: number, end: number, out: number[]): void {
  let pos = start;
  while (pos < end) {
    const from = pos;
    const newline = cps[pos] === LF;
    while (pos < end && (cps[pos] === LF) === newline) pos++;
    out.push(pos - from);
  }
}

/** The regexes llama.cpp hands to a hand-written splitter instead of a regex engine. */
const CUSTOM_SPLITTERS: Record<string, CustomSplitter> = {
  [RE_GPT2]: splitGpt2,
  [RE_LLAMA3]: makeLlama3Splitter(3, false),
  [RE_LLAMA3_ORIGINAL]: makeLlama3Splitter(3, false),
  [RE_QWEN2]: makeLlama3Splitter(1, false),
  [RE_QWEN35]: makeLlama3Splitter(1, true),
  [RE_NEWLINES]: splitNewlines,
};
