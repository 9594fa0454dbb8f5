/**
 * gpt-oss answers in OpenAI's harmony format: each message is a header and a body,
 *   <|channel|>analysis<|message|>…reasoning…<|end|><|start|>assistant<|channel|>final<|message|>…answer…
 * ending at <|return|> (an end-of-generation token). Gufo shows reasoning the way other models
 * write it, between <think> and </think> before the answer, so the chat, the CLI and the OpenAI
 * server handle both alike; a message addressed to a function (a tool call) is kept as
 * `to=functions.NAME<|message|>arguments`; on the way back into a prompt, the reasoning goes to the template's
 * `thinking` field (which drops it from earlier turns) and the answer to `content`.
 */
import { THINK_CLOSE, THINK_OPEN } from './reasoning';
import type { StreamDecoder, Tokenizer } from './tokenizer/index';

/** How a call appears in the rewritten text: the header's recipient, then <|message|> and the arguments (tool-calls/syntax.ts parses it). */
export const HARMONY_CALL_MARKER = 'to=functions.';

const START = '<|start|>';
const CHANNEL = '<|channel|>';
const MESSAGE = '<|message|>';
const END = '<|end|>';
/** Ends of generation; callers stop before them, but a stream that shows them ends its message there. */
const FINISH = ['<|return|>', '<|call|>'];
const MARKERS = [START, CHANNEL, MESSAGE, END, ...FINISH];

/**
 * Rewrites harmony text, as it streams, into `<think>reasoning</think>answer`: messages on the
 * final channel are the answer, every other channel's is reasoning (consecutive ones joined by a
 * blank line). A marker split across pushes is held back until it is whole.
 */
export class HarmonyRewriter {
  /** Text not yet handled: a possible marker's start, or a header being read. */
  #pending = '';
  /** 'header': between <|start|>/<|channel|> and <|message|>; 'body': a message's text; 'idle': after <|end|>. */
  #state: 'header' | 'body' | 'idle' = 'header';
  #header = '';
  #inThink = false;
  #answering = false;
  /** No text of the current message shown yet: its leading whitespace is dropped. */
  #bodyStart = false;

  push(text: string): string {
    this.#pending += text;
    let out = '';
    for (;;) {
      const found = nextMarker(this.#pending);
      if (!found) break;
      out += this.#text(this.#pending.slice(0, found.at));
      out += this.#marker(found.marker);
      this.#pending = this.#pending.slice(found.at + found.marker.length);
    }
    const keep = heldBack(this.#pending);
    out += this.#text(this.#pending.slice(0, this.#pending.length - keep));
    this.#pending = this.#pending.slice(this.#pending.length - keep);
    return out;
  }

  /** The stream ended: what is left. Reasoning cut off stays open, as a model stopped mid-thought leaves it. */
  flush(): string {
    let out = this.#text(this.#pending);
    this.#pending = '';
    // Text without any header is shown as it is rather than lost.
    if (this.#state === 'header' && this.#header !== '') out += this.#header;
    this.#header = '';
    return out;
  }

  #text(text: string): string {
    if (text === '') return '';
    if (this.#state === 'header') {
      this.#header += text;
      return '';
    }
    if (this.#state !== 'body') return '';
    if (this.#bodyStart) {
      text = text.trimStart();
      this.#bodyStart = text === '';
    }
    return text;
  }

  #marker(marker: string): string {
    if (marker === START || marker === CHANNEL) {
      if (this.#state !== 'header') this.#header = '';
      this.#state = 'header';
      this.#header += marker;
      return '';
    }
    if (marker === MESSAGE) {
      const channel = /<\|channel\|>\s*([^\s<]*)/.exec(this.#header)?.[1] ?? '';
      // A call: "to=functions.NAME" in the header (after the role or the channel); its body is the arguments.
      const recipient = /\bto=functions\.([^\s<]+)/.exec(this.#header)?.[1];
      this.#header = '';
      this.#state = 'body';
      this.#bodyStart = true;
      if (recipient !== undefined) return this.#beginAnswer() + `${HARMONY_CALL_MARKER}${recipient}${MESSAGE}`;
      return channel === 'final' ? this.#beginAnswer() : this.#beginThought();
    }
    // <|end|>, <|return|>, <|call|>: the message is over.
    this.#state = 'idle';
    return '';
  }

  #beginThought(): string {
    if (this.#answering) return '';
    const opening = this.#inThink ? '\n\n' : THINK_OPEN;
    this.#inThink = true;
    return opening;
  }

  #beginAnswer(): string {
    this.#answering = true;
    if (!this.#inThink) return '';
    this.#inThink = false;
    return THINK_CLOSE;
  }
}

/** The first whole marker in `text`. */
function nextMarker(text: string): { at: number; marker: string } | null {
  let best: { at: number; marker: string } | null = null;
  for (const marker of MARKERS) {
    const at = text.indexOf(marker);
    if (at !== -1 && (best === null || at < best.at)) best = { at, marker };
  }
  return best;
}

/** How many characters at the end of `text` could begin a marker. */
function heldBack(text: string): number {
  for (let n = Math.min(text.length, Math.max(...MARKERS.map((m) => m.length)) - 1); n > 0; n--) {
    const tail = text.slice(text.length - n);
    if (MARKERS.some((m) => m.startsWith(tail))) return n;
  }
  return 0;
}

/** The chat-template family that writes harmony: detectTemplateFamily's name for gpt-oss's template. */
export const HARMONY_TEMPLATE = 'gpt-oss';

/**
 * The decoder of a model's answers, by its chat template's family: a harmony model's control
 * tokens shown (they carry the channels) and rewritten as HarmonyRewriter does; any other
 * model's text as it is.
 */
export function answerDecoder(tokenizer: Tokenizer, templateName: string, stripLeadingSpace: boolean): StreamDecoder {
  if (templateName !== HARMONY_TEMPLATE) return tokenizer.streamDecoder({ stripLeadingSpace });
  const decoder = tokenizer.streamDecoder({ stripLeadingSpace, renderSpecial: true });
  const rewriter = new HarmonyRewriter();
  return {
    push: (id) => rewriter.push(decoder.push(id)),
    flush: () => rewriter.push(decoder.flush()) + rewriter.flush(),
  };
}

/** An answer as the chat keeps it, split into the reasoning before it (if any) and the answer. */
export function splitThinking(content: string): { thinking: string | null; answer: string } {
  const trimmed = content.trimStart();
  if (!trimmed.startsWith(THINK_OPEN)) return { thinking: null, answer: content };
  const close = trimmed.indexOf(THINK_CLOSE);
  if (close === -1) return { thinking: trimmed.slice(THINK_OPEN.length).trim(), answer: '' };
  return {
    thinking: trimmed.slice(THINK_OPEN.length, close).trim(),
    answer: trimmed.slice(close + THINK_CLOSE.length).trimStart(),
  };
}
