/**
 * llama.cpp's native routes (llama-server's tools/server/README.md) where its clients look for them,
 * at the root of every listener that serves /v1: `GET /health`, `POST /completion`, `POST /tokenize`
 * and `POST /detokenize`, with llama.cpp's field names. The access rules, queues, metrics and
 * generation are /v1's (openai/routes.ts calls in here); errors are llama.cpp's
 * `{ "error": { "code", "message", "type" } }`.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson } from '../../node/server/http-server';
import type { ModelText } from '../chat/prompt';
import { COMPLETIONS } from '../openai/completions';
import { OpenAiError, invalidParam, toOpenAiError } from '../openai/errors';
import { generate, type Generated, type GenerationPlan } from '../openai/generation';
import { RequestFields } from '../openai/request-fields';
import { CLIENT_LEFT, withGenerationPlan } from '../openai/serve-generation';
import type { OpenAiService } from '../openai/service';
import { SseWriter } from '../openai/sse';
import { llamaModel, parseLlamaCompletion } from './requests';

const PATHS = new Set(['/health', '/completion', '/tokenize', '/detokenize']);

/** Whether a path is one of llama.cpp's native routes. */
export function isLlamaPath(pathname: string): boolean {
  return PATHS.has(pathname);
}

/** An error as llama-server sends one: its HTTP status repeated as `code`, and a type of its own for 503. */
export function llamaErrorBody(err: OpenAiError): { error: { code: number; message: string; type: string } } {
  return {
    error: { code: err.status, message: err.message, type: err.status === 503 ? 'unavailable_error' : err.type },
  };
}

/** Serves one request to a llama.cpp path; answers its HTTP status. Errors before any reply are thrown. */
export async function llamaRoute(
  service: OpenAiService,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
  body: () => Promise<unknown>,
  signal: AbortSignal,
): Promise<number> {
  if (pathname === '/health') {
    expectMethod(req, 'GET');
    // As llama-server while its model loads; Gufo loads models on demand, so this is any load under way.
    if (service.engines.loading) throw new OpenAiError(503, 'server_error', 'loading_model', 'Loading model', null);
    sendJson(res, 200, { status: 'ok' });
    return 200;
  }
  expectMethod(req, 'POST');
  const f = RequestFields.of(await body());
  const model = await llamaModel(service, f);
  if (pathname === '/completion') return serveCompletion(service, f, model, res, signal);
  return service.texts.use(model.entry.path, model.entry.mtimeMs, (text) => {
    sendJson(res, 200, pathname === '/tokenize' ? tokenize(text, f) : detokenize(text, f));
    return 200;
  });
}

/** `{ content, add_special?, parse_special?, with_pieces? }` → `{ tokens }`: ids, or `{ id, piece }` with the piece's text (its bytes when not whole UTF-8). */
function tokenize(text: ModelText, f: RequestFields): object {
  const content = f.body.content;
  if (typeof content !== 'string')
    throw invalidParam('content', '"content" is required: the text to tokenize', 'missing_required_parameter');
  const ids = text.tokenizer.tokenize(content, {
    addSpecial: f.boolean('add_special', false),
    parseSpecial: f.boolean('parse_special', true),
  });
  if (!f.boolean('with_pieces', false)) return { tokens: ids };
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  return {
    tokens: ids.map((id) => {
      const bytes = text.tokenizer.tokenToPiece(id, { renderSpecial: true });
      try {
        return { id, piece: utf8.decode(bytes) };
      } catch {
        return { id, piece: [...bytes] };
      }
    }),
  };
}

/** `{ tokens }` → `{ content }`, special tokens' texts included (as llama-server's). */
function detokenize(text: ModelText, f: RequestFields): object {
  const tokens = f.body.tokens ?? [];
  const size = text.vocab.tokens.length;
  if (!Array.isArray(tokens) || !tokens.every((id) => Number.isSafeInteger(id) && (id as number) >= 0))
    throw invalidParam('tokens', '"tokens" must be a list of token ids');
  const bad = (tokens as number[]).find((id) => id >= size);
  if (bad !== undefined) throw invalidParam('tokens', `token id ${bad} is not in the vocabulary of ${size} tokens`);
  return { content: text.tokenizer.detokenize(tokens as number[], { renderSpecial: true }) };
}

