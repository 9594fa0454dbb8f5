/**
 * Tool calls and results in the transcript: what a message shows as cards. The calls come parsed
 * from the back end (MessageView.toolCalls, in the chat model's own syntax); here they are only
 * laid out.
 */
import type { ChatFunctionTool, MessageView } from '../../src-preload/api';

/** A card: its title ("Called get_weather", "Tool result") and its body, JSON indented. */
export interface ToolCard {
  title: string;
  body: string;
}

/** What a message shows: its text (for an answer with calls, the text before them) and its cards. */
export interface MessageParts {
  text: string;
  cards: ToolCard[];
}

export function messageParts(message: MessageView): MessageParts {
  if (message.role === 'tool')
    return {
      text: '',
      cards: [{ title: message.error ? 'Tool error' : 'Tool result', body: prettyJson(message.content) }],
    };
  if (!message.toolCalls) return { text: message.content, cards: [] };
  return {
    text: message.toolCalls.content,
    cards: message.toolCalls.calls.map((call) => ({ title: `Called ${call.name}`, body: prettyJson(call.arguments) })),
  };
}

/** `text` indented as JSON when it is JSON; as written otherwise (a call cut short, a result in words). */
export function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** Whether the conversation on show ends with an answer that called a tool: the next message may be its result. */
export function awaitsToolResult(path: readonly MessageView[]): boolean {
  const last = path.at(-1);
  return last?.role === 'assistant' && last.status !== 'streaming' && (last.toolCalls?.calls.length ?? 0) > 0;
}

/** The chat settings' "Tools (JSON)" text for `tools`: an OpenAI tools list, indented; empty for none. */
export function toolsFieldText(tools: readonly ChatFunctionTool[] | undefined): string {
  return tools?.length ? JSON.stringify(tools, null, 2) : '';
}

/** The "Tools (JSON)" text read: a list for the back end to check (empty text: none), or what is wrong with it. */
export function readToolsField(text: string): { tools: unknown[] } | { error: string } {
  if (text.trim() === '') return { tools: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return { error: `Tools (JSON) is not valid JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (!Array.isArray(value))
    return {
      error:
        'Tools (JSON) must be a list: [{ "type": "function", "function": { "name", "description", "parameters" } }, …]',
    };
  return { tools: value };
}
