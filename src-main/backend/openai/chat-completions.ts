/** `POST /v1/chat/completions`: the messages rendered with the model's chat template, answered as the assistant. */
import { chatLogprobContent } from './logprobs';
import { parseChatCompletion, type ChatCompletionRequest } from './requests';
import type { EndpointShape } from './serve-generation';

export const CHAT_COMPLETIONS: EndpointShape<ChatCompletionRequest> = {
  idPrefix: 'chatcmpl',
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  parse: parseChatCompletion,

  prompt(text, request) {
    // Ending with an assistant message asks the model to continue it rather than start a new turn.
    const answering = request.messages.at(-1)?.role !== 'assistant';
    return { source: { kind: 'chat', messages: request.messages, addGenerationPrompt: answering }, stopIds: text.stop, stripLeadingSpace: answering, param: 'messages' };
  },

  openingChoice: () => ({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }),

  pieceChoice: (text, request, piece) => ({
    index: 0,
    delta: { content: piece.text },
    logprobs: request.logprobs === null ? null : { content: chatLogprobContent(text.tokenizer, piece.tokens), refusal: null },
    finish_reason: null,
  }),

  closingChoice: (finish) => ({ index: 0, delta: {}, logprobs: null, finish_reason: finish }),

  responseChoice: (text, request, generated) => ({
    index: 0,
    message: { role: 'assistant', content: generated.text, refusal: null },
    logprobs: request.logprobs === null ? null : { content: chatLogprobContent(text.tokenizer, generated.tokens), refusal: null },
    finish_reason: generated.finishReason,
  }),
};
