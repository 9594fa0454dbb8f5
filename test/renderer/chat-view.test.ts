import { describe, expect, it } from 'vitest';
import type { ChatView, MessageView } from '../../src-preload/api';
import { applyChatEvent, isStreaming, mergeFetchedView } from '../../src-renderer/lib/chat-view';

function message(id: number, parentId: number | null, fields: Partial<MessageView> = {}): MessageView {
  return {
    id,
    chatId: 1,
    parentId,
    role: 'assistant',
    content: '',
    status: 'done',
    stats: null,
    error: null,
    createdAt: '2025-01-01T00:00:00Z',
    ...fields,
  };
}

function view(messages: MessageView[], activeLeafId: number | null, chatId = 1): ChatView {
  return {
    chat: {
      id: chatId,
      title: 'T',
      modelId: 3,
      modelName: 'stories',
      createdAt: '',
      updatedAt: '',
      messageCount: messages.length,
    },
    settings: {
      systemPrompt: '',
      sampling: { temperature: 0, topK: 40, topP: 1, minP: 0, repeatPenalty: 1, seed: null, maxTokens: 64 },
      contextSize: 256,
      contextOverflow: 'truncate-middle',
      promptFormat: 'model',
      kvCacheTypes: { k: null, v: null },
      thinking: null,
    },
    messages,
    activeLeafId,
    contextUsage: null,
    promptFormats: null,
    kvCacheDefault: { k: 'f16', v: 'f16' },
  };
}

describe('applyChatEvent', () => {
  it('continues the branch on show with messages written under its leaf, and streams deltas into them', () => {
    const v = view([message(1, null, { role: 'user', content: 'Hi' })], 1);
    expect(applyChatEvent(v, { type: 'chat-message', message: message(2, 1, { role: 'user', content: 'Once' }) })).toBe(
      'finished',
    );
    expect(applyChatEvent(v, { type: 'chat-message', message: message(3, 2, { status: 'streaming' }) })).toBe(
      'changed',
    );
    expect(v.activeLeafId).toBe(3);
    applyChatEvent(v, { type: 'chat-delta', chatId: 1, messageId: 3, text: ' upon' });
    applyChatEvent(v, { type: 'chat-delta', chatId: 1, messageId: 3, text: ' a time' });
    expect(v.messages.find((m) => m.id === 3)?.content).toBe(' upon a time');
    expect(isStreaming(v)).toBe(true);
  });

  it('keeps the streamed text when a status event repeats the message, and ends with the final one', () => {
    const v = view([message(3, null, { status: 'streaming', content: 'abc' })], 3);
    applyChatEvent(v, { type: 'chat-message', message: message(3, null, { status: 'streaming', content: '' }) });
    expect(v.messages[0]!.content).toBe('abc');
    const stats = {
      promptTokens: 5,
      reusedTokens: 0,
      generatedTokens: 3,
      ttftMs: 12,
      decodeTokS: 50,
      prefillTokS: 400,
      stopReason: 'stop' as const,
      seed: 7,
    };
    expect(
      applyChatEvent(v, {
        type: 'chat-message',
        message: message(3, null, { status: 'done', content: 'abcd', stats }),
      }),
    ).toBe('finished');
    expect(v.messages[0]).toMatchObject({ status: 'done', content: 'abcd', stats });
    expect(isStreaming(v)).toBe(false);
  });

  it('ignores deltas for finished messages and events of other chats', () => {
    const v = view([message(3, null, { content: 'final' })], 3);
    expect(applyChatEvent(v, { type: 'chat-delta', chatId: 1, messageId: 3, text: ' late' })).toBe('none');
    expect(applyChatEvent(v, { type: 'chat-delta', chatId: 2, messageId: 3, text: 'x' })).toBe('none');
    expect(applyChatEvent(v, { type: 'chat-message', message: { ...message(9, null), chatId: 2 } })).toBe('none');
    expect(applyChatEvent(v, { type: 'chats-changed' })).toBe('none');
    expect(v.messages).toEqual([message(3, null, { content: 'final' })]);
  });

  it('leaves the branch on show alone for a message written elsewhere in the tree', () => {
    const v = view([message(1, null, { role: 'user' }), message(2, 1)], 2);
    applyChatEvent(v, { type: 'chat-message', message: message(3, 1, { status: 'streaming' }) });
    expect(v.activeLeafId).toBe(2);
    expect(v.messages.map((m) => m.id)).toEqual([1, 2, 3]);
  });
});

