/**
 * A cheap, exact lower bound on how many tokens a text becomes, without tokenizing it: every token
 * stands for at most `longest` bytes of the input, so a text of B UTF-8 bytes needs at least
 * ceil(B / longest) tokens. A prompt whose bound already overflows the context can be refused at
 * once (tokenizing megabytes takes seconds).
 */
import type { Tokenizer } from './tokenizer';

const bounds = new WeakMap<Tokenizer, number | null>();

/**
 * The most input bytes one token of `tokenizer` can stand for: its longest piece, special tokens'
 * texts included (they are matched in the input). Null when no bound holds: WordPiece drops
 * whitespace and folds case, and a BPE vocabulary without a token for every byte of UTF-8 text
 * drops the bytes it cannot spell (llama.cpp does).
 */
export function longestTokenBytes(tokenizer: Tokenizer): number | null {
  const known = bounds.get(tokenizer);
  if (known !== undefined) return known;
  const { vocab } = tokenizer;
  let longest: number | null = null;
  if (vocab.model === 'llama' || vocab.model === 'gpt2') {
    // One token per character at least (an unknown character, a byte token): 4 bytes at most.
    let max = 4;
    let unspelled = UTF8_BYTES;
    for (let id = 0; id < vocab.tokens.length; id++) {
      const piece = tokenizer.tokenToPiece(id, { renderSpecial: true });
      if (piece.length > max) max = piece.length;
      if (piece.length === 1 && isUtf8Byte(piece[0]!)) unspelled--;
    }
    // SentencePiece writes a byte it has no piece for as a byte token, or fails; it never drops one.
    longest = vocab.model === 'llama' || unspelled === 0 ? max : null;
  }
  bounds.set(tokenizer, longest);
  return longest;
}

/** Bytes that occur in UTF-8 text: all but 0xC0, 0xC1 and 0xF5..0xFF. */
const UTF8_BYTES = 256 - 2 - 11;
const isUtf8Byte = (b: number) => b !== 0xc0 && b !== 0xc1 && b < 0xf5;

/** The fewest tokens `text` can become (0 when the tokenizer allows no bound); BOS/EOS not counted. */
export function fewestTokens(tokenizer: Tokenizer, text: string): number {
  const longest = longestTokenBytes(tokenizer);
  return longest === null ? 0 : Math.ceil(utf8Bytes(text) / longest);
}

/** The UTF-8 length of `text` (a lone surrogate counts as U+FFFD, as the tokenizer reads it). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c < 0xdc00 && i + 1 < text.length && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
