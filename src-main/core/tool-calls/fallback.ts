/**
 * Tools for a chat template that does not render them: the functions are described in the
 * system prompt and the calls asked for in Hermes's form (<tool_call>{"name", "arguments"}</tool_call>,
 * the form Qwen 2.5's and Hermes's templates write), earlier calls are written into the
 * assistant's text in that form, and tool results reach the model as user turns in
 * <tool_response> tags, since such templates know no "tool" role.
 */
import type { ChatMessage, ChatTool } from '../chat-template';

const INSTRUCTIONS =
  '# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>';
const CALL_FORMAT =
  '\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>';

/** `messages` with `tools` described in the system prompt, and tool calls and results as text. */
export function withToolsInText(messages: readonly ChatMessage[], tools: readonly ChatTool[]): ChatMessage[] {
  const description = INSTRUCTIONS + tools.map((t) => '\n' + JSON.stringify(t)).join('') + CALL_FORMAT;
  const out = toolTurnsAsText(messages);
  const first = out[0];
  if (first?.role === 'system' && typeof first.content === 'string')
    out[0] = { ...first, content: `${first.content}\n\n${description}` };
  else out.unshift({ role: 'system', content: description });
  return out;
}

/** `messages` with tool calls and results as text, for a template that knows no "tool" role. */
export function toolTurnsAsText(messages: readonly ChatMessage[]): ChatMessage[] {
  return messages.map(asText);
}

function asText(message: ChatMessage): ChatMessage {
  if (message.role === 'tool') {
    return {
      role: 'user',
      content: `<tool_response>\n${typeof message.content === 'string' ? message.content : JSON.stringify(message.content)}\n</tool_response>`,
    };
  }
  if (message.role !== 'assistant' || !message.tool_calls?.length) return message;
  const calls = message.tool_calls.map((call) => {
    const args =
      typeof call.function.arguments === 'string' ? call.function.arguments : JSON.stringify(call.function.arguments);
    return `<tool_call>\n{"name": ${JSON.stringify(call.function.name)}, "arguments": ${args}}\n</tool_call>`;
  });
  const text = typeof message.content === 'string' && message.content !== '' ? [message.content, ...calls] : calls;
  return { role: 'assistant', content: text.join('\n') };
}
