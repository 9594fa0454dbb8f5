/**
 * Ollama's API (its docs/api.md) beside OpenAI's on every listener that serves /v1: version, tags,
 * ps, show, chat, generate, embed and the older embeddings (NDJSON streams, or one JSON document with "stream": false),
 * pull, delete, copy and create on the app's library, and
 * "Ollama is running" at `/`. The access rules, queues, metrics and generation are /v1's
 * (openai/routes.ts calls in here); errors are Ollama's `{ "error": "..." }`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../node/server/http-server';
import type { ModelText } from '../chat/prompt';
import { chatAnswer, chatPrompt } from '../openai/chat-completions';
import { COMPLETIONS } from '../openai/completions';
import { embed, embeddingInputs } from '../openai/embeddings';
import { OpenAiError, toOpenAiError } from '../openai/errors';
import { generate, type Generated } from '../openai/generation';
import type { ServedModel } from '../openai/model-ids';
import type { PromptInput } from '../openai/plan';
import { RequestFields } from '../openai/request-fields';
import { CLIENT_LEFT, withGenerationPlan } from '../openai/serve-generation';
import type { OpenAiService } from '../openai/service';
import type { AnsweredToolCall, ToolAnswer } from '../openai/tools';
import { parseKeepAlive, type KeepAlive } from './keep-alive';
import { resolveOllamaModel, running, tags } from './models';
import { create, planCreate } from './create';
import { withModelDefaults } from './model-defaults';
import { copyModel, deleteModel } from './model-routes';
import { NdjsonWriter, serveStatus } from './ndjson';
import { pull, pullSource } from './pull';
import { show } from './show';
import { parseOllamaChat, parseOllamaGenerate, type OllamaRequest } from './requests';

/** The Ollama API version these routes follow (clients check it to know which fields they may send). */
export const OLLAMA_API_VERSION = '0.12.0';

const ROUTES = new Set([
  '/',
  '/api/version',
  '/api/tags',
  '/api/ps',
  '/api/show',
  '/api/chat',
  '/api/generate',
  '/api/embed',
  '/api/embeddings',
  '/api/pull',
  '/api/delete',
  '/api/copy',
  '/api/create',
]);

/** Whether a path is Ollama's (every `/api/...`, so that a route Gufo lacks gets Ollama's 404). */
export function isOllamaPath(pathname: string): boolean {
  return pathname === '/' || pathname.startsWith('/api/');
}

/** The metrics' name for an Ollama path. */
export function ollamaEndpoint(pathname: string): string {
  return ROUTES.has(pathname) ? pathname : 'other';
}

/** An error as Ollama sends one. */
export function ollamaErrorBody(err: OpenAiError): { error: string } {
  return { error: err.message };
}

