/** `POST /v1/completions`: raw text continued, with BOS first when the model wants one (as `gufo run` and llama.cpp). */
import type { ModelText, PromptSource } from '../chat/prompt';
import { invalidParam } from './errors';
import { completionLogprobs } from './logprobs';
import { parseCompletion, type CompletionRequest } from './requests';
import type { EndpointShape } from './serve-generation';

export const COMPLETIONS: EndpointShape<CompletionRequest> = {
  idPrefix: 'cmpl',
  object: 'text_completion',
  chunkObject: 'text_completion',
  parse: parseCompletion,

  prompt: (text, request) => ({
    source: promptSource(text, request.prompt),
    stopIds: text.vocab.eog,
    stripLeadingSpace: false,
    param: 'prompt',
  }),

  pieceChoice: (text, request, piece) => ({
    index: 0,
    text: piece.text,
    logprobs: request.logprobs === null ? null : completionLogprobs(text.tokenizer, piece.tokens, piece.offsets),
    finish_reason: null,
  }),

  closingChoices: (_text, _request, generated) => [
    { index: 0, text: '', logprobs: null, finish_reason: generated.finishReason },
  ],

  responseChoice: (text, request, generated) => ({
    index: 0,
    text: generated.text,
    logprobs:
      request.logprobs === null ? null : completionLogprobs(text.tokenizer, generated.tokens, generated.offsets),
    finish_reason: generated.finishReason,
  }),
};

/** The prompt: text to tokenize (special-token texts read as those tokens), or ids checked against the vocabulary. */
function promptSource(text: ModelText, prompt: string | number[]): PromptSource | number[] {
  if (!Array.isArray(prompt)) return { kind: 'text', text: prompt };
  const size = text.vocab.tokens.length;
  const bad = prompt.find((id) => id >= size);
  if (bad !== undefined) throw invalidParam('prompt', `token id ${bad} is not in the vocabulary of ${size} tokens`);
  return prompt;
}
