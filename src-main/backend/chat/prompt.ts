/**
 * A chat as the model sees it: the branch rendered in the chat's prompt format (the model's chat
 * template, plain completion, or a built-in family) and tokenized, and what is left out when it
 * outgrows the context (the chat's context overflow policy, overflow.ts).
 */
import {
  CONTEXT_OVERFLOW_SETTING,
  contextOverflowSummary,
  type ContextOverflow,
  type ContextUsage,
  type MessageRole,
} from '../../../src-preload/api';
import {
  chatTemplateFor,
  renderChat,
  stopTokenIds,
  templateThinks,
  type ChatMessage,
  type ChatTool,
} from '../../core/chat-template';
import { BUILTIN_TEMPLATES } from '../../core/chat-templates/builtin';
import { answerDecoder, HARMONY_TEMPLATE } from '../../core/harmony';
import { completionText, type PromptFormat } from '../../core/prompt-format';
import { promptOpensThinking } from '../../core/reasoning';
import {
  modelToolCalls,
  showingMarkers,
  toolTurnsAsText,
  withToolsInText,
  type ModelToolCalls,
} from '../../core/tool-calls/index';
import { createTokenizer, readVocab, type StreamDecoder, type Tokenizer, type Vocab } from '../../core/tokenizer/index';
import { fewestTokens } from '../../core/tokenizer/token-bound';
import { openGguf } from '../../node/gguf-io';
import { keptMessages, leftOutCount } from './overflow';

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
  /** Whether its chat template writes reasoning (<think> blocks, or gpt-oss's analysis channel). */
  thinks: boolean;
  /** Whether it reasons whatever it is told (gpt-oss: its template has no switch). */
  alwaysThinks: boolean;
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
      thinks: templateThinks(template),
      alwaysThinks: template.name === HARMONY_TEMPLATE,
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
      /** More variables for the template (enable_thinking, reasoning_effort, a request's chat_template_kwargs). */
      variables?: Record<string, unknown>;
    };

/**
 * A prompt's ids; or, when it cannot fit, how many tokens it needs at least (counted without
 * tokenizing it). `opensThinking`: the rendered prompt ends inside a reasoning block, so the
 * answer starts as reasoning (core/reasoning.ts).
 */
export type PromptTokens = { ids: number[]; opensThinking?: boolean } | { atLeast: number };

/**
 * The ids of `source` (special-token texts read as those tokens), unless the prompt needs more
 * than `room` tokens by the bound of core/tokenizer/token-bound.ts: then it is never tokenized.
 */
export function promptTokens(text: ModelText, source: PromptSource, room: number): PromptTokens {
  const { prompt, parseSpecial } = promptText(text, source);
  // A text of n UTF-16 units has at most 3n bytes and every token stands for 4 or more: no bound passes n.
  const atLeast = prompt.length > room ? fewestTokens(text.tokenizer, prompt) : 0;
  if (atLeast > room) return { atLeast };
  const ids = text.tokenizer.tokenize(prompt, { addBos: true, parseSpecial });
  return source.kind === 'chat' ? { ids, opensThinking: promptOpensThinking(prompt) } : { ids };
}

/** The prompt's text, and whether special-token texts in it stand for those tokens (a template writes them; plain completion is the user's text only). */
function promptText(text: ModelText, source: PromptSource): { prompt: string; parseSpecial: boolean } {
  if (source.kind === 'text') return { prompt: source.text, parseSpecial: true };
  const format = source.format ?? 'model';
  if (format === 'completion') {
    return {
      prompt: completionText(
        source.messages.map((m) => ({ role: m.role, content: typeof m.content === 'string' ? m.content : '' })),
      ),
      parseSpecial: false,
    };
  }
  const options = {
    architecture: text.architecture,
    addBos: text.vocab.addBos,
    addGenerationPrompt: source.addGenerationPrompt,
  };
  const template = format === 'model' ? {} : { template: BUILTIN_TEMPLATES[format] };
  const { tools } = source;
  // A built-in template family renders no tools: they are described in the system prompt then.
  const own = tools !== undefined && format === 'model' && text.toolCalls.rendersTools;
  const messages = tools === undefined || own ? source.messages : withToolsInText(source.messages, tools);
  const rendered = renderChat(text.vocab, messages, {
    ...options,
    ...template,
    ...(own ? { tools } : {}),
    ...(source.variables ? { variables: source.variables } : {}),
  }).prompt;
  return { prompt: rendered + (source.prefill ?? ''), parseSpecial: true };
}

/**
 * How an answer in `format` ends and starts: plain completion stops at end of text only (as
 * /v1/completions does) and keeps a leading space, since the answer continues the text before it.
 */
export function answerShape(text: ModelText, format: PromptFormat): { stop: number[]; stripLeadingSpace: boolean } {
  return format === 'completion'
    ? { stop: [...text.vocab.eog], stripLeadingSpace: false }
    : { stop: text.stop, stripLeadingSpace: true };
}

export interface PromptTurn {
  role: MessageRole;
  content: string;
}

export interface PromptLimits {
  contextSize: number;
  /** The answer's length limit. */
  maxTokens: number;
  overflow: ContextOverflow;
}

