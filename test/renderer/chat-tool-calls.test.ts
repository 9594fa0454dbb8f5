import { describe, expect, it } from 'vitest';
import type { MessageView } from '../../src-preload/api';
import {
  awaitsToolResult,
  messageParts,
  prettyJson,
  readToolsField,
  toolsFieldText,
} from '../../src-renderer/lib/chat-tool-calls';

const message = (fields: Partial<MessageView>): MessageView => ({
  id: 1,
  chatId: 1,
  parentId: null,
  role: 'assistant',
  content: '',
  status: 'done',
  stats: null,
  error: null,
  createdAt: '2026-01-01T00:00:00.000Z',
  ...fields,
});

describe('messageParts', () => {
  it('shows an answer with calls as its text before them and a "Called NAME" card per call, arguments indented', () => {
    const answer = message({
      content: 'Let me check.<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>',
      toolCalls: {
        content: 'Let me check.',
        calls: [
          { name: 'get_weather', arguments: '{"city":"Paris"}' },
          { name: 'now', arguments: '{}' },
        ],
      },
    });
    expect(messageParts(answer)).toEqual({
      text: 'Let me check.',
      cards: [
        { title: 'Called get_weather', body: '{\n  "city": "Paris"\n}' },
        { title: 'Called now', body: '{}' },
      ],
    });
  });

  it('shows a tool message as a "Tool result" card, and any other message as its text', () => {
    expect(messageParts(message({ role: 'tool', content: '{"temperature":18}' }))).toEqual({
      text: '',
      cards: [{ title: 'Tool result', body: '{\n  "temperature": 18\n}' }],
    });
    expect(messageParts(message({ role: 'tool', content: 'sunny, 18 °C' })).cards).toEqual([
      { title: 'Tool result', body: 'sunny, 18 °C' },
    ]);
    expect(messageParts(message({ content: 'Hello **there**.' }))).toEqual({ text: 'Hello **there**.', cards: [] });
  });

  it('shows a failed MCP call (its message has an error) as a "Tool error" card with the text the model got', () => {
    const failed = message({
      role: 'tool',
      content: 'Error: local/hang: timed out',
      status: 'error',
      error: 'timed out',
    });
    expect(messageParts(failed).cards).toEqual([{ title: 'Tool error', body: 'Error: local/hang: timed out' }]);
  });

  it('keeps arguments that are not whole JSON (a call cut short) as written', () => {
    expect(prettyJson('{"a":[1,2')).toBe('{"a":[1,2');
  });
});

describe('awaitsToolResult', () => {
  it('offers a tool result only after a finished answer that called a tool', () => {
    const call = { content: '', calls: [{ name: 'now', arguments: '{}' }] };
    const user = message({ role: 'user', content: 'What time is it?' });
    expect(awaitsToolResult([user, message({ id: 2, toolCalls: call })])).toBe(true);
    expect(awaitsToolResult([user, message({ id: 2, content: 'Noon.' })])).toBe(false);
    expect(awaitsToolResult([user, message({ id: 2, toolCalls: call, status: 'streaming' })])).toBe(false);
    expect(awaitsToolResult([user])).toBe(false);
    expect(awaitsToolResult([])).toBe(false);
  });
});

describe('the "Tools (JSON)" field', () => {
  it('shows the tools indented, reads them back, and says what is wrong with text that is not a JSON list', () => {
    const tools = [{ type: 'function' as const, function: { name: 'now', parameters: { type: 'object' } } }];
    expect(readToolsField(toolsFieldText(tools))).toEqual({ tools });
    expect(toolsFieldText(undefined)).toBe('');
    expect(readToolsField('  ')).toEqual({ tools: [] });
    expect(readToolsField('[{"type": "function",')).toEqual({
      error: expect.stringMatching(/^Tools \(JSON\) is not valid JSON: /) as string,
    });
    expect(readToolsField('{"type": "function"}')).toEqual({
      error: expect.stringMatching(/^Tools \(JSON\) must be a list/) as string,
    });
  });
});