describe('applyChatEvent and tool calls', () => {
  it("keeps the chat's waiting or running MCP call from its events, and ignores other chats'", () => {
    const v = view([message(1, null)], 1);
    const call = { messageId: 1, index: 0, server: 'local', name: 'add', arguments: '{}', state: 'asking' } as const;
    expect(applyChatEvent(v, { type: 'chat-tool-call', chatId: 2, toolCall: call })).toBe('none');
    expect(v.toolCall).toBeUndefined();
    expect(applyChatEvent(v, { type: 'chat-tool-call', chatId: 1, toolCall: call })).toBe('changed');
    expect(v.toolCall).toEqual(call);
    applyChatEvent(v, { type: 'chat-tool-call', chatId: 1, toolCall: null });
    expect(v.toolCall).toBeNull();
  });
});

describe('mergeFetchedView', () => {
  it('takes a fetched view of another chat, or the first one, as it is', () => {
    const fetched = view([message(5, null)], 5, 2);
    expect(mergeFetchedView(null, fetched)).toBe(fetched);
    expect(mergeFetchedView(view([message(1, null)], 1), fetched)).toBe(fetched);
  });

  it('keeps the text the deltas built for a message still streaming', () => {
    const local = view(
      [message(1, null, { role: 'user' }), message(2, 1, { status: 'streaming', content: 'Once upon a' })],
      2,
    );
    const fetched = view(
      [message(1, null, { role: 'user' }), message(2, 1, { status: 'streaming', content: 'Once upon' })],
      2,
    );
    fetched.contextUsage = {
      usedTokens: 40,
      contextSize: 256,
      droppedMessages: 0,
      overflow: 'rolling-window',
      policy: 'p',
    };
    const merged = mergeFetchedView(local, fetched);
    expect(merged.messages[1]!.content).toBe('Once upon a');
    expect(merged.contextUsage).toEqual(fetched.contextUsage);
  });

  it('keeps a message finished, with its final text, whichever side saw the end', () => {
    const streaming = message(2, 1, { status: 'streaming', content: 'Once' });
    const done = message(2, 1, { status: 'stopped', content: 'Once upon' });
    expect(mergeFetchedView(view([streaming], 2), view([done], 2)).messages[0]).toEqual(done);
    expect(mergeFetchedView(view([done], 2), view([streaming], 2)).messages[0]).toEqual(done);
  });

  it('keeps messages, and a leaf, created after the view was read', () => {
    const local = view(
      [
        message(1, null, { role: 'user' }),
        message(2, 1),
        message(3, 2, { role: 'user' }),
        message(4, 3, { status: 'streaming' }),
      ],
      4,
    );
    const fetched = view([message(1, null, { role: 'user' }), message(2, 1)], 2);
    const merged = mergeFetchedView(local, fetched);
    expect(merged.messages.map((m) => m.id)).toEqual([1, 2, 3, 4]);
    expect(merged.activeLeafId).toBe(4);
  });

  it('takes the branch the back end chose when it knows the leaf', () => {
    const local = view([message(1, null, { role: 'user' }), message(2, 1), message(3, 1)], 3);
    const fetched = view([message(1, null, { role: 'user' }), message(2, 1), message(3, 1)], 2);
    fetched.chat.title = 'Renamed';
    const merged = mergeFetchedView(local, fetched);
    expect(merged.activeLeafId).toBe(2);
    expect(merged.chat.title).toBe('Renamed');
  });
});
