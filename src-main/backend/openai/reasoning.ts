/**
 * What a request asks of a reasoning model, on OpenAI's and Ollama's chat endpoints: whether it
 * should think (and how hard), given to the chat template as `enable_thinking` and
 * `reasoning_effort` (the names Qwen 3's and gpt-oss's templates read, as llama.cpp passes them),
 * and whether the answer's reasoning comes back apart from its content (core/reasoning.ts).
 */
import { isRecord } from '../chat/settings';
import type { ModelText } from '../chat/prompt';
import { invalidParam } from './errors';
import type { RequestFields } from './request-fields';

export interface ReasoningRequest {
  /** Template variables: enable_thinking, reasoning_effort and a request's chat_template_kwargs. */
  variables: Record<string, unknown>;
  /**
   * 'always': the reasoning comes back apart; 'never': it stays in the content; 'model': apart
   * when the model thinks; 'unstoppable': apart only for a model that always thinks (gpt-oss).
   */
  split: 'always' | 'never' | 'model' | 'unstoppable';
  /** The field that asked for thinking (Ollama's `think`): a model whose template cannot think is a 400 naming it. */
  demandedBy: string | null;
}

/** OpenAI's `reasoning_effort` levels ("none" asks for no reasoning). */
const EFFORTS = ['none', 'minimal', 'low', 'medium', 'high', 'xhigh'];
/** llama.cpp's `reasoning_format` values Gufo serves: "none" leaves the reasoning in the content. */
const FORMATS = ['none', 'auto', 'deepseek'];

/** Chat Completions: `reasoning_effort`, `chat_template_kwargs` and `reasoning_format` (llama.cpp's). */
export function openAiReasoning(
  f: RequestFields,
  effort: unknown = f.body.reasoning_effort,
  effortParam = 'reasoning_effort',
): ReasoningRequest {
  const variables = templateKwargs(f.body.chat_template_kwargs);
  const level = effortOf(effort, effortParam);
  // As llama.cpp: an effort decides enable_thinking over the kwargs, and reaches the template too (gpt-oss reads it).
  if (level !== null) Object.assign(variables, { enable_thinking: level !== 'none', reasoning_effort: level });
  const format = f.has('reasoning_format') ? f.body.reasoning_format : 'auto';
  if (typeof format !== 'string' || !FORMATS.includes(format))
    throw invalidParam('reasoning_format', `"reasoning_format" must be ${quoted(FORMATS)}`);
  return { variables, split: format === 'none' ? 'never' : 'always', demandedBy: null };
}

/** The Responses API: `reasoning.effort` is Chat Completions' `reasoning_effort`. */
export function responsesReasoning(f: RequestFields): ReasoningRequest {
  const reasoning = isRecord(f.body.reasoning) ? f.body.reasoning : {};
  return openAiReasoning(f, reasoning.effort, 'reasoning.effort');
}

/**
 * Ollama's `think`: true or false, or a level ("low", "medium", "high"; "max" is taken as "high",
 * as Ollama does). Left out, a model that thinks does, and its reasoning comes back apart. gpt-oss
 * cannot stop (its template has no switch): false leaves its reasoning apart, as in Ollama.
 */
export function ollamaThink(f: RequestFields): ReasoningRequest {
  const think = f.body.think;
  if (think === undefined || think === null) return { variables: {}, split: 'model', demandedBy: null };
  if (think === false) return { variables: { enable_thinking: false }, split: 'unstoppable', demandedBy: null };
  if (think === true) return { variables: { enable_thinking: true }, split: 'always', demandedBy: 'think' };
  const levels = ['low', 'medium', 'high', 'max'];
  if (typeof think !== 'string' || !levels.includes(think))
    throw invalidParam('think', `"think" must be true, false or ${quoted(levels)}`);
  const level = think === 'max' ? 'high' : think;
  return { variables: { enable_thinking: true, reasoning_effort: level }, split: 'always', demandedBy: 'think' };
}

/** Whether `model`'s answer is split; a request that demands thinking of a model that cannot is a 400. */
export function splitsReasoning(text: ModelText, reasoning: ReasoningRequest, model: string): boolean {
  if (reasoning.demandedBy !== null && !text.thinks)
    throw invalidParam(reasoning.demandedBy, `"${model}" does not support thinking: its chat template writes none`);
  switch (reasoning.split) {
    case 'always':
      return true;
    case 'never':
      return false;
    case 'model':
      return text.thinks;
    case 'unstoppable':
      return text.alwaysThinks;
  }
}

function effortOf(value: unknown, param: string): string | null {
  if (value === undefined || value === null) return null;
  if (typeof value !== 'string' || !EFFORTS.includes(value))
    throw invalidParam(param, `"${param}" must be ${quoted(EFFORTS)}`);
  return value;
}

/** llama.cpp's `chat_template_kwargs`: more variables for the template, as they are. */
function templateKwargs(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (!isRecord(value)) throw invalidParam('chat_template_kwargs', '"chat_template_kwargs" must be an object');
  const enable = value.enable_thinking;
  if (enable !== undefined && typeof enable !== 'boolean')
    throw invalidParam('chat_template_kwargs', '"chat_template_kwargs.enable_thinking" must be true or false');
  return { ...value };
}

function quoted(values: readonly string[]): string {
  return values.map((v) => `"${v}"`).join(', ');
}
