import { mulberry32, type Rng } from './random';

/**
 * A deterministic corpus of varied strings for comparing a tokenizer with llama.cpp's: many scripts,
 * emoji with ZWJ joiners and modifiers, combining marks, whitespace runs (tabs, newlines, CR, NBSP,
 * ideographic space), code, numbers, contractions, special-token look-alikes, control characters,
 * long strings and the empty string. Same seed, same corpus.
 */
export function tokenizerCorpus(count = 2400, seed = 0x70c3): string[] {
  const rng = mulberry32(seed);
  const out = [...FIXED];
  const makers: ((rng: Rng) => string)[] = [
    mixedAtoms,
    mixedAtoms,
    mixedAtoms,
    sentence,
    sentence,
    codeSnippet,
    numbers,
    whitespaceRun,
    randomCodepoints,
    specialLookalikes,
    emojiRun,
    combiningRun,
    contractions,
  ];
  while (out.length < count) out.push(pick(rng, makers)(rng));
  return out;
}

const pick = <T>(rng: Rng, items: readonly T[]): T => items[rng.int(items.length)]!;

/** Hand-picked cases, each a known trouble spot for some tokenizer. */
const FIXED: readonly string[] = [
  '',
  ' ',
  '  ',
  '   ',
  '\t',
  '\n',
  '\n\n',
  '\n\n\n',
  '\t\n',
  ' \n',
  '\r\n',
  '\r\n\r\n',
  'Hello world',
  ' Hello world',
  'Hello World',
  ' Hello World!',
  'Hello, world!',
  '  Hello',
  '   Hello',
  '    Hello\n    Hello',
  ' (',
  '\n =',
  "' era",
  "Hello, y'all! How are you 😁 ?我想在apple工作1314151天～",
  '3333333',
  '33333333333',
  'ied 4 ½ months',
  'Führer',
  'Äpfel',
  'Cửa hàng',
  "I'm",
  "I'M",
  "don't",
  "DON'T",
  "you'll",
  "we've",
  "they're",
  "it's",
  "she'd",
  " 's",
  " 'll",
  "''",
  "'",
  '<s>',
  '</s>',
  '<unk>',
  '<s> Hello</s>',
  '<s>Hello</s>',
  ' <s>',
  '<s> ',
  '<s>  <s>',
  '</s></s></s>',
  '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
  '<|im_end|>',
  '<|endoftext|>',
  '<|endoftext|> <|endoftext|>',
  '<|eot_id|>',
  '<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nhi<|eot_id|>',
  '<|user|>\nHello<|end|>\n<|assistant|>',
  '<|system|> x <|end|>  y',
  '<|end|>\n\n',
  '[CLS] hello [SEP]',
  '[PAD] [MASK] [UNK]',
  '<｜begin▁of▁sentence｜>Hi<｜end▁of▁sentence｜>',
  '<fim_prefix>def f():<fim_suffix>\n<fim_middle>',
  '>>TITLE<< >>ABSTRACT<<',
  '<0x41>',
  '<0x0A>',
  '▁',
  '▁▁Hello',
  ' ▁ ',
  '\u00a0',
  '\u00a0\u00a0x',
  '\u3000',
  '\u2009x\u200a',
  '\u200b',
  '\u200d',
  '\ufeff',
  '\ufeffHello',
  '\u00ad',
  '\u0000',
  'a\u0000b',
  '\u0001\u0002\u007f',
  '\u0085',
  '\u2028\u2029',
  '\ufffd',
  '\ud800',
  'x\udc00y',
  '😀',
  '👍🏽',
  '👨‍👩‍👧‍👦',
  '🏳️‍🌈',
  '🇺🇸🇫🇷',
  '1️⃣',
  '🧑🏾‍🚀 to the 🌕',
  'e\u0301',
  'a\u0308\u0304',
  'Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f\u031e\u0320\u034dA\u036b\u0357',
  'Ελληνικά',
  'Русский текст',
  'العربية',
  'עברית',
  'हिन्दी',
  'ไทย',
  '日本語のテキスト',
  '한국어',
  '中文',
  'ქართული',
  'Հայերեն',
  'አማርኛ',
  'தமிழ்',
  'বাংলা',
  '𝕳𝖊𝖑𝖑𝖔',
  'ﬁ ﬂ',
  'Ｆｕｌｌｗｉｄｔｈ',
  '①②③',
  '٣٤٥',
  '१२३',
  '1234567890',
  '1,234,567.89',
  '3.14159265358979323846',
  '0x1F 0b1010 1e-10',
  '$100 €50 £20 ¥1000',
  'a+b=c; x<y>z; p^q~r|s',
  '...',
  '!!!???',
  '—–-',
  '«»“”„',
  '   \t\t  \n  \n\n   x',
  'function foo(bar) {\n  return bar * 2;\n}\n',
  'def f(x):\n\treturn x ** 2\n',
  '#include <stdio.h>\nint main(void) { printf("%d\\n", 42); }',
  '{"key": [1, 2, 3], "nested": {"a": null}}',
  'SELECT * FROM t WHERE id = 1;',
  '<html><body><p class="x">Hi</p></body></html>',
  '$ ls -la | grep foo && echo "ok"',
];