/** Serves one request to an Ollama path; answers its HTTP status. Errors before any reply are thrown. */
export async function ollamaRoute(
  service: OpenAiService,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  body: () => Promise<unknown>,
  signal: AbortSignal,
): Promise<number> {
  switch (pathname) {
    case '/': {
      expectMethod(req, 'GET', 'HEAD');
      const text = 'Ollama is running';
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      res.end(req.method === 'HEAD' ? undefined : text);
      return 200;
    }
    case '/api/version':
      expectMethod(req, 'GET', 'HEAD');
      return reply(res, { version: OLLAMA_API_VERSION });
    case '/api/tags':
      expectMethod(req, 'GET', 'HEAD');
      return reply(res, await tags(service));
    case '/api/ps':
      expectMethod(req, 'GET', 'HEAD');
      return reply(res, await running(service));
    case '/api/show': {
      expectMethod(req, 'POST');
      const f = RequestFields.of(await body());
      // Ollama's clients send "model"; older ones "name".
      const name = f.has('model') ? f.string('model') : f.string('name');
      return reply(res, await show(service, await resolveOllamaModel(service, name), f.boolean('verbose', false)));
    }
    case '/api/chat': {
      expectMethod(req, 'POST');
      const request = parseOllamaChat(await withModelDefaults(service, await body(), 'chat'));
      const prompt = (text: ModelText): PromptInput => ({ ...chatPrompt(text, request), truncate: request.truncate });
      return serveOllama(service, request, request.messages.length === 0, prompt, 'message', res, signal, () =>
        chatAnswer(request),
      );
    }
    case '/api/generate': {
      expectMethod(req, 'POST');
      const request = parseOllamaGenerate(await withModelDefaults(service, await body(), 'generate'));
      const messages = [
        ...(request.system === null ? [] : [{ role: 'system', content: request.system }]),
        { role: 'user', content: request.prompt },
      ];
      const prompt = (text: ModelText): PromptInput =>
        request.raw
          ? COMPLETIONS.prompt(text, { ...request, prompt: request.prompt })
          : chatPrompt(text, { ...request, messages, tools: null });
      return serveOllama(service, request, request.prompt === '', prompt, 'response', res, signal);
    }
    case '/api/embed': {
      expectMethod(req, 'POST');
      const started = process.hrtime.bigint();
      const f = RequestFields.of(await body());
      const name = f.string('model');
      const model = await resolveOllamaModel(service, name);
      const options = {
        truncate: f.boolean('truncate', true),
        dimensions: f.integer('dimensions', 1, Number.MAX_SAFE_INTEGER, null),
        contextSize: numCtx(f),
        keepAliveMs: parseKeepAlive(f.body.keep_alive),
      };
      const embedded = await embed(service, model, embeddingInputs(f, 'input', false), 'input', options);
      return reply(res, {
        model: name,
        embeddings: embedded.embeddings,
        total_duration: Number(process.hrtime.bigint() - started),
        load_duration: nanoseconds(embedded.loadMs ?? 0),
        prompt_eval_count: embedded.promptTokens,
      });
    }
    case '/api/embeddings': {
      // The older endpoint: one "prompt", one "embedding".
      expectMethod(req, 'POST');
      const f = RequestFields.of(await body());
      const model = await resolveOllamaModel(service, f.string('model'));
      const embedded = await embed(service, model, [f.string('prompt')], 'prompt', {
        truncate: true,
        dimensions: null,
        contextSize: numCtx(f),
        keepAliveMs: parseKeepAlive(f.body.keep_alive),
      });
      return reply(res, { embedding: embedded.embeddings[0] });
    }
    case '/api/pull': {
      expectMethod(req, 'POST');
      const f = RequestFields.of(await body());
      // The official client sends "name"; Ollama's docs "model".
      const url = pullSource(service, f.has('model') ? f.string('model') : f.string('name'));
      return serveStatus(res, f.boolean('stream', true), (report) => pull(service, url, report));
    }
    case '/api/delete': {
      expectMethod(req, 'DELETE');
      const f = RequestFields.of(await body());
      await deleteModel(service, f.has('model') ? f.string('model') : f.string('name'));
      return done(res);
    }
    case '/api/create': {
      expectMethod(req, 'POST');
      const f = RequestFields.of(await body());
      const plan = await planCreate(service, f);
      return serveStatus(res, f.boolean('stream', true), (report) => create(service, plan, report));
    }
    case '/api/copy': {
      expectMethod(req, 'POST');
      const f = RequestFields.of(await body());
      await copyModel(service, f.string('source'), f.string('destination'));
      return done(res);
    }
    default:
      throw new OpenAiError(404, 'not_found_error', 'unknown_url', `no such route: ${req.method} ${pathname}`);
  }
}

/** options.num_ctx, a context smaller than the server's; null when not given. */
function numCtx(f: RequestFields): number | null {
  const options = f.body.options;
  const value =
    typeof options === 'object' && options !== null ? (options as Record<string, unknown>).num_ctx : undefined;
  return new RequestFields({ 'options.num_ctx': value }).integer('options.num_ctx', 1, 2 ** 31 - 1, null);
}

function reply(res: ServerResponse, body: object): number {
  sendJson(res, 200, body);
  return 200;
}

/** 200 with no body, as Ollama answers delete and copy. */
function done(res: ServerResponse): number {
  res.writeHead(200, { 'Content-Length': 0 });
  res.end();
  return 200;
}

function expectMethod(req: IncomingMessage, ...methods: string[]): void {
  if (!methods.includes(req.method ?? ''))
    throw new OpenAiError(
      405,
      'invalid_request_error',
      'method_not_allowed',
      `use ${methods.join(' or ')} for this route`,
    );
}

/**
 * Chat or generate: `loadOnly` (no messages, an empty prompt) loads the model and answers
 * done_reason "load", or with keep_alive 0 unloads it and answers "unload", as Ollama does; otherwise the answer goes in `field` ("message" for chat,
 * "response" for generate), streamed as NDJSON unless "stream" is false. `toolAnswer`: a chat
 * with tools splits its answer into content and `message.tool_calls` (sent before the last line).
 */
