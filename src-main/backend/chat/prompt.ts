/**
 * A chat as the model sees it: the branch rendered in the chat's prompt format (the model's chat
 * template, plain completion, or a built-in family) and tokenized, and what is left out when it
 * outgrows the context.
 */
import type { ContextUsage, MessageRole } from '../../../src-preload/api';
import { chatTemplateFor, renderChat, stopTokenIds, type ChatMessage, type ChatTool } from '../../core/chat-template';
import { BUILTIN_TEMPLATES } from '../../core/chat-templates/builtin';
import { answerDecoder } from '../../core/harmony';
import { completionText, type PromptFormat } from '../../core/prompt-format';
import { modelToolCalls, showingMarkers, toolTurnsAsText, withToolsInText, type ModelToolCalls } from '../../core/tool-calls/index';
import { createTokenizer, readVocab, type StreamDecoder, type Tokenizer, type Vocab } from '../../core/tokenizer/index';
import { fewestTokens } from '../../core/tokenizer/token-bound';
import { openGguf } from '../../node/gguf-io';

export const CONTEXT_POLICY =
  'Keeps the system prompt and the newest messages. When the conversation no longer fits the context ' +
  'with room for the answer (the smaller of the answer length limit and a quarter of the context), ' +
  'the oldest messages are left out of the prompt, a whole exchange at a time; they are not deleted. ' +
  'A newest message too long to fit even on its own is an error.';

/** The tokenizer side of a model file, held open while in use (the vocabulary reads from the mapped file). */
export interface ModelText {
  vocab: Vocab;
  tokenizer: Tokenizer;
  architecture: string | null;
  /** Whether the file has its own chat template (a base model has none). */
  hasChatTemplate: boolean;
  /** Ids that end an answer: the template's end-of-turn tokens and the vocabulary's end-of-generation ones. */
  stop: number[];
  /** How the model calls tools. */
  toolCalls: ModelToolCalls;
  /** Turns the answer's ids into its text (gpt-oss's harmony channels into <think> and the answer); `showMarkers`: tool-call markers that are control tokens shown. */
  answerDecoder(stripLeadingSpace: boolean, showMarkers?: boolean): StreamDecoder;
  close(): void;
}

export function openModelText(path: string): ModelText {
  const { gguf, file } = openGguf(path);
  try {
    const vocab = readVocab(gguf);
    const tokenizer = createTokenizer(vocab);
    const architecture = gguf.getString('general.architecture') ?? null;
    const template = chatTemplateFor(vocab, { architecture });
    const toolCalls = modelToolCalls(vocab, architecture);
    return {
      vocab,
      tokenizer,
      architecture,
      hasChatTemplate: template.source === 'file',
      stop: [...new Set([...stopTokenIds(vocab), ...vocab.eog])],
      toolCalls,
      answerDecoder: (stripLeadingSpace, showMarkers = false) => {
        const decoder = answerDecoder(tokenizer, template.name, stripLeadingSpace);
        return showMarkers ? showingMarkers(decoder, toolCalls.markerTokens) : decoder;
      },
      close: () => file.close(),
    };
  } catch (err) {
    file.close();
    throw err;
  }
}

/**
 * The token ids of `messages` rendered with the model's chat template (BOS included when the model
 * wants one; special-token texts read as those tokens). `addGenerationPrompt`: end with the header
 * of an assistant turn, for the model to write it.
 */
export function chatPromptIds(text: ModelText, messages: readonly ChatMessage[], addGenerationPrompt: boolean): number[] {
  const ids = promptTokens(text, { kind: 'chat', messages, addGenerationPrompt }, Infinity);
  return 'ids' in ids ? ids.ids : [];
}

/**
 * What a prompt is made of: raw text (BOS first when the model wants one), or a conversation
 * rendered in `format` (default "model": the file's template, or the built-in one chosen for it).
 */
export type PromptSource =
  | { kind: 'text'; text: string }
  | {
      kind: 'chat';
      messages: readonly ChatMessage[];
      addGenerationPrompt: boolean;
      format?: PromptFormat;
      /** Functions the model may call: given to the template, or described in the system prompt when it takes none. */
      tools?: readonly ChatTool[];
      /** Text after the assistant turn's header, which the answer continues (a forced tool call's marker). */
      prefill?: string;
    };

/** A prompt's ids; or, when it cannot fit, how many tokens it needs at least (counted without tokenizing it). */
export type PromptTokens = { ids: number[] } | { atLeast: number };

/**
 * The ids of `source` (special-token texts read as those tokens), unless the prompt needs more
 * than `room` tokens by the bound of core/tokenizer/token-bound.ts: then it is never tokenized.
 */
export function promptTokens(text: ModelText, source: PromptSource, room: number): PromptTokens {
  const { prompt, parseSpecial } = promptText(text, source);
  // A text of n UTF-16 units has at most 3n bytes and every token stands for 4 or more: no bound passes n.
  const atLeast = prompt.length > room ? fewestTokens(text.tokenizer, prompt) : 0;
  if (atLeast > room) return { atLeast };
  return { ids: text.tokenizer.tokenize(prompt, { addBos: true, parseSpecial }) };
}

