/**
 * Embeddings for API requests (OpenAI's `POST /v1/embeddings`, Ollama's `/api/embed` and
 * `/api/embeddings`): texts tokenized as llama.cpp's server does (BOS and EOS as the vocabulary
 * wants them, special tokens parsed), or token ids as they are; each input embedded alone by the
 * engine (pooled by the file's pooling_type, mean without one; L2-normalized), after the model's
 * earlier requests, on an engine holding the model.
 */
import type { ServerResponse } from 'node:http';
import { sendJson } from '../../node/server/http-server';
import { invalidParam } from './errors';
import type { ServedModel } from './model-ids';
import { RequestFields } from './request-fields';
import type { OpenAiService } from './service';

/** A text, or token ids as they are. */
export type EmbeddingInput = string | number[];

/** Most inputs one request may embed. */
export const MAX_EMBEDDING_INPUTS = 2048;

export interface EmbeddingOptions {
  /** Cut inputs longer than the context to fit (Ollama's default), rather than refuse them. */
  truncate: boolean;
  /** The vector width the client expects (OpenAI's `dimensions`): refused unless the model's. */
  dimensions: number | null;
  /** A context smaller than the server's; null: the server's. */
  contextSize: number | null;
  /** How long the model stays loaded after this request (Ollama's keep_alive; see LoadSpec.keepAliveMs). */
  keepAliveMs?: number | null;
}

export interface Embedded {
  embeddings: number[][];
  promptTokens: number;
  /** Loading the model took this long; null: it was loaded. */
  loadMs: number | null;
}

/** Embeds `inputs` with `model`; `field` names the request field they came from, for errors. */
export async function embed(
  service: OpenAiService,
  model: ServedModel,
  inputs: readonly EmbeddingInput[],
  field: string,
  options: EmbeddingOptions,
): Promise<Embedded> {
  const ctx = Math.min(options.contextSize ?? Infinity, service.contextFor(model));
  const ids = await service.texts.use(model.entry.path, model.entry.mtimeMs, (text) =>
    inputs.map((input, i) => {
      const name = inputs.length > 1 ? `${field}[${i}]` : field;
      const tokens =
        typeof input === 'string' ? text.tokenizer.tokenize(input, { addSpecial: true, parseSpecial: true }) : input;
      const vocab = text.vocab.tokens.length;
      const bad = tokens.find((id) => id >= vocab);
      if (bad !== undefined)
        throw invalidParam(name, `token id ${bad} is not in the model's vocabulary of ${vocab} tokens`);
      if (tokens.length === 0) throw invalidParam(name, 'an input to embed must have at least one token');
      if (tokens.length <= ctx) return tokens;
      if (options.truncate) return tokens.slice(0, ctx);
      throw invalidParam(
        name,
        `the input has ${tokens.length} tokens, more than the context of ${ctx} the model is served with`,
        'context_length_exceeded',
      );
    }),
  );
  return service.queues.run(model.id, () =>
    service.engines.withModel(
      { path: model.entry.path, ctx, keepAliveMs: options.keepAliveMs, use: 'evaluate' },
      async ({ host, info, loadMs }) => {
        if (loadMs !== null) service.metrics.loaded(model.id, loadMs);
        const width = info.model?.embedding;
        if (options.dimensions !== null && options.dimensions !== width) {
          throw invalidParam(
            'dimensions',
            `model "${model.id}" makes embeddings of ${width} dimensions; it cannot shorten them to ${options.dimensions}`,
          );
        }
        const result = await host.embed(ids);
        return { embeddings: result.embeddings, promptTokens: result.promptTokens, loadMs };
      },
    ),
  );
}

/**
 * A request's inputs: a string, an array of strings, an array of token ids, or an array of such
 * arrays (OpenAI's `input`; Ollama's takes the strings only, `tokens` false).
 */
export function embeddingInputs(f: RequestFields, field: string, tokens: boolean): EmbeddingInput[] {
  const v = f.body[field];
  if (!f.has(field)) throw invalidParam(field, `"${field}" is required`, 'missing_required_parameter');
  const what = tokens
    ? 'a string, an array of strings, an array of token ids or an array of token-id arrays'
    : 'a string or an array of strings';
  const isIds = (x: unknown): x is number[] =>
    Array.isArray(x) && x.length > 0 && x.every((id) => Number.isSafeInteger(id) && id >= 0);
  let inputs: unknown[];
  if (typeof v === 'string') inputs = [v];
  else if (tokens && isIds(v)) inputs = [v];
  else if (Array.isArray(v) && v.length > 0) inputs = v;
  else throw invalidParam(field, `"${field}" must be ${what}`);
  if (inputs.length > MAX_EMBEDDING_INPUTS)
    throw invalidParam(field, `"${field}" holds ${inputs.length} inputs; at most ${MAX_EMBEDDING_INPUTS} per request`);
  inputs.forEach((input, i) => {
    if (typeof input === 'string') {
      if (input === '') throw invalidParam(`${field}[${i}]`, 'an input to embed must not be empty');
    } else if (!(tokens && isIds(input))) throw invalidParam(`${field}[${i}]`, `"${field}" must be ${what}`);
  });
  return inputs as EmbeddingInput[];
}

/** `POST /v1/embeddings`. */
export async function serveOpenAiEmbeddings(
  service: OpenAiService,
  body: unknown,
  res: ServerResponse,
): Promise<number> {
  const f = RequestFields.of(body);
  const model = await service.resolve(f.string('model'));
  const inputs = embeddingInputs(f, 'input', true);
  const format = f.has('encoding_format') ? f.body.encoding_format : 'float';
  if (format !== 'float' && format !== 'base64')
    throw invalidParam('encoding_format', '"encoding_format" must be "float" or "base64"');
  const dimensions = f.integer('dimensions', 1, Number.MAX_SAFE_INTEGER, null);
  const { embeddings, promptTokens } = await embed(service, model, inputs, 'input', {
    truncate: false,
    dimensions,
    contextSize: null,
  });
  sendJson(res, 200, {
    object: 'list',
    data: embeddings.map((v, index) => ({
      object: 'embedding',
      index,
      embedding: format === 'base64' ? base64Floats(v) : v,
    })),
    model: model.id,
    usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
  });
  return 200;
}

/** The vector as little-endian f32 bytes in base64 (what OpenAI's clients decode). */
function base64Floats(v: readonly number[]): string {
  const bytes = Buffer.alloc(v.length * 4);
  v.forEach((x, i) => bytes.writeFloatLE(x, i * 4));
  return bytes.toString('base64');
}