async function serveOllama(
  service: OpenAiService,
  request: OllamaRequest,
  loadOnly: boolean,
  prompt: (text: ModelText) => PromptInput,
  field: 'message' | 'response',
  res: ServerResponse,
  signal: AbortSignal,
  toolAnswer: () => ToolAnswer | null = () => null,
): Promise<number> {
  const started = process.hrtime.bigint();
  const model = await resolveOllamaModel(service, request.model);
  const contextSize = Math.min(request.numCtx ?? Infinity, service.contextFor(model));
  const head = () => ({ model: request.model, created_at: new Date().toISOString() });
  // The reasoning, when the request's `think` splits it, in `thinking` beside the content (left out when empty, as Ollama does).
  const answer = (content: string, calls: AnsweredToolCall[] | null = null, reasoning = '') => {
    const thinking = reasoning === '' ? {} : { thinking: reasoning };
    return field === 'message'
      ? {
          message: {
            role: 'assistant',
            content,
            ...thinking,
            ...(calls ? { tool_calls: calls.map(ollamaToolCall) } : {}),
          },
        }
      : { response: content, ...thinking };
  };

  if (loadOnly && request.keepAliveMs === 0) {
    await service.queues.run(model.id, () => service.engines.unload(model.entry.path));
    return reply(res, { ...head(), ...answer(''), done: true, done_reason: 'unload' });
  }
  if (loadOnly) {
    await load(service, model, contextSize, request.keepAliveMs);
    return reply(res, { ...head(), ...answer(''), done: true, done_reason: 'load' });
  }

  return withGenerationPlan(
    service,
    model,
    request,
    prompt,
    signal,
    async (text, planned) => {
      const plan = { ...planned, keepAliveMs: request.keepAliveMs };
      const last = (generated: Generated, content: string) => ({
        ...head(),
        ...answer(content),
        done: true,
        done_reason: generated.finishReason,
        total_duration: Number(process.hrtime.bigint() - started),
        load_duration: nanoseconds(generated.durations.loadMs ?? 0),
        prompt_eval_count: generated.promptTokens,
        prompt_eval_duration: nanoseconds(generated.durations.ttftMs),
        eval_count: generated.completionTokens,
        eval_duration: nanoseconds(generated.durations.decodeMs),
      });

      const tools = toolAnswer();
      if (!request.stream) {
        const generated = await generate(service, text, plan, signal);
        if (!generated) return CLIENT_LEFT;
        if (!tools) return reply(res, { ...last(generated, ''), ...answer(generated.text, null, generated.reasoning) });
        const shown = tools.push(generated.text);
        const { content, calls, complete } = tools.end();
        return reply(res, {
          ...last(generated, ''),
          ...answer(shown + content, wholeCalls(calls, complete), generated.reasoning),
        });
      }
      // Opened with the first text, so that a request refused before it (a full queue) keeps its status.
      let stream: NdjsonWriter | null = null;
      const open = () => (stream ??= new NdjsonWriter(res));
      try {
        const generated = await generate(service, text, plan, signal, (piece) => {
          const shown = tools ? tools.push(piece.text) : piece.text;
          if (shown !== '' || piece.reasoning !== '')
            open().send({ ...head(), ...answer(shown, null, piece.reasoning), done: false });
        });
        if (!generated) return CLIENT_LEFT;
        const rest = tools?.end();
        // As Ollama streams them: the calls in a line of their own, before the last.
        const calls = rest ? wholeCalls(rest.calls, rest.complete) : null;
        if (rest && (rest.content !== '' || calls))
          open().send({ ...head(), ...answer(rest.content, calls), done: false });
        open().end(last(generated, ''));
        return 200;
      } catch (err) {
        if (!stream) throw err;
        const error = toOpenAiError(err);
        (stream as NdjsonWriter).end(ollamaErrorBody(error));
        return error.status;
      }
    },
    contextSize,
  );
}

/** Loads the model into an engine, after the requests queued for it. */
function load(service: OpenAiService, model: ServedModel, contextSize: number, keepAliveMs: KeepAlive): Promise<void> {
  return service.queues.run(model.id, () =>
    service.engines.withModel({ path: model.entry.path, ctx: contextSize, keepAliveMs }, ({ loadMs }) => {
      if (loadMs !== null) service.metrics.loaded(model.id, loadMs);
    }),
  );
}

/**
 * The calls Ollama can answer: its arguments are objects, so a call cut short (num_predict) is left
 * out; the answer's done_reason "length" says why.
 */
function wholeCalls(calls: AnsweredToolCall[] | null, complete: boolean): AnsweredToolCall[] | null {
  return complete ? calls : null;
}

/** A call as Ollama answers it: the arguments as an object. */
function ollamaToolCall(call: AnsweredToolCall): object {
  return { function: { name: call.name, arguments: JSON.parse(call.arguments) as unknown } };
}

function nanoseconds(ms: number): number {
  return Math.round(ms * 1e6);
}
