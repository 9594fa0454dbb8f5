/** `POST /v1/chat/completions`: the messages rendered with the model's chat template, answered as the assistant (text or tool calls). */
import { defaultPromptFormat } from '../../core/prompt-format';
import { answerShape, type ModelText } from '../chat/prompt';
import { chatLogprobContent } from './logprobs';
import type { PromptInput } from './plan';
import { splitsReasoning } from './reasoning';
import { parseChatCompletion, type ChatCompletionRequest } from './requests';
import type { EndpointShape } from './serve-generation';
import { toolPrompt, type AnsweredToolCall, type AnsweredToolCallDelta, type ToolAnswer } from './tools';

/** Each request's answer being split into content and tool calls (made with its prompt, read as it streams). */
const answers = new WeakMap<ChatCompletionRequest, ToolAnswer>();

export const CHAT_COMPLETIONS: EndpointShape<ChatCompletionRequest> = {
  idPrefix: 'chatcmpl',
  object: 'chat.completion',
  chunkObject: 'chat.completion.chunk',
  parse: parseChatCompletion,

  prompt: chatPrompt,

  openingChoice: () => ({ index: 0, delta: { role: 'assistant', content: '' }, logprobs: null, finish_reason: null }),

  pieceChoice(text, request, piece) {
    const { content, calls } = answers.get(request)?.pushPiece(piece.text) ?? { content: piece.text, calls: [] };
    const { reasoning } = piece;
    if (content === '' && reasoning === '' && calls.length === 0 && request.logprobs === null) return null;
    return {
      index: 0,
      delta: {
        // llama.cpp's name for the reasoning, which OpenAI's own API never sends.
        ...(reasoning === '' ? {} : { reasoning_content: reasoning }),
        ...(content === '' && (calls.length > 0 || reasoning !== '') ? {} : { content }),
        ...(calls.length === 0 ? {} : { tool_calls: calls.map(openAiToolCallDelta) }),
      },
      logprobs:
        request.logprobs === null ? null : { content: chatLogprobContent(text.tokenizer, piece.tokens), refusal: null },
      finish_reason: null,
    };
  },

  closingChoices(_text, request, generated) {
    const answer = answers.get(request)?.end();
    const choice = (delta: object, finish: string | null = null) => ({
      index: 0,
      delta,
      logprobs: null,
      finish_reason: finish,
    });
    if (!answer) return [choice({}, generated.finishReason)];
    const out = answer.content === '' ? [] : [choice({ content: answer.content })];
    if (answer.deltas.length > 0) out.push(choice({ tool_calls: answer.deltas.map(openAiToolCallDelta) }));
    out.push(choice({}, finishReason(answer, generated.finishReason)));
    return out;
  },

  responseChoice(text, request, generated) {
    const answer = answers.get(request);
    const shown = answer?.push(generated.text);
    const split = answer ? answer.end() : null;
    const content = split ? shown + split.content : generated.text;
    return {
      index: 0,
      message: {
        role: 'assistant',
        content: split?.calls && content === '' ? null : content,
        ...(generated.reasoning === '' ? {} : { reasoning_content: generated.reasoning }),
        ...(split?.calls ? { tool_calls: split.calls.map(openAiToolCall) } : {}),
        refusal: null,
      },
      logprobs:
        request.logprobs === null
          ? null
          : { content: chatLogprobContent(text.tokenizer, generated.tokens), refusal: null },
      finish_reason: split ? finishReason(split, generated.finishReason) : generated.finishReason,
    };
  },
};

/**
 * The prompt of a chat request (Ollama's /api/chat and /api/generate make their prompts here too).
 * Ending with an assistant message asks the model to continue it rather than start a new turn. A
 * model without a chat template gets the messages as plain text, as in the app and `gufo chat`
 * (defaultPromptFormat); with tools it gets the built-in family, whose turns the calls need.
 */
export function chatPrompt(text: ModelText, request: ChatCompletionRequest): PromptInput {
  const answering = request.messages.at(-1)?.role !== 'assistant';
  const stopIds = text.stop;
  const { variables } = request.reasoning;
  const chat = {
    kind: 'chat' as const,
    messages: request.messages,
    addGenerationPrompt: answering,
    ...(Object.keys(variables).length > 0 ? { variables } : {}),
  };
  const reasoning = splitsReasoning(text, request.reasoning, request.model);
  if (!request.tools) {
    const format = defaultPromptFormat(text.hasChatTemplate);
    const shape = answerShape(text, format);
    return {
      source: { ...chat, format },
      stopIds: shape.stop,
      stripLeadingSpace: answering && shape.stripLeadingSpace,
      param: 'messages',
      reasoning,
    };
  }
  const tools = toolPrompt(text, request.tools);
  answers.set(request, tools.answer());
  return {
    source: { ...chat, tools: tools.tools, prefill: tools.prefill },
    stopIds,
    stripLeadingSpace: answering && tools.prefill === '',
    param: 'messages',
    reasoning,
    showToolMarkers: true,
    ...(tools.constraint ? { constraint: tools.constraint } : {}),
  };
}

/** The answer of a chat request with tools, split into content and calls (null: the request has no tools). */
export function chatAnswer(request: ChatCompletionRequest): ToolAnswer | null {
  return answers.get(request) ?? null;
}

/** "tool_calls" when the answer is whole calls; a call cut short ends as its generation did ("length"). */
function finishReason(answer: { calls: unknown[] | null; complete: boolean }, generated: string): string {
  return answer.calls && answer.complete ? 'tool_calls' : generated;
}

/** A piece of a call as OpenAI streams it: the id, type and name with the first, then argument fragments. */
function openAiToolCallDelta(delta: AnsweredToolCallDelta): object {
  const { index, id, name, arguments: args } = delta;
  return {
    index,
    ...(id === undefined ? {} : { id, type: 'function' }),
    function: { ...(name === undefined ? {} : { name }), arguments: args },
  };
}

function openAiToolCall(call: AnsweredToolCall): object {
  return { id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } };
}
