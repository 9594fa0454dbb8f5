/**
 * An answer's text split, as it streams, into content and tool calls: text from the first call
 * marker on is held as the calls; text that may be the start of a marker is held back until the
 * next piece shows whether it is (as stop strings are). Calls that do not parse are shown as the
 * content they were.
 */
import type { ParsedToolCall, ToolCallSyntax } from './syntax';

export interface ToolCallSplit {
  /** The content not shown yet. */
  content: string;
  /** The calls, or null when the answer made none. */
  calls: ParsedToolCall[] | null;
}

export class ToolCallStream {
  #held = '';
  /** The text from the first marker on, once one was seen. */
  #calls: string | null = null;

  constructor(private readonly syntax: ToolCallSyntax) {}

  /** Adds answer text; answers the content that may be shown now. */
  push(text: string): string {
    if (this.#calls !== null) {
      this.#calls += text;
      return '';
    }
    const pending = this.#held + text;
    let first = -1;
    for (const marker of this.syntax.markers) {
      const at = pending.indexOf(marker);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    if (first >= 0) {
      this.#held = '';
      this.#calls = pending.slice(first);
      return pending.slice(0, first);
    }
    const keep = partialMarkerLength(pending, this.syntax.markers);
    this.#held = pending.slice(pending.length - keep);
    return pending.slice(0, pending.length - keep);
  }

  /** The answer ended: the rest of its content, and its calls. */
  end(): ToolCallSplit {
    const held = this.#held;
    this.#held = '';
    if (this.#calls === null) return { content: held, calls: null };
    const calls = this.syntax.parse(this.#calls);
    return calls ? { content: '', calls } : { content: this.#calls, calls: null };
  }
}

/** The whole of an answer split at once (what a stream of it would give). */
export function splitToolCalls(syntax: ToolCallSyntax, text: string): ToolCallSplit {
  const stream = new ToolCallStream(syntax);
  const shown = stream.push(text);
  const rest = stream.end();
  return { content: shown + rest.content, calls: rest.calls };
}

/** The length of the longest end of `text` that is the start of one of `markers` (and not a whole one). */
export function partialMarkerLength(text: string, markers: readonly string[]): number {
  let longest = 0;
  for (const marker of markers) {
    for (let n = Math.min(marker.length - 1, text.length); n > longest; n--) {
      if (text.endsWith(marker.slice(0, n))) {
        longest = n;
        break;
      }
    }
  }
  return longest;
}
