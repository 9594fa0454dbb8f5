/**
 * llama.cpp's native `/completion` body (its tools/server/README.md), checked into the request the
 * OpenAI routes generate with, with llama.cpp's own sampling defaults (a llama.cpp client counts on
 * them), and the model a llama.cpp route serves when the body names none.
 */
import { MAX_PENALTY_LAST_N } from '../../engine-wire/protocol';
import { isRecord } from '../chat/settings';
import { invalidParam } from '../openai/errors';
import type { ServedModel } from '../openai/model-ids';
import { RequestFields } from '../openai/request-fields';
import { MAX_STOP_STRINGS, type CompletionRequest } from '../openai/requests';
import { schemaConstraint } from '../openai/schema-constraint';
import type { OpenAiService } from '../openai/service';

/** llama-server's defaults for the fields a request leaves out (common/common.h's common_params_sampling). */
export const LLAMA_DEFAULTS = {
  temperature: 0.8,
  top_k: 40,
  top_p: 0.95,
  min_p: 0.05,
  repeat_penalty: 1,
  repeat_last_n: 64,
};

/** `POST /completion`: text or token ids continued, as /v1/completions does (its `model` is picked by the caller). */
export function parseLlamaCompletion(f: RequestFields, model: string): CompletionRequest {
  f.unsupported(
    'n_probs',
    (v) => v === 0,
    '"n_probs" is not supported by Gufo yet: use /v1/completions with "logprobs"',
  );
  f.unsupported('grammar', (v) => v === '', '"grammar" (GBNF) is not supported by Gufo: send "json_schema"');
  const nPredict = f.integer('n_predict', -1, 2 ** 31 - 1, -1);
  if (nPredict === 0) throw invalidParam('n_predict', '"n_predict" must be -1 (no limit) or at least 1');
  const seed = f.integer('seed', -1, 2 ** 32 - 1, -1);
  const lastN = f.integer('repeat_last_n', -1, 2 ** 31 - 1, LLAMA_DEFAULTS.repeat_last_n);
  return {
    model,
    stream: f.boolean('stream', false),
    includeUsage: false,
    maxTokens: nPredict === -1 ? null : nPredict,
    stop: stopList(f.body.stop),
    logprobs: null,
    constraint: isRecord(f.body.json_schema)
      ? schemaConstraint(f.body.json_schema, 'json_schema', 'json_schema')
      : null,
    sampling: {
      temperature: f.number('temperature', 0, 100, LLAMA_DEFAULTS.temperature),
      topK: f.integer('top_k', 0, 1_000_000, LLAMA_DEFAULTS.top_k),
      topP: f.number('top_p', 0, 1, LLAMA_DEFAULTS.top_p),
      minP: f.number('min_p', 0, 1, LLAMA_DEFAULTS.min_p),
      repeatPenalty: f.number('repeat_penalty', 0.01, 10, LLAMA_DEFAULTS.repeat_penalty),
      presencePenalty: f.number('presence_penalty', -2, 2, 0),
      frequencyPenalty: f.number('frequency_penalty', -2, 2, 0),
      // -1: a random seed, as llama.cpp's LLAMA_DEFAULT_SEED.
      seed: seed === -1 ? null : seed,
      // -1: the whole context, of which the engine looks back at most MAX_PENALTY_LAST_N tokens.
      penaltyLastN: Math.min(lastN === -1 ? MAX_PENALTY_LAST_N : lastN, MAX_PENALTY_LAST_N),
    },
    prompt: promptOf(f.body.prompt),
  };
}

/** A prompt: text, or token ids. */
function promptOf(value: unknown): string | number[] {
  if (value === undefined || value === null)
    throw invalidParam('prompt', '"prompt" is required', 'missing_required_parameter');
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.length > 0 && value.every((id) => Number.isSafeInteger(id) && (id as number) >= 0))
    return value as number[];
  throw invalidParam('prompt', '"prompt" must be text or a non-empty list of token ids');
}

function stopList(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (
    !Array.isArray(value) ||
    value.length > MAX_STOP_STRINGS ||
    !value.every((s) => typeof s === 'string' && s !== '')
  )
    throw invalidParam('stop', `"stop" must be a list of at most ${MAX_STOP_STRINGS} non-empty strings`);
  return value as string[];
}

/**
 * The model a llama.cpp route serves: the one its `model` field names, else the one model loaded
 * now, else the library's only model; with several and none named, a 400 listing them.
 */
export async function llamaModel(service: OpenAiService, f: RequestFields): Promise<ServedModel> {
  if (f.has('model')) return service.resolve(f.string('model'));
  const models = await service.models();
  const loaded = new Set(service.engines.loaded().map((m) => m.path));
  const inMemory = models.filter((m) => loaded.has(m.entry.path));
  const only = inMemory.length === 1 ? inMemory[0] : models.length === 1 ? models[0] : undefined;
  if (only) return only;
  throw invalidParam(
    'model',
    models.length === 0
      ? 'the library has no model Gufo can run: add a GGUF file to it'
      : `"model" is required with several models in the library and ${inMemory.length === 0 ? 'none' : 'several'} loaded: one of ${models.map((m) => JSON.stringify(m.id)).join(', ')}`,
    'missing_required_parameter',
  );
}
