/**
 * An answer's text split, as it streams, into content and tool calls: text from the first call
 * marker on is held as the calls; text that may be the start of a marker is held back until the
 * next piece shows whether it is (as stop strings are). Each call is streamed as soon as its name
 * is whole, then its arguments fragment by fragment (call-scan.ts): the fragments of a call join
 * into its final arguments. Calls that do not parse, when none was streamed, are shown as the
 * content they were; calls cut short after one was streamed stay calls, with the arguments written.
 */
import type { PartialCall } from './call-scan';
import type { ParsedToolCall, ToolCallSyntax } from './syntax';

/** A piece of one call: its name the first time, then fragments of its arguments. */
export interface ToolCallDelta {
  index: number;
  /** Set on the call's first delta only. */
  name?: string;
  arguments: string;
}

/** What a piece of answer text adds: content to show, and pieces of calls. */
export interface ToolCallPiece {
  content: string;
  calls: ToolCallDelta[];
}

export interface ToolCallSplit {
  /** The content not shown yet. */
  content: string;
  /** The calls, or null when the answer made none. */
  calls: ParsedToolCall[] | null;
  /** The calls are whole (false: cut short, the arguments as far as they were written). */
  complete: boolean;
}

export class ToolCallStream {
  #held = '';
  /** The text from the first marker on, once one was seen. */
  #calls: string | null = null;
  /** The calls streamed so far: each one's name and the arguments sent. */
  readonly #sent: ParsedToolCall[] = [];

  /** `opening`: the answer starts inside its calls, after this text (a forced call's marker, put in the prompt). */
  constructor(
    private readonly syntax: ToolCallSyntax,
    opening: string | null = null,
  ) {
    this.#calls = opening;
  }

  /** Adds answer text; answers the content that may be shown now and the calls' new pieces. */
  push(text: string): ToolCallPiece {
    if (this.#calls !== null) {
      this.#calls += text;
      return { content: '', calls: this.#newDeltas(this.syntax.read(this.#calls).calls) };
    }
    const pending = this.#held + text;
    let first = -1;
    for (const marker of this.syntax.markers) {
      const at = pending.indexOf(marker);
      if (at >= 0 && (first < 0 || at < first)) first = at;
    }
    if (first >= 0) {
      this.#held = '';
      this.#calls = '';
      return { content: pending.slice(0, first), calls: this.push(pending.slice(first)).calls };
    }
    const keep = partialMarkerLength(pending, this.syntax.markers);
    this.#held = pending.slice(pending.length - keep);
    return { content: pending.slice(0, pending.length - keep), calls: [] };
  }

  /** The answer ended: the rest of its content, its calls, and the calls' last pieces. */
  end(): ToolCallSplit & { deltas: ToolCallDelta[] } {
    const held = this.#held;
    this.#held = '';
    if (this.#calls === null) return { content: held, calls: null, complete: true, deltas: [] };
    const read = this.syntax.read(this.#calls);
    if (read.whole) {
      const deltas = this.#newDeltas(read.calls);
      return {
        content: '',
        calls: read.calls.map((c) => ({ name: c.name!, arguments: c.arguments })),
        complete: true,
        deltas,
      };
    }
    if (this.#sent.length > 0)
      return { content: '', calls: this.#sent.map((c) => ({ ...c })), complete: false, deltas: [] };
    return { content: this.#calls, calls: null, complete: true, deltas: [] };
  }

  /** The pieces of `calls` not streamed yet: a call starts once its name is whole. */
  #newDeltas(calls: readonly PartialCall[]): ToolCallDelta[] {
    const deltas: ToolCallDelta[] = [];
    calls.forEach((call, index) => {
      let sent = this.#sent[index];
      if (!sent) {
        if (call.name === null || index !== this.#sent.length) return;
        sent = this.#sent[index] = { name: call.name, arguments: '' };
        deltas.push({ index, name: call.name, arguments: '' });
      }
      // Always an extension of what was sent (call-scan.ts); the guard keeps a malformed call from garbling it.
      if (call.arguments.length <= sent.arguments.length || !call.arguments.startsWith(sent.arguments)) return;
      const fragment = call.arguments.slice(sent.arguments.length);
      sent.arguments = call.arguments;
      const last = deltas.at(-1);
      if (last?.index === index) last.arguments += fragment;
      else deltas.push({ index, arguments: fragment });
    });
    return deltas;
  }
}

/** The whole of an answer split at once (what a stream of it would give). */
export function splitToolCalls(syntax: ToolCallSyntax, text: string): ToolCallSplit {
  const stream = new ToolCallStream(syntax);
  const shown = stream.push(text).content;
  const { content, calls, complete } = stream.end();
  return { content: shown + content, calls, complete };
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
