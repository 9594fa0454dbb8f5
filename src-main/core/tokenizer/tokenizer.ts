import { byteLevelDecode } from './byte-unicode';
import { SpecialTokenMatcher } from './special-tokens';
import { ByteWriter, wellFormed } from './utf8';
import { TokenAttr, tokenLookup, tokenText, VocabError, type TokenLookup, type Vocab } from './vocab';

export interface TokenizeOptions {
  /**
   * Match the texts of CONTROL (and UNKNOWN) tokens in the input, e.g. "<|im_end|>" → its id
   * (llama.cpp's parse_special). USER_DEFINED tokens are matched either way. Default false.
   */
  parseSpecial?: boolean;
  /**
   * llama.cpp's add_special: put BOS first when the vocabulary's add_bos_token says so, and EOS
   * last when add_eos_token does (WordPiece: always [CLS] first and [SEP] last). Default false.
   */
  addSpecial?: boolean;
  /** Same as addSpecial (which also covers EOS): BOS is added only when the vocabulary asks for it. */
  addBos?: boolean;
}

export interface PieceOptions {
  /** Render CONTROL and UNKNOWN tokens as their text; otherwise they render as nothing. Default false. */
  renderSpecial?: boolean;
}

export interface DetokenizeOptions extends PieceOptions {
  /** llama.cpp's remove_special: drop a leading BOS / trailing EOS the vocabulary adds. Default false. */
  removeSpecial?: boolean;
}

export interface StreamDecoderOptions extends PieceOptions {
  /**
   * Drop the leading space of the first piece, as detokenize does for SentencePiece vocabularies
   * (add_space_prefix). Default true, so the stream equals detokenize; pass false when decoding a
   * continuation of earlier text (generated tokens after a prompt).
   */
  stripLeadingSpace?: boolean;
}

/** Turns ids into text as they arrive; never returns part of a UTF-8 character. */
export interface StreamDecoder {
  /** The text that `id` completes (possibly ""). */
  push(id: number): string;
  /** Ends the stream: the rest, i.e. held back bytes (an incomplete character becomes U+FFFD) and pending space cleanup. */
  flush(): string;
}

export interface Tokenizer {
  readonly vocab: Vocab;
  /** The ids of `text`, as llama.cpp's llama_tokenize(text, add_special, parse_special). */
  tokenize(text: string, options?: TokenizeOptions): number[];
  /** The bytes a token stands for, as llama.cpp's llama_token_to_piece (lstrip 0). */
  tokenToPiece(id: number, options?: PieceOptions): Uint8Array;
  /** The text of `ids`, as llama.cpp's llama_detokenize (invalid UTF-8 becomes U+FFFD). */
  detokenize(ids: readonly number[], options?: DetokenizeOptions): string;
  streamDecoder(options?: StreamDecoderOptions): StreamDecoder;
}

/** How a tokenizer model encodes one raw-text fragment. */
export type FragmentEncoder =
  | { readonly kind: 'spm'; encode(fragment: string, spacePrefix: boolean, out: number[]): void }
  | { readonly kind: 'bpe'; encode(fragment: string): number[] }
  | { readonly kind: 'wpm'; encode(fragment: string, out: number[]): void };

const HIDDEN = TokenAttr.UNKNOWN | TokenAttr.CONTROL;
const EMPTY = new Uint8Array(0);

/** A tokenizer over llama.cpp's fragmenting, special tokens and detokenization; `encoder` does the model-specific part. */
export class GgufTokenizer implements Tokenizer {
  private readonly matcher: SpecialTokenMatcher;
  private readonly lookup: TokenLookup;
  private readonly pieces: (Uint8Array | undefined)[];

  constructor(
    readonly vocab: Vocab,
    private readonly encoder: FragmentEncoder,
  ) {
    this.matcher = new SpecialTokenMatcher(vocab);
    this.lookup = tokenLookup(vocab);
    this.pieces = new Array<Uint8Array | undefined>(vocab.tokens.length);
  }

