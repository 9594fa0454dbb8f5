/**
 * Tool calls in the app's chat: an assistant message's calls read from its text by the server's
 * parser (core/tool-calls), in the chat model's own syntax, for the transcript to show as cards.
 */
import type { MessageView } from '../../../src-preload/api';
import { splitToolCalls, type ToolCallSyntax } from '../../core/tool-calls/index';

/** `messages` with each finished assistant message's calls, and the text before them, beside its content. */
export function withToolCalls(messages: readonly MessageView[], syntax: ToolCallSyntax): MessageView[] {
  return messages.map((message) => {
    if (message.role !== 'assistant' || message.status === 'streaming') return message;
    const { content, calls } = splitToolCalls(syntax, message.content);
    return calls ? { ...message, toolCalls: { content, calls } } : message;
  });
}
