/**
 * The requests Gufo serves, checked: `/v1/chat/completions` and `/v1/completions` bodies turned
 * into typed values, each mistake a 400 naming its field. Unknown fields are ignored (clients send
 * their own extras); fields that ask for something Gufo cannot do are refused rather than ignored.
 */
import type { ChatMessage, ChatToolCall } from '../../core/chat-template';
import type { JsonConstraint } from '../../core/constrained/token-constraint';
import { isRecord } from '../chat/settings';
import { invalidParam } from './errors';
import { openAiReasoning, type ReasoningRequest } from './reasoning';
import { RequestFields } from './request-fields';
import { schemaConstraint } from './schema-constraint';
import { parseTools, type ToolRequest } from './tools';

export interface SamplingRequest {
  temperature: number;
  topP: number;
  /** llama.cpp's extensions, off unless given. */
  topK: number;
  minP: number;
  repeatPenalty: number;
  presencePenalty: number;
  frequencyPenalty: number;
  /** Null: a random one. */
  seed: number | null;
  /** The penalties' window in tokens (Ollama's repeat_last_n); absent: the engine's usual 64. */
  penaltyLastN?: number;
}

export interface GenerationRequest {
  model: string;
  stream: boolean;
  /** stream_options.include_usage: a last chunk with the token counts. */
  includeUsage: boolean;
  /** How many choices to write (OpenAI's `n`), one after another; absent: 1. */
  choices?: number;
  /** Null: until the model ends, the context is full or the server's cap is reached. */
  maxTokens: number | null;
  stop: string[];
  sampling: SamplingRequest;
  /** How many alternatives to report with each token's log-probability; null when not asked. */
  logprobs: number | null;
  /** response_format json_object / json_schema: the output held to JSON as it is sampled; null: free text. */
  constraint: JsonConstraint | null;
}

export interface ChatCompletionRequest extends GenerationRequest {
  messages: ChatMessage[];
  /** Functions the model may call; null: none (or tool_choice "none"). */
  tools: ToolRequest | null;
  /** Whether to think, and whether the reasoning comes back apart. */
  reasoning: ReasoningRequest;
}

export interface CompletionRequest extends GenerationRequest {
  /** Text, or token ids as they are. */
  prompt: string | number[];
}

/** OpenAI's limits on top_logprobs (chat) and logprobs (completions). */
export const MAX_CHAT_TOP_LOGPROBS = 20;
export const MAX_COMPLETION_LOGPROBS = 5;
export const MAX_STOP_STRINGS = 16;
/** Most choices (`n`) one request may ask for: each is a whole generation, written one after another. */
export const MAX_CHOICES = 8;

export function parseChatCompletion(body: unknown): ChatCompletionRequest {
  const f = RequestFields.of(body);
  f.unsupported(
    'functions',
    (v) => Array.isArray(v) && v.length === 0,
    '"functions" (the old form of function calling) is not supported: send "tools"',
  );
  const wantLogprobs = f.boolean('logprobs', false);
  const top = f.integer('top_logprobs', 0, MAX_CHAT_TOP_LOGPROBS, null);
  if (top !== null && !wantLogprobs) throw invalidParam('top_logprobs', '"top_logprobs" needs "logprobs": true');
  return {
    ...common(f),
    maxTokens: f.integer('max_completion_tokens', 1, 2 ** 31 - 1, f.integer('max_tokens', 1, 2 ** 31 - 1, null)),
    logprobs: wantLogprobs ? (top ?? 0) : null,
    messages: chatMessages(f.body.messages),
    tools: parseTools(f),
    reasoning: openAiReasoning(f),
  };
}

export function parseCompletion(body: unknown): CompletionRequest {
  const f = RequestFields.of(body);
  f.unsupported('echo', (v) => v === false, '"echo" is not supported by Gufo yet');
  f.unsupported('suffix', (v) => v === '', '"suffix" (fill-in-the-middle) is not supported by Gufo yet');
  f.unsupported(
    'best_of',
    (v) => v === 1,
    '"best_of" must be 1: Gufo returns every completion it writes (ask for several with "n")',
  );
  return {
    ...common(f),
    // OpenAI's completions default to 16 tokens.
    maxTokens: f.integer('max_tokens', 1, 2 ** 31 - 1, 16),
    logprobs: f.integer('logprobs', 0, MAX_COMPLETION_LOGPROBS, null),
    prompt: prompt(f.body.prompt),
  };
}