  tokenize(text: string, options: TokenizeOptions = {}): number[] {
    const v = this.vocab;
    const addSpecial = options.addSpecial ?? options.addBos ?? false;
    const input = wellFormed(text);
    const fragments = this.matcher.partition(input, options.parseSpecial ?? false);
    const out: number[] = [];
    const need = (id: number | null, what: string): number => {
      if (id === null) throw new VocabError(`${v.file}: the vocabulary asks for a ${what} token but has none`);
      return id;
    };
    const enc = this.encoder;
    switch (enc.kind) {
      case 'spm': {
        if (addSpecial && v.addBos) out.push(need(v.bos, 'BOS'));
        // A space goes before the first fragment and every fragment that follows a special token.
        let prevSpecial = true;
        for (const f of fragments) {
          if (f.token !== undefined) {
            out.push(f.token);
            prevSpecial = true;
          } else {
            enc.encode(input.slice(f.start, f.end), v.addSpacePrefix && prevSpecial, out);
            prevSpecial = false;
          }
        }
        if (addSpecial && v.addEos) out.push(need(v.eos, 'EOS'));
        break;
      }
      case 'bpe': {
        if (addSpecial && v.addBos) out.push(need(v.bos, 'BOS'));
        for (const f of fragments) {
          if (f.token !== undefined) {
            out.push(f.token);
            continue;
          }
          let s = input.slice(f.start, f.end);
          if (v.escapeWhitespaces) s = s.replaceAll(' ', '\u2581');
          const ids = enc.encode(s);
          for (let k = 0; k < ids.length; k++) out.push(ids[k]!);
        }
        if (addSpecial && v.addEos) out.push(need(v.eos, 'EOS'));
        break;
      }
      case 'wpm': {
        if (addSpecial) out.push(need(v.bos, 'BOS'));
        for (const f of fragments) {
          if (f.token !== undefined) out.push(f.token);
          else enc.encode(input.slice(f.start, f.end), out);
        }
        if (addSpecial) out.push(need(v.sep, 'SEP'));
        break;
      }
    }
    return out;
  }

  tokenToPiece(id: number, options: PieceOptions = {}): Uint8Array {
    this.check(id);
    if (!options.renderSpecial && this.vocab.attrs[id]! & HIDDEN) return EMPTY;
    return this.piece(id).slice();
  }

  detokenize(ids: readonly number[], options: DetokenizeOptions = {}): string {
    const v = this.vocab;
    let first = 0;
    let last = ids.length;
    let stripLeadingSpace = v.addSpacePrefix;
    if (options.removeSpecial && v.addBos && last > 0 && ids[0] === v.bos) {
      stripLeadingSpace = false;
      first++;
    }
    if (options.removeSpecial && v.addEos && last > first && ids[last - 1] === v.eos) last--;
    const d = new Detokenizer(this, options.renderSpecial ?? false, stripLeadingSpace, v.cleanSpaces, false);
    let s = '';
    for (let i = first; i < last; i++) s += d.push(ids[i]!);
    return s + d.flush();
  }

  streamDecoder(options: StreamDecoderOptions = {}): StreamDecoder {
    const strip = (options.stripLeadingSpace ?? true) && this.vocab.addSpacePrefix;
    return new Detokenizer(this, options.renderSpecial ?? false, strip, this.vocab.cleanSpaces, true);
  }

  /** The piece bytes of a token as rendered with special tokens shown (llama.cpp's cache_token_to_piece); internal, not a copy. */
  piece(id: number): Uint8Array {
    let p = this.pieces[id];
    if (!p) {
      p = this.computePiece(id);
      this.pieces[id] = p;
    }
    return p;
  }

  /** Whether the token renders as nothing unless special tokens are shown. */
  hidden(id: number): boolean {
    return (this.vocab.attrs[id]! & HIDDEN) !== 0;
  }

  check(id: number): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocab.tokens.length) {
      throw new RangeError(`token id ${id} is outside the vocabulary (0..${this.vocab.tokens.length - 1})`);
    }
  }

  private computePiece(id: number): Uint8Array {
    const v = this.vocab;
    const attr = v.attrs[id]!;
    const text = this.lookup.bytesOf(id);
    if (attr & (HIDDEN | TokenAttr.USER_DEFINED)) return text;
    if (attr & TokenAttr.NORMAL) {
      if (this.encoder.kind === 'bpe' && !v.escapeWhitespaces) return byteLevelDecode(tokenText(v, id));
      return unescapeSpaces(text);
    }
    if (attr & TokenAttr.BYTE) {
      if (this.encoder.kind === 'wpm') throw new VocabError(`${v.file}: byte token ${id} in a WordPiece vocabulary`);
      // strtol(text.substr(3, 2), 16)
      const hex = parseInt(tokenText(v, id).substring(3, 5), 16);
      return Uint8Array.of(Number.isNaN(hex) ? 0 : hex & 0xff);
    }
    return EMPTY;
  }
}

/** The bytes with every U+2581 (E2 96 81) turned back into a space. */
function unescapeSpaces(text: Uint8Array): Uint8Array {
  let count = 0;
  for (let i = 0; i + 2 < text.length; i++) {
    if (text[i] === 0xe2 && text[i + 1] === 0x96 && text[i + 2] === 0x81) count++;
  }
  if (count === 0) return text;
  const out = new Uint8Array(text.length - 2 * count);
  let n = 0;
  for (let i = 0; i < text.length;) {
    if (i + 2 < text.length && text[i] === 0xe2 && text[i + 1] === 0x96 && text[i + 2] === 0x81) {
      out[n++] = 0x20;
      i += 3;
    } else out[n++] = text[i++]!;
  }
  return out;
}

type Sink = (b: number) => void;

const SPACE = 0x20;
const APOSTROPHE = 0x27;