/** `/completion`: /v1/completions' generation, answered in llama.cpp's shape (streamed: `data: { content, stop }` events, the last one whole). */
async function serveCompletion(
  service: OpenAiService,
  f: RequestFields,
  model: Awaited<ReturnType<typeof llamaModel>>,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<number> {
  const request = parseLlamaCompletion(f, model.id);
  return withGenerationPlan(
    service,
    model,
    request,
    (text) => COMPLETIONS.prompt(text, request),
    signal,
    async (text, plan) => {
      const final = (g: Generated, content: string) => ({
        index: 0,
        content,
        tokens: [],
        id_slot: 0,
        stop: true,
        model: model.id,
        tokens_predicted: g.completionTokens,
        tokens_evaluated: g.promptTokens,
        tokens_cached: g.cachedTokens,
        generation_settings: settingsOf(plan),
        prompt: text.tokenizer.detokenize(plan.prompt, { renderSpecial: true }),
        has_new_line: g.text.includes('\n'),
        truncated: false,
        stop_type: g.stopWord !== null ? 'word' : g.finishReason === 'stop' ? 'eos' : 'limit',
        stopping_word: g.stopWord ?? '',
        timings: timingsOf(g),
      });
      if (!request.stream) {
        const generated = await generate(service, text, plan, signal);
        if (!generated) return CLIENT_LEFT;
        sendJson(res, 200, final(generated, generated.text));
        return 200;
      }
      // Opened with the first text, so that a request refused before that still gets its HTTP status.
      let stream = null as SseWriter | null;
      try {
        const generated = await generate(service, text, plan, signal, (piece) => {
          if (piece.text === '') return;
          stream ??= new SseWriter(res);
          stream.send({ index: 0, content: piece.text, stop: false, id_slot: 0 });
        });
        if (!generated) return CLIENT_LEFT;
        stream ??= new SseWriter(res);
        stream.send(final(generated, ''));
        stream.close();
        return 200;
      } catch (err) {
        if (!stream) throw err;
        const error = toOpenAiError(err);
        stream.send(llamaErrorBody(error));
        stream.close();
        return error.status;
      }
    },
  );
}

/** The settings the generation ran with, by llama.cpp's names (the seed the one drawn when none was given). */
function settingsOf(plan: GenerationPlan): object {
  const s = plan.sampling;
  return {
    n_predict: plan.maxTokens,
    seed: s.seed,
    temperature: s.temperature,
    top_k: s.topK,
    top_p: s.topP,
    min_p: s.minP,
    repeat_penalty: s.repeatPenalty,
    repeat_last_n: s.penaltyLastN,
    presence_penalty: s.presencePenalty,
    frequency_penalty: s.frequencyPenalty,
    stop: plan.stopStrings,
  };
}

/** llama-server's `timings`: the prompt's evaluation up to the first token, then the decoding. */
function timingsOf(g: Generated): object {
  const { ttftMs, decodeMs } = g.durations;
  const perToken = (ms: number, n: number) => (n > 0 ? ms / n : 0);
  const perSecond = (ms: number, n: number) => (ms > 0 ? (n * 1000) / ms : 0);
  return {
    prompt_n: g.promptTokens,
    prompt_ms: ttftMs,
    prompt_per_token_ms: perToken(ttftMs, g.promptTokens),
    prompt_per_second: perSecond(ttftMs, g.promptTokens),
    predicted_n: g.completionTokens,
    predicted_ms: decodeMs,
    predicted_per_token_ms: perToken(decodeMs, g.completionTokens),
    predicted_per_second: perSecond(decodeMs, g.completionTokens),
  };
}

function expectMethod(req: IncomingMessage, method: 'GET' | 'POST'): void {
  if (req.method !== method)
    throw new OpenAiError(405, 'invalid_request_error', 'method_not_allowed', `use ${method} for this route`);
}
