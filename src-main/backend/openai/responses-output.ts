/**
 * A Responses API answer's `output` items, built as the answer streams: a `reasoning` item when
 * the model reasons, its text both as one `reasoning_text` part of its content (the raw form of
 * OpenAI's open-weight models, which vLLM and OpenAI's clients read) and as its one `summary_text`
 * (the form Ollama answers, which the Vercel AI SDK and Codex read: Gufo writes no summary of its
 * own); a `message` with one `output_text` part for the text, then a `function_call` item per
 * call. Each step is also an
 * event (`response.output_item.added`, `response.output_text.delta`, …) for a stream; a whole
 * answer is the same steps with no one listening, so both forms hold the same items.
 */
import { randomBytes } from 'node:crypto';
import type { AnsweredToolCallDelta } from './tools';

type Status = 'in_progress' | 'completed' | 'incomplete';

interface TextPart {
  type: 'output_text';
  text: string;
  annotations: [];
  logprobs: [];
}

export interface MessageItem {
  type: 'message';
  id: string;
  status: Status;
  role: 'assistant';
  content: TextPart[];
}

interface ReasoningPart {
  type: 'reasoning_text';
  text: string;
}

interface SummaryPart {
  type: 'summary_text';
  text: string;
}

export interface ReasoningItem {
  type: 'reasoning';
  id: string;
  status: Status;
  summary: SummaryPart[];
  content: ReasoningPart[];
}

export interface FunctionCallItem {
  type: 'function_call';
  id: string;
  call_id: string;
  name: string;
  arguments: string;
  status: Status;
}

export type OutputItem = ReasoningItem | MessageItem | FunctionCallItem;

/** An event as the Responses API streams it, before its sequence number. */
export type ResponseEvent = { type: string } & Record<string, unknown>;

export class ResponseOutput {
  readonly items: OutputItem[] = [];
  /** The item being written (the last one), until it is done. */
  #open: OutputItem | null = null;
  /** Calls by the index the tool-call parser gives them. */
  readonly #calls: FunctionCallItem[] = [];

  constructor(private readonly emit: (event: ResponseEvent) => void = () => {}) {}

  /** Reasoning, which comes before the answer. */
  reasoning(delta: string): void {
    if (delta === '') return;
    const item = this.#open?.type === 'reasoning' ? this.#open : this.#openReasoning();
    item.content[0]!.text += delta;
    item.summary[0]!.text += delta;
    const where = this.#where(item);
    this.emit({ type: 'response.reasoning_summary_text.delta', ...where, summary_index: 0, delta });
    this.emit({ type: 'response.reasoning_text.delta', ...where, content_index: 0, delta });
  }

  /** Answer text to show (the parser sends all of it before the first call). */
  text(delta: string): void {
    if (delta === '') return;
    const message = this.#open?.type === 'message' ? this.#open : this.#openMessage();
    const part = message.content[0]!;
    part.text += delta;
    this.emit({
      type: 'response.output_text.delta',
      ...this.#where(message),
      content_index: 0,
      delta,
      logprobs: [],
    });
  }

  /** A piece of a call: its id and name start a new item, then its arguments come in fragments. */
  call(delta: AnsweredToolCallDelta): void {
    if (delta.name !== undefined) {
      this.#close('completed');
      const item: FunctionCallItem = {
        type: 'function_call',
        id: itemId('fc'),
        call_id: delta.id!,
        name: delta.name,
        arguments: '',
        status: 'in_progress',
      };
      this.#calls[delta.index] = item;
      this.#add(item);
    }
    const item = this.#calls[delta.index];
    if (!item || delta.arguments === '') return;
    item.arguments += delta.arguments;
    this.emit({ type: 'response.function_call_arguments.delta', ...this.#where(item), delta: delta.arguments });
  }

  /** The answer ended (`incomplete`: cut short by its length limit, so its last item is too): the items. */
  end(incomplete: boolean): OutputItem[] {
    // A message, even empty, when the answer wrote nothing but reasoning: clients read its text.
    if (this.items.every((item) => item.type === 'reasoning')) this.#openMessage();
    this.#close(incomplete ? 'incomplete' : 'completed');
    return this.items;
  }

  #openMessage(): MessageItem {
    this.#close('completed');
    const message: MessageItem = {
      type: 'message',
      id: itemId('msg'),
      status: 'in_progress',
      role: 'assistant',
      content: [],
    };
    this.#add(message);
    const part: TextPart = { type: 'output_text', text: '', annotations: [], logprobs: [] };
    message.content.push(part);
    this.emit({ type: 'response.content_part.added', ...this.#where(message), content_index: 0, part: { ...part } });
    return message;
  }

  #openReasoning(): ReasoningItem {
    this.#close('completed');
    const item: ReasoningItem = {
      type: 'reasoning',
      id: itemId('rs'),
      status: 'in_progress',
      summary: [],
      content: [],
    };
    this.#add(item);
    const where = this.#where(item);
    const summary: SummaryPart = { type: 'summary_text', text: '' };
    item.summary.push(summary);
    this.emit({ type: 'response.reasoning_summary_part.added', ...where, summary_index: 0, part: { ...summary } });
    const part: ReasoningPart = { type: 'reasoning_text', text: '' };
    item.content.push(part);
    this.emit({ type: 'response.content_part.added', ...where, content_index: 0, part: { ...part } });
    return item;
  }

  #add(item: OutputItem): void {
    this.items.push(item);
    this.#open = item;
    this.emit({ type: 'response.output_item.added', output_index: this.items.length - 1, item: { ...item } });
  }

  /** The open item is done: its last events, and its status. */
  #close(status: 'completed' | 'incomplete'): void {
    const item = this.#open;
    if (!item) return;
    this.#open = null;
    item.status = status;
    const where = this.#where(item);
    if (item.type === 'message') {
      const part = item.content[0]!;
      this.emit({ type: 'response.output_text.done', ...where, content_index: 0, text: part.text, logprobs: [] });
      this.emit({ type: 'response.content_part.done', ...where, content_index: 0, part });
    } else if (item.type === 'reasoning') {
      const summary = item.summary[0]!;
      this.emit({ type: 'response.reasoning_summary_text.done', ...where, summary_index: 0, text: summary.text });
      this.emit({ type: 'response.reasoning_summary_part.done', ...where, summary_index: 0, part: summary });
      const part = item.content[0]!;
      this.emit({ type: 'response.reasoning_text.done', ...where, content_index: 0, text: part.text });
      this.emit({ type: 'response.content_part.done', ...where, content_index: 0, part });
    } else {
      this.emit({
        type: 'response.function_call_arguments.done',
        ...where,
        name: item.name,
        arguments: item.arguments,
      });
    }
    this.emit({ type: 'response.output_item.done', output_index: where.output_index, item });
  }

  #where(item: OutputItem): { item_id: string; output_index: number } {
    return { item_id: item.id, output_index: this.items.indexOf(item) };
  }
}

function itemId(prefix: 'rs' | 'msg' | 'fc'): string {
  return `${prefix}_${randomBytes(12).toString('hex')}`;
}
