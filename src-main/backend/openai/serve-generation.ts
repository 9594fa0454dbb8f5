/**
 * What the generating endpoints share: check the request, find the model, build the prompt
 * with its tokenizer, generate, and answer as one JSON document or as a stream of chunks.
 * Each endpoint (chat-completions.ts, completions.ts) supplies its prompt and its shapes.
 */
import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../../node/server/http-server';
import type { ModelText, PromptSource, PromptTokens } from '../chat/prompt';
import { promptWorkersOf } from '../prompt-worker/index';
import { modelNotRunnable, toOpenAiError } from './errors';
import { generate, type Generated, type GeneratedPiece, type GenerationPlan } from './generation';
import type { ServedModel } from './model-ids';
import { planGeneration, type PromptInput } from './plan';
import type { GenerationRequest } from './requests';
import type { OpenAiService } from './service';
import { SseWriter } from './sse';

export interface EndpointShape<R extends GenerationRequest> {
  /** Response ids start with it ("chatcmpl"). */
  idPrefix: string;
  /** The response's `object`, and each stream chunk's. */
  object: string;
  chunkObject: string;
  parse(body: unknown): R;
  prompt(text: ModelText, request: R): PromptInput;
  /** `choices[0]` of the stream's first chunk, when the endpoint sends one before any text. */
  openingChoice?(): object;
  /** A piece's choice; null: nothing to send for it (text held back, e.g. a tool call being written). */
  pieceChoice(text: ModelText, request: R, piece: GeneratedPiece): object | null;
  /** The stream's last choices, each sent in a chunk of its own: text held back, tool calls, then the finish reason. */
  closingChoices(text: ModelText, request: R, generated: Generated): object[];
  responseChoice(text: ModelText, request: R, generated: Generated): object;
}

/** HTTP status recorded for a client that left before its answer (nginx's convention). */
export const CLIENT_LEFT = 499;

