/**
 * `POST /v1/responses` bodies (OpenAI's Responses API) read into the request Chat Completions
 * plans and generates: `instructions` and the `input` items become chat messages, the flat
 * function tools the same tools, `text.format` the same JSON constraint. Gufo keeps no responses
 * (as Ollama's Responses API, it is stateless): fields that need stored ones are a 400 naming them.
 */
import type { ChatMessage, ChatToolCall } from '../../core/chat-template';
import { isRecord } from '../chat/settings';
import { invalidParam } from './errors';
import { RequestFields } from './request-fields';
import { callArguments, jsonOutput, ROLES, samplingOf, type ChatCompletionRequest } from './requests';
import { responsesReasoning } from './reasoning';
import { parseTools } from './tools';

export interface ResponsesRequest extends ChatCompletionRequest {
  /** What the response object repeats of the request, as OpenAI's does. */
  echo: {
    instructions: string | null;
    max_output_tokens: number | null;
    parallel_tool_calls: boolean;
    reasoning: unknown;
    temperature: number;
    text: { format: unknown };
    tool_choice: unknown;
    tools: unknown;
    top_p: number;
  };
}

const STATELESS = "Gufo keeps no responses (its Responses API is stateless, as Ollama's)";

export function parseResponses(body: unknown): ResponsesRequest {
  const f = RequestFields.of(body);
  const never = () => false;
  f.unsupported(
    'previous_response_id',
    never,
    `"previous_response_id" needs a stored response: ${STATELESS}; send the whole conversation in "input"`,
  );
  f.unsupported(
    'conversation',
    never,
    `"conversation" needs a stored conversation: ${STATELESS}; send the whole conversation in "input"`,
  );
  f.unsupported('prompt', never, `"prompt" (a stored prompt template) is not supported: ${STATELESS}`);
  f.unsupported(
    'background',
    (v) => v === false,
    '"background" is not supported: Gufo answers while the request is open',
  );
  f.unsupported(
    'truncation',
    (v) => v === 'disabled',
    '"truncation" must be "disabled": Gufo never leaves input items out; an input too long for the context is a 400',
  );
  f.unsupported(
    'top_logprobs',
    (v) => v === 0,
    '"top_logprobs" is not supported on /v1/responses yet: /v1/chat/completions reports logprobs',
  );
  // Other extras (reasoning.encrypted_content, …) are outputs Gufo never makes: nothing to include.
  if (f.has('include') && (!Array.isArray(f.body.include) || !f.body.include.every((v) => typeof v === 'string')))
    throw invalidParam('include', '"include" must be a list of names');
  if (Array.isArray(f.body.include) && f.body.include.includes('message.output_text.logprobs'))
    throw invalidParam(
      'include',
      '"include": "message.output_text.logprobs" is not supported on /v1/responses yet: /v1/chat/completions reports logprobs',
      'unsupported_parameter',
    );
  // Accepted and ignored, as Ollama does: nothing is stored either way.
  f.boolean('store', false);
  if (f.has('reasoning') && !isRecord(f.body.reasoning))
    throw invalidParam('reasoning', '"reasoning" must be an object { "effort", "summary" }');
  const text = f.body.text;
  if (text !== undefined && text !== null && !isRecord(text))
    throw invalidParam('text', '"text" must be an object { "format": { "type": ... } }');
  const format = isRecord(text) ? text.format : undefined;
  const constraint = jsonOutput(format, 'text.format', 'text.format', (spec) => spec);

  const instructions = f.body.instructions ?? null;
  if (instructions !== null && typeof instructions !== 'string')
    throw invalidParam('instructions', '"instructions" must be text: the system message');
  const sampling = samplingOf(f);
  const maxTokens = f.integer('max_output_tokens', 1, 2 ** 31 - 1, null);
  const tools = parseTools(f, { flat: true, format: constraint ? 'text.format' : null });
  return {
    model: f.string('model'),
    stream: f.boolean('stream', false),
    includeUsage: false,
    maxTokens,
    stop: [],
    sampling,
    logprobs: null,
    constraint,
    messages: [...(instructions ? [{ role: 'system', content: instructions }] : []), ...inputMessages(f)],
    tools,
    reasoning: responsesReasoning(f),
    echo: {
      instructions,
      max_output_tokens: maxTokens,
      parallel_tool_calls: f.boolean('parallel_tool_calls', true),
      reasoning: f.body.reasoning ?? { effort: null, summary: null },
      temperature: sampling.temperature,
      text: { format: format ?? { type: 'text' } },
      tool_choice: f.body.tool_choice ?? 'auto',
      tools: f.body.tools ?? [],
      top_p: sampling.topP,
    },
  };
}

