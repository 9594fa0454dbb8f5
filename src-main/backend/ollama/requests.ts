/**
 * Ollama's request bodies (`POST /api/chat`, `/api/generate`) read into the requests the OpenAI
 * endpoints plan and generate, so both APIs sample, stop and constrain alike. Fields Gufo cannot
 * honour (images, suffix, context) are refused with a 400 naming them; options it does not apply
 * are ignored, as Ollama ignores options it does not know (docs/server.md lists both).
 */
import type { ChatMessage } from '../../core/chat-template';
import type { JsonConstraint } from '../../core/constrained/token-constraint';
import { MAX_PENALTY_LAST_N } from '../../engine-wire/protocol';
import { isRecord } from '../chat/settings';
import { invalidParam } from '../openai/errors';
import { RequestFields } from '../openai/request-fields';
import { ollamaThink, type ReasoningRequest } from '../openai/reasoning';
import { chatMessages, MAX_STOP_STRINGS, type GenerationRequest } from '../openai/requests';
import { schemaConstraint } from '../openai/schema-constraint';
import { parseTools, type ToolRequest } from '../openai/tools';
import { parseKeepAlive, type KeepAlive } from './keep-alive';

export interface OllamaRequest extends GenerationRequest {
  /** A context smaller than the server's (options.num_ctx); null: the server's. */
  numCtx: number | null;
  keepAliveMs: KeepAlive;
  /** `think`: whether to think, and whether the reasoning comes back apart. */
  reasoning: ReasoningRequest;
}

export interface OllamaChatRequest extends OllamaRequest {
  messages: ChatMessage[];
  /** Functions the model may call (Ollama has no tool_choice: the model chooses). */
  tools: ToolRequest | null;
  /** A conversation too long for the context loses its oldest messages (Ollama's default); false: a 400. */
  truncate: boolean;
}

export interface OllamaGenerateRequest extends OllamaRequest {
  prompt: string;
  system: string | null;
  /** The prompt as it is, without the chat template. */
  raw: boolean;
}

/** Ollama's defaults (its docs' "Valid Parameters and Values"), for options a request leaves out. */
export const OLLAMA_DEFAULTS = {
  temperature: 0.8,
  top_k: 40,
  top_p: 0.9,
  min_p: 0,
  repeat_penalty: 1.1,
  repeat_last_n: 64,
} as const;

export function parseOllamaChat(body: unknown): OllamaChatRequest {
  const f = RequestFields.of(body);
  if (Array.isArray(f.body.messages)) {
    f.body.messages.forEach((m: unknown, i) => {
      if (!isRecord(m)) return;
      if (m.images !== undefined && m.images !== null && !(Array.isArray(m.images) && m.images.length === 0))
        throw invalidParam(`messages[${i}].images`, "images are not supported: Gufo's models read text only");
    });
  }
  // Ollama's /api/chat without messages loads the model; so does an empty list.
  const messages =
    f.body.messages === undefined ||
    f.body.messages === null ||
    (Array.isArray(f.body.messages) && f.body.messages.length === 0)
      ? []
      : chatMessages(Array.isArray(f.body.messages) ? f.body.messages.map(withContent) : f.body.messages);
  return { ...common(f), messages, tools: parseTools(f), truncate: f.boolean('truncate', true) };
}

/** A message without content (null or left out) has empty content, as Ollama reads it, unless it makes tool calls (their content stays null, as OpenAI sends it). */
function withContent(m: unknown): unknown {
  if (!isRecord(m) || (m.content !== null && m.content !== undefined)) return m;
  return m.tool_calls === undefined || m.tool_calls === null ? { ...m, content: '' } : m;
}

export function parseOllamaGenerate(body: unknown): OllamaGenerateRequest {
  const f = RequestFields.of(body);
  f.unsupported(
    'images',
    (v) => Array.isArray(v) && v.length === 0,
    "images are not supported: Gufo's models read text only",
  );
  f.unsupported('suffix', (v) => v === '', '"suffix" (fill-in-the-middle) is not supported by Gufo yet');
  f.unsupported(
    'context',
    (v) => Array.isArray(v) && v.length === 0,
    '"context" (an earlier answer\'s tokens) is not supported by Gufo: send the conversation to /api/chat',
  );
  const prompt = f.has('prompt') ? f.body.prompt : '';
  if (typeof prompt !== 'string') throw invalidParam('prompt', '"prompt" must be text');
  const system = f.has('system') ? f.body.system : null;
  if (system !== null && typeof system !== 'string') throw invalidParam('system', '"system" must be text');
  // "template" is accepted and ignored: the model's own chat template renders the prompt.
  return { ...common(f), prompt, system, raw: f.boolean('raw', false) };
}

