/**
 * The text a client sees of a generation: tokens decoded as they come (never splitting a
 * character), cut before the first stop string (text that may start one held back meanwhile), and
 * each token's log-probability released together with its text.
 */
import type { StreamDecoder } from '../../core/tokenizer/index';
import { tokenChoice, type TokenChoice } from './logprobs';
import { StopScanner } from './stop-strings';

/** Text to show now, with the tokens it completes and where each token's text starts in the whole output. */
export interface Piece {
  text: string;
  tokens: TokenChoice[];
  offsets: number[];
}

interface PendingToken {
  choice: TokenChoice;
  /** Its text's range in the decoded output. */
  start: number;
  end: number;
}

export class OutputText {
  readonly #decoder: StreamDecoder;
  readonly #scanner: StopScanner;
  /** Length of the decoded output (the shown text is a prefix of it). */
  #decoded = 0;
  #text = '';
  readonly #pending: PendingToken[] = [];
  readonly #tokens: TokenChoice[] = [];
  readonly #offsets: number[] = [];

  /** `decoder`: the model's answer decoder (ModelText.answerDecoder); `shownAlternatives`: how many of each token's alternatives to report. */
  constructor(
    decoder: StreamDecoder,
    stops: readonly string[],
    private readonly shownAlternatives: number,
  ) {
    this.#decoder = decoder;
    this.#scanner = new StopScanner(stops);
  }

  /** Whether a stop string ended the output: later tokens are ignored. */
  get stopped(): boolean {
    return this.#scanner.stopped;
  }

  /** The stop string that ended the output; null: none did. */
  get stopWord(): string | null {
    return this.#scanner.word;
  }

  /** Everything shown so far. */
  get text(): string {
    return this.#text;
  }

  /** The tokens released so far, and where each one's text starts. */
  get tokens(): { tokens: TokenChoice[]; offsets: number[] } {
    return { tokens: this.#tokens, offsets: this.#offsets };
  }

  /** A generated token (not an end-of-generation one), with its log-probability and the engine's top list when asked for. */
  push(id: number, logprob = 0, top: readonly [number, number][] = []): Piece {
    if (this.stopped) return { text: '', tokens: [], offsets: [] };
    const decoded = this.#decoder.push(id);
    const start = this.#decoded;
    this.#decoded += decoded.length;
    this.#pending.push({ choice: tokenChoice(id, logprob, top, this.shownAlternatives), start, end: this.#decoded });
    return this.#show(this.#scanner.push(decoded), false);
  }

  /** The generation ended: the rest of the text (bytes of an unfinished character, text held back). */
  end(): Piece {
    if (this.stopped) return { text: '', tokens: [], offsets: [] };
    const rest = this.#decoder.flush();
    const last = this.#pending.at(-1);
    if (last) last.end += rest.length;
    const shown = this.#scanner.push(rest);
    return this.#show(this.stopped ? shown : shown + this.#scanner.end(), true);
  }

  /**
   * Appends `text` to the output and releases the tokens whose text is all shown; once the output
   * is over (`final`, or cut by a stop string), every token whose text begins before its end.
   */
  #show(text: string, final: boolean): Piece {
    this.#text += text;
    const shown = this.#text.length;
    const releasable = (t: PendingToken) => (this.stopped ? t.start < shown : final || t.end <= shown);
    let n = 0;
    while (n < this.#pending.length && releasable(this.#pending[n]!)) n++;
    const released = this.#pending.splice(0, n);
    if (this.stopped) this.#pending.length = 0;
    const piece = { text, tokens: released.map((t) => t.choice), offsets: released.map((t) => t.start) };
    this.#tokens.push(...piece.tokens);
    this.#offsets.push(...piece.offsets);
    return piece;
  }
}