/**
 * llama_detokenize's clean_spaces as three streaming passes (each holds back the bytes its rules
 * still depend on), so streamed text equals detokenized text byte for byte.
 * Pass 1 drops a space before ? ! . , ; pass 2 turns " ' " into "'"; pass 3 drops the space
 * before 's 'm 're 've.
 */
class CleanSpaces {
  // Pass 1 state.
  private p1First = true;
  private p1Held = -1;
  private p1Prev = -1;
  // Pass 2 state (one byte of lookahead).
  private p2Queue: number[] = [];
  private p2First = true;
  private p2Held = -1;
  private p2Prev = -1;
  private p2Skip = false;
  // Pass 3 state (two bytes of lookahead).
  private p3Queue: number[] = [];
  private p3First = true;
  private p3Held = -1;
  private p3Prev = -1;

  constructor(private readonly sink: Sink) {}

  push(x: number): void {
    if (this.p1First) {
      this.p1First = false;
    } else if (!(this.p1Prev === SPACE && (x === 0x3f || x === 0x21 || x === 0x2e || x === 0x2c))) {
      this.pass2(this.p1Held);
    }
    this.p1Held = x;
    this.p1Prev = x;
  }

  end(): void {
    if (this.p1Held >= 0) this.pass2(this.p1Held);
    this.p1Held = -1;
    while (this.p2Queue.length > 0) this.step2();
    if (this.p2Held >= 0) this.pass3(this.p2Held);
    this.p2Held = -1;
    while (this.p3Queue.length > 0) this.step3();
    if (this.p3Held >= 0) this.sink(this.p3Held);
    this.p3Held = -1;
  }

  private pass2(x: number): void {
    this.p2Queue.push(x);
    while (this.p2Queue.length >= 2) this.step2();
  }

  private step2(): void {
    const x = this.p2Queue.shift()!;
    if (this.p2First) {
      this.p2First = false;
      this.p2Held = x;
      this.p2Prev = x;
      return;
    }
    if (this.p2Skip) {
      // llama.cpp overwrote this byte (a space) with NUL and stepped over it.
      this.p2Skip = false;
      this.p2Prev = 0;
      return;
    }
    if (x === APOSTROPHE && this.p2Queue.length > 0 && this.p2Prev === SPACE && this.p2Queue[0] === SPACE) {
      this.p2Skip = true;
    } else {
      this.pass3(this.p2Held);
    }
    this.p2Held = x;
    this.p2Prev = x;
  }

  private pass3(x: number): void {
    this.p3Queue.push(x);
    while (this.p3Queue.length >= 3) this.step3();
  }

  private step3(): void {
    const q = this.p3Queue;
    const x = q.shift()!;
    if (this.p3First) {
      this.p3First = false;
      this.p3Held = x;
      this.p3Prev = x;
      return;
    }
    let drop = false;
    if (this.p3Prev === SPACE && x === APOSTROPHE && q.length > 0) {
      const x1 = q[0]!;
      if (x1 === 0x74 || x1 === 0x64) {
        // " 't", " 'd": kept
      } else if (x1 === 0x73 || x1 === 0x6d) {
        drop = true; // " 's", " 'm"
      } else if (q.length > 1) {
        const x2 = q[1]!;
        if ((x1 === 0x72 && x2 === 0x65) || (x1 === 0x76 && x2 === 0x65)) drop = true; // " 're", " 've"
      }
    }
    if (!drop) this.sink(this.p3Held);
    this.p3Held = x;
    this.p3Prev = x;
  }
}

/** Pieces → (space cleanup) → UTF-8 decoding that holds incomplete characters back. */
class Detokenizer implements StreamDecoder {
  private readonly bytes = new ByteWriter(64);
  private readonly clean: CleanSpaces | undefined;
  private readonly decoder = new TextDecoder('utf-8', { ignoreBOM: true });
  private stripSpace: boolean;

  constructor(
    private readonly tok: GgufTokenizer,
    private readonly renderSpecial: boolean,
    stripLeadingSpace: boolean,
    cleanSpaces: boolean,
    private readonly streaming: boolean,
  ) {
    this.stripSpace = stripLeadingSpace;
    if (cleanSpaces) this.clean = new CleanSpaces((b) => this.bytes.push(b));
  }

  push(id: number): string {
    this.tok.check(id);
    const strip = this.stripSpace;
    this.stripSpace = false;
    if (!this.renderSpecial && this.tok.hidden(id)) return '';
    const p = this.tok.piece(id);
    const start = strip && p.length > 0 && p[0] === SPACE ? 1 : 0;
    if (this.clean) for (let i = start; i < p.length; i++) this.clean.push(p[i]!);
    else this.bytes.append(p, start);
    return this.streaming ? this.drain(false) : '';
  }

  flush(): string {
    this.clean?.end();
    return this.drain(true);
  }

  private drain(final: boolean): string {
    const b = this.bytes;
    if (b.length === 0 && !final) return '';
    const s = this.decoder.decode(b.bytes.subarray(0, b.length), { stream: !final });
    b.reset();
    return s;
  }
}