/** What both share: model, stream (on unless false, as in Ollama), format, options. */
function common(f: RequestFields): OllamaRequest {
  f.unsupported(
    'logprobs',
    (v) => v === false,
    '"logprobs" is not supported on Ollama\'s API by Gufo yet: use /v1/chat/completions',
  );
  const options = f.has('options') ? f.body.options : {};
  if (!isRecord(options)) throw invalidParam('options', '"options" must be an object');
  // Named as in the request, so that an error says "options.temperature". Options Gufo does not
  // apply (mirostat, typical_p, num_thread, …, or a name it does not know) are ignored, as Ollama ignores them.
  const o = new RequestFields(
    Object.fromEntries(Object.entries(options).map(([name, value]) => [`options.${name}`, value])),
  );
  const numPredict = o.integer('options.num_predict', -2, 2 ** 31 - 1, -1);
  if (numPredict === 0)
    throw invalidParam(
      'options.num_predict',
      '"options.num_predict" must be -1 (no limit), -2 (fill the context) or at least 1',
    );
  return {
    model: f.string('model'),
    stream: f.boolean('stream', true),
    includeUsage: false,
    maxTokens: numPredict < 0 ? null : numPredict,
    stop: stopList(options.stop),
    logprobs: null,
    constraint: format(f.body.format),
    numCtx: o.integer('options.num_ctx', 1, 2 ** 31 - 1, null),
    reasoning: ollamaThink(f),
    sampling: {
      temperature: o.number('options.temperature', 0, 2, OLLAMA_DEFAULTS.temperature),
      topP: o.number('options.top_p', 0, 1, OLLAMA_DEFAULTS.top_p),
      topK: o.integer('options.top_k', 0, 1_000_000, OLLAMA_DEFAULTS.top_k),
      minP: o.number('options.min_p', 0, 1, OLLAMA_DEFAULTS.min_p),
      repeatPenalty: o.number('options.repeat_penalty', 0.01, 10, OLLAMA_DEFAULTS.repeat_penalty),
      presencePenalty: o.number('options.presence_penalty', -2, 2, 0),
      frequencyPenalty: o.number('options.frequency_penalty', -2, 2, 0),
      seed: o.integer('options.seed', Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, null),
      penaltyLastN: repeatLastN(o),
    },
    keepAliveMs: parseKeepAlive(f.body.keep_alive),
  };
}

/** options.repeat_last_n: the repeat penalty's window; 0 off, -1 the whole context (the engine looks back at most MAX_PENALTY_LAST_N tokens). */
function repeatLastN(o: RequestFields): number {
  const n = o.integer('options.repeat_last_n', -1, 2 ** 31 - 1, OLLAMA_DEFAULTS.repeat_last_n);
  return Math.min(n === -1 ? MAX_PENALTY_LAST_N : n, MAX_PENALTY_LAST_N);
}

function stopList(stop: unknown): string[] {
  if (stop === undefined || stop === null) return [];
  if (!Array.isArray(stop) || stop.length > MAX_STOP_STRINGS || !stop.every((s) => typeof s === 'string' && s !== '')) {
    throw invalidParam(
      'options.stop',
      `"options.stop" must be a list of at most ${MAX_STOP_STRINGS} non-empty strings`,
    );
  }
  return stop as string[];
}

/** `format`: "json", or a JSON Schema the answer must follow; "" or absent: free text. */
function format(value: unknown): JsonConstraint | null {
  if (value === undefined || value === null || value === '') return null;
  if (value === 'json') return { kind: 'json' };
  if (isRecord(value)) return schemaConstraint(value, 'format', 'format');
  throw invalidParam('format', '"format" must be "json" or a JSON Schema object');
}
