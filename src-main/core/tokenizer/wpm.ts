import { ACCENT_MARK, CONTROL, flagsOf, PUNCTUATION, SYMBOL, UNDEFINED, WHITESPACE } from './unicode-flags';
import { tokenLookup, VocabError, type Vocab } from './vocab';
import { ByteWriter } from './utf8';

/**
 * WordPiece (tokenizer.ggml.model "bert") encoding of one raw-text fragment, as llama.cpp's
 * llm_tokenizer_wpm does it: BERT normalization (optional accent stripping and lowercasing, control
 * characters dropped), split on whitespace, punctuation, ASCII symbols and CJK ideographs, then each
 * word, with U+2581 in front, is cut greedily into the longest tokens from the left; a word that cannot
 * be cut completely becomes the unknown token.
 */
export type WpmEncoder = (fragment: string, out: number[]) => void;

const PHANTOM_SPACE = [0xe2, 0x96, 0x81];

/** CJK ideograph ranges of BERT's _is_chinese_char, with llama.cpp's 0x2B920 bound. */
function isChineseChar(cp: number): boolean {
  return (
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x20000 && cp <= 0x2a6df) ||
    (cp >= 0x2a700 && cp <= 0x2b73f) ||
    (cp >= 0x2b740 && cp <= 0x2b81f) ||
    (cp >= 0x2b920 && cp <= 0x2ceaf) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0x2f800 && cp <= 0x2fa1f)
  );
}

const lowerCache = new Map<number, number>();
const nfdCache = new Map<number, number>();

/**
 * llama.cpp's unicode_tolower: the simple (one code point) lowercase mapping of UnicodeData.txt.
 * JavaScript gives the full mapping; they differ only where the full one has several code points
 * (U+0130 İ → i). Code points llama.cpp's older table does not know keep their case.
 */
export function simpleLowercase(cp: number): number {
  if (cp < 0x80) return cp >= 0x41 && cp <= 0x5a ? cp + 32 : cp;
  let r = lowerCache.get(cp);
  if (r === undefined) {
    if (cp === 0x130) r = 0x69;
    else if (flagsOf(cp) & UNDEFINED) r = cp;
    else {
      const s = String.fromCodePoint(cp).toLowerCase();
      const first = s.codePointAt(0)!;
      r = s.length === (first > 0xffff ? 2 : 1) ? first : cp;
    }
    lowerCache.set(cp, r);
  }
  return r;
}

/** llama.cpp's unicode_cpts_normalize_nfd: the FIRST code point of the canonical decomposition. */
export function nfdFirst(cp: number): number {
  if (cp < 0xc0) return cp;
  let r = nfdCache.get(cp);
  if (r === undefined) {
    r = flagsOf(cp) & UNDEFINED ? cp : String.fromCodePoint(cp).normalize('NFD').codePointAt(0)!;
    nfdCache.set(cp, r);
  }
  return r;
}

export function createWpmEncoder(vocab: Vocab): WpmEncoder {
  const lookup = tokenLookup(vocab);
  const maxLen = lookup.maxTokenBytes;
  const { lowercase, stripAccents } = vocab;
  const word = new ByteWriter(256);
  const words: number[] = []; // [start, end) byte ranges of the words in `buf`
  const buf = new ByteWriter(1024);

  return (fragment, out) => {
    // Normalize and split into words (each stored as its UTF-8 bytes in `buf`).
    buf.reset();
    words.length = 0;
    let wordStart = 0;
    const finishWord = () => {
      if (buf.length > wordStart) {
        words.push(wordStart, buf.length);
        wordStart = buf.length;
      }
    };
    for (let i = 0; i < fragment.length; i++) {
      let cp = fragment.codePointAt(i)!;
      if (cp > 0xffff) i++;
      if (stripAccents) cp = nfdFirst(cp);
      const flags = flagsOf(cp);
      if (flags & WHITESPACE) {
        finishWord();
        continue;
      }
      if (cp === 0 || cp === 0xfffd || flags & CONTROL) continue;
      if (stripAccents && flags & ACCENT_MARK) continue;
      const c = lowercase ? simpleLowercase(cp) : cp;
      if (flags & PUNCTUATION || (cp < 0x7f && flags & SYMBOL) || isChineseChar(cp)) {
        finishWord();
        buf.appendCodepoint(c);
        finishWord();
      } else buf.appendCodepoint(c);
    }
    finishWord();

    // Longest-match-first over the bytes of "▁" + word.
    for (let w = 0; w < words.length; w += 2) {
      word.reset();
      word.ensure(3 + words[w + 1]! - words[w]!);
      word.bytes.set(PHANTOM_SPACE, 0);
      word.length = 3;
      word.append(buf.bytes, words[w], words[w + 1]);
      const bytes = word.bytes;
      const n = word.length;
      const before = out.length;
      for (let i = 0; i < n; i++) {
        let match = false;
        for (let j = Math.min(n, i + maxLen + 1); j > i; j--) {
          const id = lookup.find(bytes, i, j);
          if (id >= 0) {
            out.push(id);
            match = true;
            i = j - 1;
            break;
          }
        }
        if (!match) {
          out.length = before;
          break;
        }
      }
      if (out.length === before) {
        if (vocab.unk === null)
          throw new VocabError(`${vocab.file}: a word has no WordPiece tokens and the vocabulary has no unknown token`);
        out.push(vocab.unk);
      }
    }
  };
}