/** What both endpoints share: model, streaming, sampling, stop strings. */
function common(f: RequestFields): Omit<GenerationRequest, 'maxTokens' | 'logprobs'> {
  f.unsupported(
    'logit_bias',
    (v) => isRecord(v) && Object.keys(v).length === 0,
    '"logit_bias" is not supported by Gufo yet',
  );
  const stream = f.boolean('stream', false);
  const options = f.body.stream_options;
  if (options !== undefined && options !== null && (!isRecord(options) || !stream)) {
    throw invalidParam('stream_options', '"stream_options" must be an object, and only goes with "stream": true');
  }
  const includeUsage =
    isRecord(options) && options.include_usage !== undefined
      ? new RequestFields(options).boolean('include_usage', false)
      : false;
  return {
    model: f.string('model'),
    stream,
    includeUsage,
    choices: f.integer('n', 1, MAX_CHOICES, 1),
    stop: stopStrings(f.body.stop),
    constraint: jsonOutput(f.body.response_format, 'response_format', 'response_format.json_schema', (format) =>
      isRecord(format.json_schema) ? format.json_schema : undefined,
    ),
    sampling: samplingOf(f),
  };
}

/** Sampling as OpenAI's endpoints take it, with llama.cpp's extensions. */
export function samplingOf(f: RequestFields): SamplingRequest {
  return {
    temperature: f.number('temperature', 0, 2, 1),
    topP: f.number('top_p', 0, 1, 1),
    topK: f.integer('top_k', 0, 1_000_000, 0),
    minP: f.number('min_p', 0, 1, 0),
    repeatPenalty: f.number('repeat_penalty', 0.01, 10, 1),
    presencePenalty: f.number('presence_penalty', -2, 2, 0),
    frequencyPenalty: f.number('frequency_penalty', -2, 2, 0),
    seed: f.integer('seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, null),
  };
}

function stopStrings(stop: unknown): string[] {
  if (stop === undefined || stop === null) return [];
  const list = typeof stop === 'string' ? [stop] : stop;
  if (!Array.isArray(list) || list.length > MAX_STOP_STRINGS || !list.every((s) => typeof s === 'string' && s !== '')) {
    throw invalidParam('stop', `"stop" must be a non-empty string or a list of at most ${MAX_STOP_STRINGS} of them`);
  }
  return list as string[];
}

/**
 * A JSON output format (`param`): {"type": "text"}, {"type": "json_object"}, or {"type":
 * "json_schema"} with { "name", "schema", "strict"? } at `specAt`, which `specOf` reads
 * (response_format nests them under "json_schema"; the Responses API's text.format does not). The
 * schema is compiled here so that one Gufo cannot hold to is a 400 naming the keyword and where it
 * is, before any engine work. Strict or not, the output is held to the schema.
 */
export function jsonOutput(
  value: unknown,
  param: string,
  specAt: string,
  specOf: (format: Record<string, unknown>) => Record<string, unknown> | undefined,
): JsonConstraint | null {
  if (value === undefined || value === null) return null;
  const types = '"text", "json_object" or "json_schema"';
  if (!isRecord(value)) throw invalidParam(param, `"${param}" must be an object { "type": ${types} }`);
  switch (value.type) {
    case 'text':
      return null;
    case 'json_object':
      return { kind: 'json' };
    case 'json_schema': {
      const spec = specOf(value);
      if (!spec) throw invalidParam(param, `"${specAt}" must be an object { "name", "schema", "strict" }`);
      if (spec.strict !== undefined && spec.strict !== null && typeof spec.strict !== 'boolean') {
        throw invalidParam(param, `"${specAt}.strict" must be true or false`);
      }
      if (spec.schema === undefined || spec.schema === null)
        throw invalidParam(
          param,
          `"${specAt}.schema" is required: the JSON Schema the answer must follow`,
          'missing_required_parameter',
        );
      return schemaConstraint(spec.schema, param, `${specAt}.schema`);
    }
    default:
      throw invalidParam(param, `"${param}.type" must be ${types} (got ${JSON.stringify(value.type) ?? 'nothing'})`);
  }
}

/** OpenAI's message roles as Gufo's templates read them ("developer" is the newer name of "system"). */
export const ROLES: Record<string, string> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
  tool: 'tool',
};

/**
 * A chat's `messages`: { role, content } each, roles as OpenAI names them (Ollama's are a subset);
 * an assistant turn may carry `tool_calls` (its content null), a tool turn answers one by
 * `tool_call_id` (OpenAI) or `tool_name` (Ollama), and gets the function's name for templates that print it.
 */