const WORDS: readonly string[] = [
  'the',
  'The',
  'THE',
  'quick',
  'brown',
  'fox',
  'jumps',
  'over',
  'lazy',
  'dog',
  'Hello',
  'world',
  'a',
  'I',
  'tokenization',
  'internationalization',
  'antidisestablishmentarianism',
  'GGUF',
  'llama',
  'LLaMA',
  'model',
  'naïve',
  'café',
  'résumé',
  'Über',
  'straße',
  'São',
  'Paulo',
  'jalapeño',
  'Ærø',
  'Łódź',
  'İstanbul',
  'ıi',
  'Ελλάδα',
  'λόγος',
  'ΣΟΦΙΑ',
  'Москва',
  'привет',
  'мир',
  'Київ',
  'Беларусь',
  'مرحبا',
  'بالعالم',
  'שלום',
  'עולם',
  'नमस्ते',
  'दुनिया',
  'สวัสดี',
  'ชาวโลก',
  'こんにちは',
  '世界',
  'カタカナ',
  'ひらがな',
  '漢字',
  '안녕하세요',
  '세계',
  '你好',
  '北京',
  '繁體字',
  'გამარჯობა',
  'Բարեւ',
  'ሰላም',
  'வணக்கம்',
  'হ্যালো',
  'ಕನ್ನಡ',
  'മലയാളം',
  'ગુજરાતી',
  'ਪੰਜਾਬੀ',
  'ଓଡ଼ିଆ',
  'සිංහල',
  'ພາສາລາວ',
  'ខ្មែរ',
  'မြန်မာ',
  'བོད་ཡིག',
  'ᏣᎳᎩ',
  'ᐃᓄᒃᑎᑐᑦ',
  'Tiếng',
  'Việt',
  'Dziękuję',
  'Ñandú',
  'Þórr',
  'ǅemal',
  'ﬀ',
  'Å',
  'Å',
  '𐍈',
  '𝔘𝔫𝔦𝔠𝔬𝔡𝔢',
  '𠜎𠜱',
  'ℌ',
  '№',
  '™',
  '°C',
  'µs',
  '½',
];

const EMOJI: readonly string[] = [
  '😀',
  '😂',
  '🤣',
  '❤️',
  '❤',
  '👍',
  '👍🏻',
  '👍🏿',
  '🙏',
  '🔥',
  '✨',
  '🎉',
  '🚀',
  '🌍',
  '🐍',
  '🦀',
  '☕',
  '✔️',
  '⚠️',
  '👩‍💻',
  '👨‍👩‍👧',
  '🧑‍🤝‍🧑',
  '🏳️‍⚧️',
  '🏴‍☠️',
  '👁️‍🗨️',
  '🇯🇵',
  '🇩🇪',
  '#️⃣',
  '©️',
  '🫠',
  '🪿',
  '🫨',
  '🧌',
  '👯‍♀️',
  '🤷🏽‍♂️',
];

const SPACES: readonly string[] = [
  ' ',
  ' ',
  ' ',
  '  ',
  '   ',
  '    ',
  '\t',
  '\t\t',
  '\n',
  '\n\n',
  '\r\n',
  ' \n',
  '\n ',
  '\u00a0',
  '\u3000',
  '\u2003',
  '\v',
  '\f',
];

const PUNCT: readonly string[] = [
  '.',
  ',',
  '!',
  '?',
  ';',
  ':',
  '-',
  '--',
  '—',
  '(',
  ')',
  '[',
  ']',
  '{',
  '}',
  '"',
  "'",
  '`',
  '...',
  '…',
  '/',
  '\\',
  '@',
  '#',
  '$',
  '%',
  '^',
  '&',
  '*',
  '_',
  '=',
  '+',
  '<',
  '>',
  '|',
  '~',
  '¿',
  '¡',
  '·',
  '•',
  '→',
  '«',
  '»',
  '„',
  '“',
  '”',
  '。',
  '、',
  '！',
  '？',
  '「',
  '」',
  '،',
  '؟',
  '।',
];

