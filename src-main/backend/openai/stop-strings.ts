/**
 * Stop strings over streamed text: the output ends just before the first occurrence of any of
 * them. Text that could be the start of one is held back until the next piece shows whether it is,
 * so a stream never shows part of a stop string.
 */
export class StopScanner {
  #held = '';
  #stopped = false;
  #word: string | null = null;

  constructor(private readonly stops: readonly string[]) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  /** The stop string that ended the output (llama.cpp reports it); null while none has. */
  get word(): string | null {
    return this.#word;
  }

  /** Adds generated text; answers what may be shown now. After a stop, everything is dropped. */
  push(text: string): string {
    if (this.#stopped) return '';
    const pending = this.#held + text;
    let cut = -1;
    for (const stop of this.stops) {
      const at = pending.indexOf(stop);
      if (at >= 0 && (cut < 0 || at < cut)) {
        cut = at;
        this.#word = stop;
      }
    }
    if (cut >= 0) {
      this.#stopped = true;
      this.#held = '';
      return pending.slice(0, cut);
    }
    const keep = this.#partialStopLength(pending);
    this.#held = pending.slice(pending.length - keep);
    return pending.slice(0, pending.length - keep);
  }

  /** The output ended without a stop string: the text held back. */
  end(): string {
    const rest = this.#held;
    this.#held = '';
    return rest;
  }

  /** The longest end of `text` that is the start of a stop string (and not a whole one). */
  #partialStopLength(text: string): number {
    let longest = 0;
    for (const stop of this.stops) {
      for (let n = Math.min(stop.length - 1, text.length); n > longest; n--) {
        if (text.endsWith(stop.slice(0, n))) {
          longest = n;
          break;
        }
      }
    }
    return longest;
  }
}
