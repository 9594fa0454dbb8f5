/**
 * Errors as OpenAI's API answers them: `{ "error": { "message", "type", "param", "code" } }` with
 * an HTTP status, so clients (the official SDKs among them) show the message and react to the code.
 */
import { ChatTemplateError } from '../../core/chat-template';
import { VocabError } from '../../core/tokenizer/index';
import { EngineCrashedError, EngineRequestError } from '../../engine-wire/host';

export type OpenAiErrorType =
  'invalid_request_error' | 'authentication_error' | 'permission_error' | 'not_found_error' | 'server_error';

export class OpenAiError extends Error {
  override readonly name = 'OpenAiError';

  constructor(
    readonly status: number,
    readonly type: OpenAiErrorType,
    readonly code: string,
    message: string,
    /** The request field at fault, when there is one. */
    readonly param: string | null = null,
  ) {
    super(message);
  }

  get body(): { error: { message: string; type: OpenAiErrorType; param: string | null; code: string } } {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** A request field that is missing, malformed or out of range (400). */
export function invalidParam(param: string, message: string, code = 'invalid_value'): OpenAiError {
  return new OpenAiError(400, 'invalid_request_error', code, message, param);
}

export function modelNotFound(model: string): OpenAiError {
  return new OpenAiError(
    404,
    'invalid_request_error',
    'model_not_found',
    `The model "${model}" does not exist; GET /v1/models lists the models Gufo serves.`,
    'model',
  );
}

/** A model the library has but Gufo cannot run (vocabulary only, unsupported architecture, a part missing). */
export function modelNotRunnable(model: string, reason: string): OpenAiError {
  return new OpenAiError(
    400,
    'invalid_request_error',
    'model_not_supported',
    `The model "${model}" cannot be run: ${reason}.`,
    'model',
  );
}

/**
 * The OpenAI error for anything thrown while serving a request: our own as they are; a conversation
 * the chat template refuses, or a model whose tokenizer is unsupported, as the client's 400; an
 * engine that failed (no GPU) or crashed, and the rest (a file gone), as server errors with their message.
 */
export function toOpenAiError(err: unknown): OpenAiError {
  if (err instanceof OpenAiError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ChatTemplateError) return invalidParam('messages', message, 'invalid_messages');
  if (err instanceof VocabError)
    return new OpenAiError(400, 'invalid_request_error', 'model_not_supported', message, 'model');
  if (err instanceof EngineCrashedError)
    return new OpenAiError(500, 'server_error', 'engine_crashed', `the engine stopped: ${message}`);
  if (err instanceof EngineRequestError) return new OpenAiError(500, 'server_error', 'engine_error', message);
  return new OpenAiError(500, 'server_error', 'internal_error', message);
}