/**
 * `input`: text (one user message), or items: messages (content text or text parts), the model's
 * earlier `function_call`s (joined to the assistant turn before them) and their
 * `function_call_output`s (tool messages, with the function's name for templates that print it).
 */
function inputMessages(f: RequestFields): ChatMessage[] {
  const value = f.body.input;
  if (!f.has('input')) throw invalidParam('input', '"input" is required', 'missing_required_parameter');
  if (typeof value === 'string') return [{ role: 'user', content: value }];
  if (!Array.isArray(value) || value.length === 0)
    throw invalidParam('input', '"input" must be text or a non-empty list of items');
  const messages: ChatMessage[] = [];
  const callNames = new Map<string, string>();
  value.forEach((item: unknown, i) => {
    const at = `input[${i}]`;
    if (!isRecord(item)) throw invalidParam(at, `${at} must be an object, such as { "role", "content" }`);
    // A message may leave out its type (the API's "easy" input message).
    switch (item.type ?? 'message') {
      case 'message': {
        const role = typeof item.role === 'string' && item.role !== 'tool' ? ROLES[item.role] : undefined;
        if (!role)
          throw invalidParam(
            `${at}.role`,
            `${at}.role must be user, system, developer or assistant (got ${JSON.stringify(item.role) ?? 'nothing'})`,
          );
        messages.push({ role, content: itemText(item.content, `${at}.content`) });
        return;
      }
      case 'function_call': {
        const name = text(item.name, `${at}.name`);
        const id = text(item.call_id, `${at}.call_id`);
        const call: ChatToolCall = {
          id,
          type: 'function',
          function: { name, arguments: callArguments(item.arguments, `${at}.arguments`) },
        };
        callNames.set(id, name);
        const last = messages.at(-1);
        if (last?.role === 'assistant')
          messages[messages.length - 1] = { ...last, tool_calls: [...(last.tool_calls ?? []), call] };
        else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
        return;
      }
      case 'function_call_output': {
        const id = text(item.call_id, `${at}.call_id`);
        const name = callNames.get(id);
        messages.push({
          role: 'tool',
          tool_call_id: id,
          ...(name === undefined ? {} : { name }),
          content: itemText(item.output, `${at}.output`),
        });
        return;
      }
      case 'reasoning':
        // Gufo writes no reasoning items; a client's own are left out, as chat templates leave out earlier turns' reasoning.
        return;
      case 'item_reference':
        throw invalidParam(
          at,
          `${at} is an "item_reference", which needs a stored response: ${STATELESS}; send the item itself (the AI SDK does with providerOptions.openai.store = false)`,
          'unsupported_parameter',
        );
      default:
        throw invalidParam(
          `${at}.type`,
          `${at}.type must be "message", "function_call" or "function_call_output" (got ${JSON.stringify(item.type)})`,
        );
    }
  });
  return messages;
}

/** A message's content or a call's output: text, or text parts (joined with newlines, as Chat Completions' are). */
function itemText(content: unknown, at: string): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) throw invalidParam(at, `${at} must be text or a list of text parts`);
  return content
    .map((part: unknown, i) => {
      if (
        !isRecord(part) ||
        (part.type !== 'input_text' && part.type !== 'output_text') ||
        typeof part.text !== 'string'
      )
        throw invalidParam(
          `${at}[${i}]`,
          `${at}[${i}] must be a text part { "type": "input_text", "text": "..." }: Gufo's models read text only`,
        );
      return part.text;
    })
    .join('\n');
}

function text(value: unknown, at: string): string {
  if (typeof value !== 'string' || value === '') throw invalidParam(at, `${at} must be a non-empty string`);
  return value;
}