export interface PromptPlan {
  /** The prompt's token ids (BOS included when the model wants one; then the answer so far); empty when it does not fit. */
  ids: number[];
  /** The prompt's length in tokens: exact when `counted`, else a lower bound (too long to fit, it was not tokenized). */
  tokens: number;
  counted: boolean;
  /** Messages of the branch left out of the prompt. */
  dropped: number;
  /** Tokens kept free for the answer. */
  reserve: number;
  /** False when even the most the policy leaves out leaves no room for the answer. */
  fits: boolean;
  /** The prompt ends inside a reasoning block (its template opened <think>): the answer starts as reasoning. */
  opensThinking?: boolean;
}

/** The turns the model answers: the user's, and a tool's result. */
const ANSWERED_ROLES: ReadonlySet<MessageRole | undefined> = new Set(['user', 'tool']);

/**
 * Tokens an answer needs free: one when nothing may be left out (it stops at the end of the
 * context), else the smaller of its length limit and a quarter of the context.
 */
export function answerReserve(limits: PromptLimits): number {
  return limits.overflow === 'stop' ? 1 : Math.min(limits.maxTokens, Math.floor(limits.contextSize / 4));
}

/**
 * The prompt for `branch` (oldest first) under the limits' overflow policy: of the ways it may
 * shorten the branch (overflow.ts), the one leaving out least for which prompt + reserve fits the
 * context. `answer`: ids of the answer so far, which the prompt ends with (an answer that filled
 * the context goes on without earlier messages).
 */
export function planPrompt(
  text: ModelText,
  systemPrompt: string,
  branch: readonly PromptTurn[],
  limits: PromptLimits,
  format: PromptFormat,
  tools?: readonly ChatTool[],
  answer: readonly number[] = [],
  thinking: boolean | null = null,
): PromptPlan {
  const reserve = answerReserve(limits);
  const room = limits.contextSize - reserve - answer.length;
  const candidates = keptMessages(
    branch.map((m) => m.role),
    limits.overflow,
  );
  const render = (index: number): PromptTokens => {
    const { head, start } = candidates[index]!;
    const messages: ChatMessage[] = systemPrompt === '' ? [] : [{ role: 'system', content: systemPrompt }];
    for (const turn of [...branch.slice(0, head), ...branch.slice(start)])
      messages.push({ role: turn.role, content: turn.content });
    // A tool result is the model's to answer, as a question is; a template that knows no tool role gets it as a user turn.
    const turns = format === 'model' && text.toolCalls.rendersTools ? messages : toolTurnsAsText(messages);
    const source = {
      kind: 'chat',
      messages: turns,
      addGenerationPrompt: ANSWERED_ROLES.has(branch.at(-1)?.role),
      format,
      ...(thinking === null ? {} : { variables: { enable_thinking: thinking } }),
    } as const;
    // Plain completion has no turns to call tools in.
    return promptTokens(text, tools?.length && format !== 'completion' ? { ...source, tools } : source, room);
  };
  const fitting = (tokens: PromptTokens): number[] | null =>
    'ids' in tokens && tokens.ids.length <= room ? tokens.ids : null;

  // Leaving more out never lengthens the prompt: binary search for the first candidate that fits,
  // keeping `ids` = render(hi).
  let lo = 0;
  let hi = candidates.length - 1;
  const most = render(hi);
  let ids = fitting(most);
  const opensThinking = 'ids' in most && most.opensThinking === true;
  if (!ids) {
    const counted = 'ids' in most;
    const tokens = (counted ? most.ids.length : most.atLeast) + answer.length;
    return { ids: [], tokens, counted, dropped: leftOutCount(candidates[hi]!), reserve, fits: false };
  }
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    const tried = fitting(render(mid));
    if (tried) {
      hi = mid;
      ids = tried;
    } else {
      lo = mid + 1;
    }
  }
  const all = [...ids, ...answer];
  return {
    ids: all,
    tokens: all.length,
    counted: true,
    dropped: leftOutCount(candidates[hi]!),
    reserve,
    fits: true,
    ...(opensThinking && { opensThinking }),
  };
}

/** Why a plan that does not fit cannot be answered, naming the sizes and what to do (`setting`: where the policy is chosen). */
export function unfitMessage(plan: PromptPlan, limits: PromptLimits, setting = CONTEXT_OVERFLOW_SETTING): string {
  const tokens = `${plan.counted ? '' : 'at least '}${plan.tokens} tokens with the system prompt`;
  if (limits.overflow === 'stop') {
    return (
      `the conversation no longer fits this chat's context: ${tokens}, in a context of ${limits.contextSize}, and "Stop at the limit" leaves nothing out; ` +
      `raise the context size, start a new chat, or choose a policy that leaves out earlier messages (${setting})`
    );
  }
  return (
    `the message is too long for this chat's context: ${tokens}, ` +
    `and ${plan.reserve} must stay free for the answer, in a context of ${limits.contextSize}; shorten it or raise the context size`
  );
}

/** What the context-usage bar shows for a plan. */
export function contextUsage(plan: PromptPlan, limits: PromptLimits): ContextUsage {
  const { contextSize, overflow } = limits;
  return {
    usedTokens: plan.tokens,
    contextSize,
    droppedMessages: plan.dropped,
    overflow,
    policy: contextOverflowSummary(overflow),
  };
}
