/** From a checked request and its prompt to what the engine is asked: context checks, the length limit, sampling. */
import type { SamplingSettings } from '../../../src-preload/api';
import type { PromptSource, PromptTokens } from '../chat/prompt';
import { answerSeed, engineSampling } from '../chat/settings';
import { invalidParam, OpenAiError } from './errors';
import type { GenerationPlan } from './generation';
import type { ServedModel } from './model-ids';
import type { GenerationRequest } from './requests';
import type { JsonConstraint } from '../../core/constrained/token-constraint';

/** What an endpoint makes its prompt of, before it is tokenized. */
export interface PromptInput {
  /** Text or a conversation to tokenize, or token ids as the client sent them. */
  source: PromptSource | number[];
  /** Token ids that end the output. */
  stopIds: readonly number[];
  stripLeadingSpace: boolean;
  /** The request field the prompt came from, for errors. */
  param: 'messages' | 'prompt';
  /** Holds the output instead of the request's response_format (a forced tool call's schema). */
  constraint?: JsonConstraint;
  /** Tool-call markers that are control tokens are shown in the answer's text (a request with tools). */
  showToolMarkers?: boolean;
  /** The answer's leading reasoning comes back apart from its content (core/reasoning.ts). */
  reasoning?: boolean;
  /**
   * A conversation too long for the context with room to answer loses its oldest messages but the
   * system's and the last, as Ollama's /api/chat does.
   */
  truncate?: boolean;
}

/** The prompt tokenized, or found too long for the context without tokenizing it. */
export interface PromptSpec extends Omit<PromptInput, 'source'> {
  tokens: PromptTokens;
}

/**
 * The plan for `request`: a prompt that leaves no room in the context is a 400
 * (context_length_exceeded); the answer's length is lowered to what the context and the server's
 * cap allow.
 */
export function planGeneration(
  request: GenerationRequest,
  model: ServedModel,
  prompt: PromptSpec,
  contextSize: number,
  maxTokensCap: number,
): GenerationPlan {
  const { tokens } = prompt;
  const length = 'ids' in tokens ? `${tokens.ids.length}` : `at least ${tokens.atLeast}`;
  if (!('ids' in tokens) || tokens.ids.length >= contextSize) {
    throw new OpenAiError(
      400,
      'invalid_request_error',
      'context_length_exceeded',
      `the prompt has ${length} tokens, and the context of "${model.id}" holds ${contextSize} with the answer; shorten the ${prompt.param}`,
      prompt.param,
    );
  }
  const ids = tokens.ids;
  if (ids.length === 0)
    throw invalidParam(prompt.param, 'the prompt gives no tokens (and the model adds no BOS): give some text');
  const constraint = prompt.constraint ?? request.constraint;
  const s = request.sampling;
  const settings: SamplingSettings = {
    temperature: s.temperature,
    topK: s.topK,
    topP: s.topP,
    minP: s.minP,
    repeatPenalty: s.repeatPenalty,
    // The engine's seed is 32-bit; any whole number the client sends maps onto it.
    seed: s.seed === null ? null : Number(BigInt.asUintN(32, BigInt(s.seed))),
    maxTokens: Math.min(request.maxTokens ?? Infinity, maxTokensCap, contextSize - ids.length),
  };
  return {
    model,
    contextSize,
    prompt: ids,
    maxTokens: settings.maxTokens,
    sampling: {
      ...engineSampling(settings, answerSeed(settings)),
      presencePenalty: s.presencePenalty,
      frequencyPenalty: s.frequencyPenalty,
      ...(s.penaltyLastN === undefined ? {} : { penaltyLastN: s.penaltyLastN }),
    },
    stopIds: prompt.stopIds,
    stopStrings: request.stop,
    logprobs: request.logprobs,
    constraint,
    stripLeadingSpace: prompt.stripLeadingSpace,
    showToolMarkers: prompt.showToolMarkers ?? false,
    // Output held to JSON (a format, a forced call) is the answer from its first token: nothing to split.
    reasoning: prompt.reasoning && !constraint ? { opened: tokens.opensThinking ?? false } : null,
  };
}