/** Serves one request; answers the HTTP status it ended with. Errors before any reply was sent are thrown. */
export async function serveGeneration<R extends GenerationRequest>(
  service: OpenAiService,
  shape: EndpointShape<R>,
  body: unknown,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<number> {
  const request = shape.parse(body);
  const model = await service.resolve(request.model);
  return withGenerationPlan(
    service,
    model,
    request,
    (text) => shape.prompt(text, request),
    signal,
    async (text, plan) => {
      const head = {
        id: `${shape.idPrefix}-${randomBytes(12).toString('hex')}`,
        created: Math.floor(Date.now() / 1000),
        model: model.id,
        system_fingerprint: `gufo-${service.ctx.version}`,
      };
      // The prompt is counted once (the KV cache keeps it between choices); every choice's tokens are.
      const usage = (all: Generated[]) => {
        const completion = all.reduce((sum, g) => sum + g.completionTokens, 0);
        const reasoning = all.reduce((sum, g) => sum + g.reasoningTokens, 0);
        const prompt = all[0]?.promptTokens ?? plan.prompt.length;
        return {
          prompt_tokens: prompt,
          completion_tokens: completion,
          total_tokens: prompt + completion,
          prompt_tokens_details: { cached_tokens: all[0]?.cachedTokens ?? 0 },
          // OpenAI's reasoning models report it so; only when there was reasoning, as llama.cpp sends none.
          ...(reasoning > 0 ? { completion_tokens_details: { reasoning_tokens: reasoning } } : {}),
        };
      };
      const choices = choicePlans(shape, text, request, plan);

      if (!request.stream) {
        const all: Generated[] = [];
        for (const choice of choices) {
          const generated = await generate(service, text, choice.plan, signal);
          if (!generated) return CLIENT_LEFT;
          all.push(generated);
        }
        sendJson(res, 200, {
          ...head,
          object: shape.object,
          choices: all.map((g, i) => indexed(shape.responseChoice(text, choices[i]!.request, g), i)),
          usage: usage(all),
        });
        return 200;
      }

      // The stream opens with the first text, so that a request refused before that (a full queue,
      // a model that fails to load) still gets its HTTP status.
      let stream = null as SseWriter | null;
      const chunk = (choices: object[]) => ({ ...head, object: shape.chunkObject, choices });
      const send = (choice: object, index: number) => {
        stream ??= new SseWriter(res);
        stream.send(chunk([indexed(choice, index)]));
      };
      try {
        const all: Generated[] = [];
        for (const [index, { plan, request: asked }] of choices.entries()) {
          let opened = false;
          const open = () => {
            if (opened) return;
            opened = true;
            const opening = shape.openingChoice?.();
            if (opening) send(opening, index);
          };
          const generated = await generate(service, text, plan, signal, (piece) => {
            const choice = shape.pieceChoice(text, asked, piece);
            if (!choice) return;
            open();
            send(choice, index);
          });
          if (!generated) return CLIENT_LEFT;
          open();
          for (const choice of shape.closingChoices(text, asked, generated)) send(choice, index);
          all.push(generated);
        }
        // Open: every choice sent at least its closing chunk.
        const out = stream!;
        if (request.includeUsage) out.send({ ...chunk([]), usage: usage(all) });
        out.done();
        return 200;
      } catch (err) {
        if (!stream) throw err;
        const error = toOpenAiError(err);
        stream.fail(error);
        return error.status;
      }
    },
  );
}

/**
 * One plan per choice (`n`), generated one after another: choice i draws with the seed plus i, so
 * a given seed gives the same n choices again, and different ones from each other. Each choice
 * after the first has a request of its own, made by the endpoint's prompt(), which sets up what
 * it reads its answer with (a chat's tool-call parser).
 */
function choicePlans<R extends GenerationRequest>(
  shape: EndpointShape<R>,
  text: ModelText,
  request: R,
  plan: GenerationPlan,
): { plan: GenerationPlan; request: R }[] {
  return Array.from({ length: request.choices ?? 1 }, (_, i) => {
    if (i === 0) return { plan, request };
    const own = { ...request };
    shape.prompt(text, own);
    return { plan: { ...plan, sampling: { ...plan.sampling, seed: (plan.sampling.seed + i) >>> 0 } }, request: own };
  });
}

/** A choice as the endpoint shaped it, numbered (the endpoints shape every choice as index 0). */
function indexed(choice: object, index: number): object {
  return { ...choice, index };
}

/**
 * The prompt of `request` tokenized with `model`'s tokenizer and planned against its context (a
 * prompt too long is a 400), then `serve`d: what every generating endpoint (OpenAI's and Ollama's)
 * does before it answers. `contextSize` lowers the context below the server's (Ollama's num_ctx).
 */
export async function withGenerationPlan<R extends GenerationRequest>(
  service: OpenAiService,
  model: ServedModel,
  request: R,
  prompt: (text: ModelText) => PromptInput,
  signal: AbortSignal,
  serve: (text: ModelText, plan: GenerationPlan) => Promise<number>,
  contextSize = service.contextFor(model),
): Promise<number> {
  if (model.entry.noGeneration !== null) throw modelNotRunnable(model.id, model.entry.noGeneration);
  const limits = service.limits();
  return service.texts.use(model.entry.path, model.entry.mtimeMs, async (text) => {
    const { source, truncate, ...input } = prompt(text);
    let tokens: PromptTokens;
    try {
      // Large prompts are tokenized off the event loop; one that cannot fit is refused untokenized.
      const room = contextSize - 1;
      const tokenize = (source: PromptSource) =>
        promptWorkersOf(service.ctx).run(text, model.entry.path, { kind: 'tokens', source, room }, signal);
      tokens = Array.isArray(source) ? { ids: source } : await tokenize(source);
      if (truncate && !Array.isArray(source) && source.kind === 'chat') {
        // Room for the answer as a chat keeps it: the smaller of its length limit and a quarter of the context.
        const reserve = Math.max(1, Math.min(request.maxTokens ?? Infinity, Math.floor(contextSize / 4)));
        tokens = await truncated(source, tokens, contextSize - reserve, tokenize);
      }
    } catch (err) {
      if (signal.aborted) return CLIENT_LEFT;
      throw err;
    }
    return serve(text, planGeneration(request, model, { ...input, tokens }, contextSize, limits.maxTokens));
  });
}

/**
 * Ollama's truncation: while the prompt does not fit `room`, the oldest message goes, except
 * system messages and the last one; the tokens of the first prompt that fits, or of the shortest
 * (which planGeneration refuses when even it leaves no room).
 */
async function truncated(
  source: Extract<PromptSource, { kind: 'chat' }>,
  whole: PromptTokens,
  room: number,
  tokenize: (source: PromptSource) => Promise<PromptTokens>,
): Promise<PromptTokens> {
  const fits = (tokens: PromptTokens) => 'ids' in tokens && tokens.ids.length <= room;
  let tokens = whole;
  const messages = [...source.messages];
  for (;;) {
    if (fits(tokens)) return tokens;
    const oldest = messages.findIndex((m, i) => m.role !== 'system' && i < messages.length - 1);
    if (oldest < 0) return tokens;
    messages.splice(oldest, 1);
    tokens = await tokenize({ ...source, messages });
  }
}