/** The prompt's text, and whether special-token texts in it stand for those tokens (a template writes them; plain completion is the user's text only). */
function promptText(text: ModelText, source: PromptSource): { prompt: string; parseSpecial: boolean } {
  if (source.kind === 'text') return { prompt: source.text, parseSpecial: true };
  const format = source.format ?? 'model';
  if (format === 'completion') {
    return { prompt: completionText(source.messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : '' }))), parseSpecial: false };
  }
  const options = { architecture: text.architecture, addBos: text.vocab.addBos, addGenerationPrompt: source.addGenerationPrompt };
  const template = format === 'model' ? {} : { template: BUILTIN_TEMPLATES[format] };
  const { tools } = source;
  // A built-in template family renders no tools: they are described in the system prompt then.
  const own = tools !== undefined && format === 'model' && text.toolCalls.rendersTools;
  const messages = tools === undefined || own ? source.messages : withToolsInText(source.messages, tools);
  const rendered = renderChat(text.vocab, messages, { ...options, ...template, ...(own ? { tools } : {}) }).prompt;
  return { prompt: rendered + (source.prefill ?? ''), parseSpecial: true };
}

/**
 * How an answer in `format` ends and starts: plain completion stops at end of text only (as
 * /v1/completions does) and keeps a leading space, since the answer continues the text before it.
 */
export function answerShape(text: ModelText, format: PromptFormat): { stop: number[]; stripLeadingSpace: boolean } {
  return format === 'completion' ? { stop: [...text.vocab.eog], stripLeadingSpace: false } : { stop: text.stop, stripLeadingSpace: true };
}

export interface PromptTurn {
  role: MessageRole;
  content: string;
}

export interface PromptLimits {
  contextSize: number;
  /** The answer's length limit. */
  maxTokens: number;
}

export interface PromptPlan {
  /** The prompt's token ids (BOS included when the model wants one); empty when it does not fit. */
  ids: number[];
  /** The prompt's length in tokens: exact when `counted`, else a lower bound (too long to fit, it was not tokenized). */
  tokens: number;
  counted: boolean;
  /** Messages at the start of the branch left out of the prompt. */
  dropped: number;
  /** Tokens kept free for the answer. */
  reserve: number;
  /** False when even the newest exchange leaves no room for the answer. */
  fits: boolean;
}

/** The turns the model answers: the user's, and a tool's result. */
const ANSWERED_ROLES: ReadonlySet<MessageRole | undefined> = new Set(['user', 'tool']);

/**
 * The prompt for `branch` (oldest first) under CONTEXT_POLICY: the fewest oldest messages are left
 * out so that prompt + reserve fits the context. A kept part always starts at a user message, so
 * templates that want turns to alternate still get them.
 */
export function planPrompt(
  text: ModelText,
  systemPrompt: string,
  branch: readonly PromptTurn[],
  limits: PromptLimits,
  format: PromptFormat,
  tools?: readonly ChatTool[],
): PromptPlan {
  const reserve = Math.min(limits.maxTokens, Math.floor(limits.contextSize / 4));
  const room = limits.contextSize - reserve;
  const render = (start: number): PromptTokens => {
    const messages: ChatMessage[] = systemPrompt === '' ? [] : [{ role: 'system', content: systemPrompt }];
    for (const turn of branch.slice(start)) messages.push({ role: turn.role, content: turn.content });
    // A tool result is the model's to answer, as a question is; a template that knows no tool role gets it as a user turn.
    const turns = format === 'model' && text.toolCalls.rendersTools ? messages : toolTurnsAsText(messages);
    const source = { kind: 'chat', messages: turns, addGenerationPrompt: ANSWERED_ROLES.has(branch.at(-1)?.role), format } as const;
    // Plain completion has no turns to call tools in.
    return promptTokens(text, tools?.length && format !== 'completion' ? { ...source, tools } : source, room);
  };
  const fitting = (tokens: PromptTokens): number[] | null => ('ids' in tokens && tokens.ids.length <= room ? tokens.ids : null);

  const starts = branch.flatMap((m, i) => (m.role === 'user' ? [i] : []));
  if (starts.length === 0) starts.push(0);
  // Leaving more out never lengthens the prompt: binary search for the first start that fits,
  // keeping `ids` = render(starts[hi]).
  let lo = 0;
  let hi = starts.length - 1;
  const newest = render(starts[hi]!);
  let ids = fitting(newest);
  if (!ids) {
    const counted = 'ids' in newest;
    return { ids: [], tokens: counted ? newest.ids.length : newest.atLeast, counted, dropped: starts[hi]!, reserve, fits: false };
  }
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const tried = fitting(render(starts[mid]!));
    if (tried) {
      hi = mid;
      ids = tried;
    } else {
      lo = mid + 1;
    }
  }
  return { ids, tokens: ids.length, counted: true, dropped: starts[hi]!, reserve, fits: true };
}

/** What the context-usage bar shows for a plan. */
export function contextUsage(plan: PromptPlan, contextSize: number): ContextUsage {
  return { usedTokens: plan.tokens, contextSize, droppedMessages: plan.dropped, policy: CONTEXT_POLICY };
}