const SPECIAL_LOOKALIKES: readonly string[] = [
  '<s>',
  '</s>',
  '<unk>',
  '<pad>',
  '<mask>',
  '<|im_start|>',
  '<|im_end|>',
  '<|endoftext|>',
  '<|eot_id|>',
  '<|end|>',
  '<|user|>',
  '<|assistant|>',
  '<|system|>',
  '<|begin_of_text|>',
  '<|start_header_id|>',
  '<|end_header_id|>',
  '[INST]',
  '[/INST]',
  '<<SYS>>',
  '<</SYS>>',
  '[CLS]',
  '[SEP]',
  '[PAD]',
  '[MASK]',
  '[UNK]',
  '<start_of_turn>',
  '<end_of_turn>',
  '<｜begin▁of▁sentence｜>',
  '<｜end▁of▁sentence｜>',
  '<｜fim▁hole｜>',
  '<fim_prefix>',
  '<fim_suffix>',
  '<fim_middle>',
  '<fim-prefix>',
  '<PRE>',
  '<EOT>',
  '>>TITLE<<',
  '>>COMMENT<<',
  '<|padding|>',
  '[PAD32011]',
  '<|placeholder1|>',
  '<0x41>',
  '<0x0A>',
  '<0xZZ>',
  '<s',
  's>',
  '</',
  '<|',
  '|>',
  '<|im_',
  '▁',
  '▁▁',
  '\u2581x',
];

const CONTRACTIONS: readonly string[] = [
  "'s",
  "'t",
  "'re",
  "'ve",
  "'m",
  "'ll",
  "'d",
  "'S",
  "'T",
  "'RE",
  "'VE",
  "'M",
  "'LL",
  "'D",
  "n't",
  "N'T",
  "'",
  "''",
];

function atom(rng: Rng): string {
  const r = rng.next();
  if (r < 0.4) return pick(rng, WORDS);
  if (r < 0.55) return pick(rng, SPACES);
  if (r < 0.67) return pick(rng, PUNCT);
  if (r < 0.75) return String(rng.int(10 ** (1 + rng.int(8))));
  if (r < 0.83) return pick(rng, EMOJI);
  if (r < 0.88) return pick(rng, SPECIAL_LOOKALIKES);
  if (r < 0.93) return pick(rng, CONTRACTIONS);
  return randomCodepoints(rng, 1 + rng.int(3));
}

function mixedAtoms(rng: Rng): string {
  const n = 1 + rng.int(rng.next() < 0.1 ? 200 : 16);
  let s = '';
  for (let i = 0; i < n; i++) s += atom(rng);
  return s;
}

function sentence(rng: Rng): string {
  const n = 2 + rng.int(14);
  const words: string[] = [];
  for (let i = 0; i < n; i++) {
    let w = pick(rng, WORDS);
    if (rng.next() < 0.15) w += pick(rng, PUNCT);
    if (rng.next() < 0.08) w += pick(rng, CONTRACTIONS);
    words.push(w);
  }
  const lead = rng.next() < 0.3 ? pick(rng, SPACES) : '';
  return lead + words.join(rng.next() < 0.8 ? ' ' : pick(rng, SPACES)) + (rng.next() < 0.5 ? '.' : '');
}

const CODE_LINES: readonly string[] = [
  'for (let i = 0; i < n; i++) {',
  '    x += a[i] * b[i];',
  '}',
  'if x is None:',
  '\treturn []',
  'import numpy as np',
  'const re = /\\s+(?!\\S)/gu;',
  'fn main() -> Result<(), Box<dyn Error>> {',
  '    println!("{:?}", v);',
  '#define MAX(a,b) ((a)>(b)?(a):(b))',
  '<div id="app"></div>',
  '  "name": "gufo",',
  'SELECT a, b FROM t1 JOIN t2 ON t1.id=t2.id;',
  '// TODO: fix this',
  '/* comment */',
  'x = [i**2 for i in range(10) if i % 2 == 0]',
  'let s = `template ${value}`;',
  'echo $HOME && cd ~/src',
  'a != b && c >= d || !e',
  '    def __init__(self, *args, **kwargs):',
  '0xDEADBEEF, 1_000_000, 3.0e-7',
  'std::vector<int> v{1, 2, 3};',
];

function codeSnippet(rng: Rng): string {
  const n = 1 + rng.int(8);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) {
    const indent = rng.next() < 0.5 ? '' : pick(rng, ['  ', '    ', '\t', '        ', '\t\t']);
    lines.push(indent + pick(rng, CODE_LINES));
  }
  return lines.join(rng.next() < 0.9 ? '\n' : '\r\n') + (rng.next() < 0.5 ? '\n' : '');
}