export function chatMessages(value: unknown): ChatMessage[] {
  if (value === undefined || value === null)
    throw invalidParam('messages', '"messages" is required', 'missing_required_parameter');
  if (!Array.isArray(value) || value.length === 0)
    throw invalidParam('messages', '"messages" must be a non-empty list of { role, content }');
  const callNames = new Map<string, string>();
  return value.map((m: unknown, i) => {
    const at = `messages[${i}]`;
    if (!isRecord(m)) throw invalidParam(at, `${at} must be an object { role, content }`);
    const role = typeof m.role === 'string' ? ROLES[m.role] : undefined;
    if (!role) {
      throw invalidParam(
        `${at}.role`,
        `${at}.role must be one of ${Object.keys(ROLES).join(', ')} (got ${JSON.stringify(m.role) ?? 'nothing'})`,
      );
    }
    const hasCalls = m.tool_calls !== undefined && m.tool_calls !== null;
    if (hasCalls && role !== 'assistant')
      throw invalidParam(`${at}.tool_calls`, `${at}.tool_calls: only assistant messages make tool calls`);
    const reasoning = role === 'assistant' ? earlierReasoning(m, at) : {};
    if (hasCalls) {
      const calls = toolCalls(m.tool_calls, `${at}.tool_calls`);
      for (const call of calls) if (call.id) callNames.set(call.id, call.function.name);
      const content = m.content === null || m.content === undefined ? null : messageText(m.content, `${at}.content`);
      return { role, content, tool_calls: calls, ...reasoning };
    }
    const content = messageText(m.content, `${at}.content`);
    if (role !== 'tool') return { role, content, ...reasoning };
    const id = m.tool_call_id;
    if (id !== undefined && id !== null && typeof id !== 'string')
      throw invalidParam(`${at}.tool_call_id`, `${at}.tool_call_id must be text: the id of the call this answers`);
    const name =
      typeof m.tool_name === 'string'
        ? m.tool_name
        : typeof m.name === 'string'
          ? m.name
          : typeof id === 'string'
            ? callNames.get(id)
            : undefined;
    return {
      role,
      content,
      ...(typeof id === 'string' ? { tool_call_id: id } : {}),
      ...(name !== undefined ? { name } : {}),
    };
  });
}

/**
 * An earlier answer's reasoning, as the server returned it (`reasoning_content`, llama.cpp's; Ollama's
 * `thinking`), for the templates that read it: Qwen 3's `reasoning_content`, gpt-oss's `thinking`.
 */
function earlierReasoning(m: Record<string, unknown>, at: string): Pick<ChatMessage, 'reasoning_content' | 'thinking'> {
  const field = m.reasoning_content !== undefined && m.reasoning_content !== null ? 'reasoning_content' : 'thinking';
  const text = m[field];
  if (text === undefined || text === null || text === '') return {};
  if (typeof text !== 'string')
    throw invalidParam(`${at}.${field}`, `${at}.${field} must be text: the answer's reasoning`);
  return { reasoning_content: text, thinking: text };
}

/** An assistant turn's calls: { id, type: "function", function: { name, arguments } }, arguments JSON text (OpenAI) or an object (Ollama). */
function toolCalls(value: unknown, at: string): ChatToolCall[] {
  if (!Array.isArray(value))
    throw invalidParam(at, `${at} must be a list of { "id", "type": "function", "function": { "name", "arguments" } }`);
  return value.map((call: unknown, i) => {
    const here = `${at}[${i}]`;
    const fn = isRecord(call) ? call.function : undefined;
    if (!isRecord(call) || !isRecord(fn) || typeof fn.name !== 'string' || fn.name === '') {
      throw invalidParam(here, `${here} must be { "id", "type": "function", "function": { "name", "arguments" } }`);
    }
    const id = typeof call.id === 'string' ? call.id : undefined;
    return {
      ...(id ? { id } : {}),
      type: 'function',
      function: { name: fn.name, arguments: callArguments(fn.arguments ?? {}, `${here}.function.arguments`) },
    };
  });
}

/** An earlier call's arguments: a JSON object's text (OpenAI) or the object (Ollama), as the template gets them. */
export function callArguments(args: unknown, at: string): string | Record<string, unknown> {
  if (typeof args === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(args);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) throw invalidParam(at, `${at} must be a JSON object's text`);
  } else if (!isRecord(args)) {
    throw invalidParam(at, `${at} must be a JSON object or its text`);
  }
  return args;
}

/** A message's text: a string, or text parts (joined with newlines, as llama.cpp joins them). */
function messageText(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: unknown, i) => {
        if (!isRecord(part) || part.type !== 'text' || typeof part.text !== 'string') {
          throw invalidParam(
            `${at}[${i}]`,
            `${at}[${i}] must be a text part { "type": "text", "text": "..." }: Gufo's models read text only`,
          );
        }
        return part.text;
      })
      .join('\n');
  }
  throw invalidParam(at, `${at} must be text or a list of text parts`);
}

/** A prompt: text or token ids, alone or as the only element of a list. */
function prompt(value: unknown): string | number[] {
  if (value === undefined || value === null)
    throw invalidParam('prompt', '"prompt" is required', 'missing_required_parameter');
  const one =
    Array.isArray(value) && value.length === 1 && (typeof value[0] === 'string' || Array.isArray(value[0]))
      ? value[0]
      : value;
  if (typeof one === 'string') return one;
  if (Array.isArray(one) && one.length > 0 && one.every((id) => Number.isSafeInteger(id) && (id as number) >= 0))
    return one as number[];
  throw invalidParam('prompt', '"prompt" must be text or a list of token ids (one prompt per request)');
}
