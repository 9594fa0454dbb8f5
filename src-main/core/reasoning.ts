/**
 * Reasoning models write their thinking between <think> and </think> before the answer (Qwen 3,
 * DeepSeek-R1; gpt-oss's channels are rewritten so by harmony.ts). The APIs return it apart from
 * the answer, as llama.cpp's `reasoning_content` and Ollama's `thinking`: this splits an output
 * stream into the two. Some templates (DeepSeek-R1's, or a Qwen 3 told to think) end the prompt
 * with the opening tag, so the output starts inside the block; the rendered prompt says so.
 */

export const THINK_OPEN = '<think>';
export const THINK_CLOSE = '</think>';

/** Whether a rendered prompt ends inside a reasoning block: its answer starts as reasoning. */
export function promptOpensThinking(prompt: string): boolean {
  return prompt.trimEnd().endsWith(THINK_OPEN);
}

export interface ReasoningPiece {
  reasoning: string;
  content: string;
}

/**
 * Splits an output, as it streams, into the reasoning block at its start and the content after
 * it. Only a block at the very start counts (a <think> later on is the answer's own text). The
 * reasoning's surrounding whitespace and the blank lines before the answer are dropped; text
 * that may be the start of a tag, or whitespace before one, is held back until it is known.
 * An output that never opens a block comes through as it is.
 */
export class ReasoningSplitter {
  #state: 'start' | 'thinking' | 'answer' | 'content';
  #pending = '';
  /** No reasoning text shown yet: its leading whitespace is dropped. */
  #reasoningStart = true;

  /** `opened`: the prompt ended with the opening tag, so the output starts inside the block. */
  constructor(opened: boolean) {
    this.#state = opened ? 'thinking' : 'start';
  }

  /** Whether the output so far ends in the reasoning (its closing tag and the blank lines after it included). */
  get reasoning(): boolean {
    return this.#state === 'thinking' || this.#state === 'answer';
  }

  push(text: string): ReasoningPiece {
    const out: ReasoningPiece = { reasoning: '', content: '' };
    this.#pending += text;
    if (this.#state === 'start') {
      const trimmed = this.#pending.trimStart();
      // Only whitespace, or the opening tag being written: wait for more.
      if (trimmed.length < THINK_OPEN.length && THINK_OPEN.startsWith(trimmed)) return out;
      if (trimmed.startsWith(THINK_OPEN)) {
        this.#state = 'thinking';
        this.#pending = trimmed.slice(THINK_OPEN.length);
      } else {
        this.#state = 'content';
      }
    }
    if (this.#state === 'thinking') {
      const close = this.#pending.indexOf(THINK_CLOSE);
      if (close === -1) {
        let keep = this.#pending.length - partialTag(this.#pending, THINK_CLOSE);
        while (keep > 0 && /\s/.test(this.#pending[keep - 1]!)) keep--;
        out.reasoning = this.#reasoning(this.#pending.slice(0, keep));
        this.#pending = this.#pending.slice(keep);
        return out;
      }
      out.reasoning = this.#reasoning(this.#pending.slice(0, close).trimEnd());
      this.#pending = this.#pending.slice(close + THINK_CLOSE.length);
      this.#state = 'answer';
    }
    if (this.#state === 'answer') {
      // The blank lines between the block and the answer.
      this.#pending = this.#pending.trimStart();
      if (this.#pending === '') return out;
      this.#state = 'content';
    }
    out.content = this.#pending;
    this.#pending = '';
    return out;
  }

  /** The output ended: what was held back. A block never closed is all reasoning (a model cut off mid-thought). */
  end(): ReasoningPiece {
    const rest = this.#pending;
    this.#pending = '';
    if (this.#state === 'thinking') return { reasoning: this.#reasoning(rest.trimEnd()), content: '' };
    return { reasoning: '', content: this.#state === 'answer' ? '' : rest };
  }

  #reasoning(text: string): string {
    if (this.#reasoningStart) text = text.trimStart();
    if (text !== '') this.#reasoningStart = false;
    return text;
  }
}

/** How many characters at the end of `text` begin `tag`. */
function partialTag(text: string, tag: string): number {
  for (let n = Math.min(text.length, tag.length - 1); n > 0; n--) {
    if (tag.startsWith(text.slice(text.length - n))) return n;
  }
  return 0;
}