function numbers(rng: Rng): string {
  const parts: string[] = [];
  const n = 1 + rng.int(6);
  for (let i = 0; i < n; i++) {
    const r = rng.next();
    if (r < 0.3) parts.push(String(rng.int(2 ** 31)));
    else if (r < 0.5) parts.push((rng.next() * 10 ** rng.int(8)).toFixed(rng.int(6)));
    else if (r < 0.6) parts.push(String(rng.int(10)).repeat(1 + rng.int(20)));
    else if (r < 0.7) parts.push(`${1 + rng.int(12)}/${1 + rng.int(28)}/${1900 + rng.int(200)}`);
    else if (r < 0.8) parts.push(`${rng.int(24)}:${String(rng.int(60)).padStart(2, '0')}`);
    else if (r < 0.9) parts.push(pick(rng, ['١٢٣', '४५६', '௧௨', '²³', 'Ⅻ', '⅔', '０１２']));
    else parts.push(`-${rng.int(1000)}.${rng.int(1000)}e${rng.int(20)}`);
  }
  return parts.join(pick(rng, [' ', ', ', '\n', '', ' + ', '-']));
}

function whitespaceRun(rng: Rng): string {
  let s = '';
  const n = 1 + rng.int(12);
  for (let i = 0; i < n; i++) s += rng.next() < 0.7 ? pick(rng, SPACES) : pick(rng, WORDS);
  return s;
}

/** Code points from many blocks: Latin, Greek, Cyrillic, Arabic, Indic, CJK, Hangul, symbols, emoji, astral planes. */
const RANGES: readonly [number, number][] = [
  [0x20, 0x7e],
  [0xa0, 0x24f],
  [0x300, 0x36f],
  [0x370, 0x3ff],
  [0x400, 0x4ff],
  [0x590, 0x5ff],
  [0x600, 0x6ff],
  [0x900, 0x97f],
  [0xe00, 0xe7f],
  [0x10a0, 0x10ff],
  [0x1100, 0x11ff],
  [0x1e00, 0x1eff],
  [0x2000, 0x206f],
  [0x20a0, 0x20cf],
  [0x2100, 0x214f],
  [0x2190, 0x23ff],
  [0x2500, 0x27bf],
  [0x3000, 0x30ff],
  [0x4e00, 0x9fff],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe00, 0xfe0f],
  [0xff00, 0xffef],
  [0x1d400, 0x1d7ff],
  [0x1f300, 0x1faff],
  [0x20000, 0x2a6df],
  [0xe000, 0xe0ff],
  [0x0, 0x1f],
];

function randomCodepoints(rng: Rng, n = 1 + rng.int(24)): string {
  let s = '';
  for (let i = 0; i < n; i++) {
    const [lo, hi] = pick(rng, RANGES);
    s += String.fromCodePoint(lo + rng.int(hi - lo + 1));
  }
  return s;
}

function specialLookalikes(rng: Rng): string {
  let s = '';
  const n = 1 + rng.int(6);
  for (let i = 0; i < n; i++) {
    s += pick(rng, SPECIAL_LOOKALIKES);
    if (rng.next() < 0.6) s += rng.next() < 0.5 ? pick(rng, SPACES) : pick(rng, WORDS);
  }
  return s;
}

function emojiRun(rng: Rng): string {
  let s = '';
  const n = 1 + rng.int(8);
  for (let i = 0; i < n; i++) {
    s += pick(rng, EMOJI);
    if (rng.next() < 0.3) s += pick(rng, [' ', '', '\n', ' and ', '!']);
    if (rng.next() < 0.1) s += '\u200d';
  }
  return s;
}

function combiningRun(rng: Rng): string {
  let s = '';
  const n = 1 + rng.int(10);
  for (let i = 0; i < n; i++) {
    s += rng.next() < 0.7 ? pick(rng, ['a', 'e', 'o', 'n', 'x', 'A', 'Я', 'α', 'ก', ' ', '1']) : pick(rng, WORDS);
    const marks = rng.int(4);
    for (let m = 0; m < marks; m++) s += String.fromCodePoint(0x300 + rng.int(0x70));
  }
  return s;
}

function contractions(rng: Rng): string {
  const n = 1 + rng.int(6);
  let s = '';
  for (let i = 0; i < n; i++) {
    s += pick(rng, WORDS) + pick(rng, CONTRACTIONS);
    s += rng.next() < 0.7 ? ' ' : pick(rng, SPACES);
  }
  return s;
}
