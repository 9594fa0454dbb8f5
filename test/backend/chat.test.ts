/**
 * The chat API without the GPU: settings, presets and checks, the tree, the context policy,
 * search, export, corrupt rows and a vanished model. Answers that reach the engine are in
 * chat-generation.test.ts and chat-kill.test.ts.
 */
import { copyFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TOOL_USE, type ChatView, type ContextOverflow, type MessageRole } from '../../src-preload/api';
import { renderChat } from '../../src-main/core/chat-template';
import { createTokenizer, readVocab } from '../../src-main/core/tokenizer/index';
import { openGguf } from '../../src-main/node/gguf-io';
import { ChatStore } from '../../src-main/node/store/chats';
import { CorruptRowError } from '../../src-main/node/store/json-column';
import { testBackend, type TestBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';
import { addModel, answered } from './fixtures/chat-backend';

/** A back end with stories260K (trained context 2048) in its library. */
function setup(dataDir?: string) {
  const backend = testBackend(dataDir ? { dataDir } : {});
  return { backend, api: backend.api, model: addModel(backend), store: new ChatStore(backend.context.db) };
}

/** Adds messages (user, assistant, user, ...) in a line under `parentId`; answers their ids. */
function addLine(
  store: ChatStore,
  chatId: number,
  contents: string[],
  parentId: number | null = null,
  firstRole: MessageRole = 'user',
): number[] {
  const ids: number[] = [];
  let role = firstRole;
  for (const content of contents) {
    parentId = store.addMessage({ chatId, parentId, role, content, status: 'done' }).id;
    ids.push(parentId);
    role = role === 'user' ? 'assistant' : 'user';
  }
  return ids;
}

describe('chat settings', () => {
  it('makes a chat from a preset with the default context capped by the model, and announces it', async () => {
    const { backend, api, model } = setup();
    const presets = await api.samplingPresets();
    expect(Object.keys(presets)).toEqual(['precise', 'balanced', 'creative']);
    expect(presets.precise.temperature).toBe(0);
    expect(presets.creative.temperature).toBeGreaterThan(presets.balanced.temperature);

    await api.updateSettings({ defaultContext: 8192 });
    const chat = await api.createChat({
      modelId: model.id,
      systemPrompt: 'You tell stories.',
      preset: 'precise',
      sampling: { maxTokens: 64, seed: 5 },
    });
    expect(model.contextLength).toBe(2048);
    expect(chat.settings).toEqual({
      systemPrompt: 'You tell stories.',
      sampling: { ...presets.precise, maxTokens: 64, seed: 5 },
      contextSize: 2048,
      promptFormat: 'completion',
      contextOverflow: 'truncate-middle',
      kvCacheTypes: { k: null, v: null },
      thinking: null,
      toolUse: DEFAULT_TOOL_USE,
    });
    expect(chat.chat).toMatchObject({ title: 'New chat', modelId: model.id, modelName: model.name, messageCount: 0 });
    expect(chat.messages).toEqual([]);
    expect(chat.activeLeafId).toBeNull();
    expect(backend.seen).toContainEqual({ type: 'chats-changed' });

    await api.updateSettings({ defaultContext: 512 });
    const other = await api.createChat({ modelId: model.id, title: '  Second  ' });
    expect(other.settings).toEqual({
      systemPrompt: '',
      sampling: presets.balanced,
      contextSize: 512,
      promptFormat: 'completion',
      contextOverflow: 'truncate-middle',
      kvCacheTypes: { k: null, v: null },
      thinking: null,
      toolUse: DEFAULT_TOOL_USE,
    });
    expect(other.chat.title).toBe('Second');
    expect((await api.listChats()).map((c) => c.id)).toEqual([other.chat.id, chat.chat.id]);
  });

  it('rejects bad settings with an error naming the field, and keeps the chat as it was', async () => {
    const { api, model } = setup();
    await expect(api.createChat({ modelId: model.id, contextSize: 4096 })).rejects.toThrow(
      'chat setting "contextSize" must be a whole number of tokens from 16 to 2048 (the model\'s trained context) (got 4096)',
    );
    await expect(api.createChat({ modelId: model.id, preset: 'wild' as never })).rejects.toThrow(
      'unknown sampling preset "wild"; use one of precise, balanced, creative',
    );
    await expect(api.createChat({ modelId: 999 })).rejects.toThrow('no model with id 999 in the library');
    await expect(api.createChat({ modelId: model.id, temperature: 1 } as never)).rejects.toThrow(
      '"temperature" is not something a new chat takes',
    );
    await expect(api.createChat({ modelId: model.id, title: ' ' })).rejects.toThrow(
      'a chat title must be text of 1 to 200 characters',
    );

    const chat = await api.createChat({ modelId: model.id });
    const id = chat.chat.id;
    await expect(api.updateChatSettings(id, { sampling: { topP: 0 } })).rejects.toThrow(
      'chat setting "sampling.topP" must be a number from 0 (exclusive) to 1 (got 0)',
    );
    await expect(api.updateChatSettings(id, { sampling: { temperature: Number.NaN } })).rejects.toThrow(
      'chat setting "sampling.temperature" must be a number from 0 to 5',
    );
    await expect(api.updateChatSettings(id, { sampling: { seed: -1 } })).rejects.toThrow(
      'chat setting "sampling.seed" must be null',
    );
    await expect(api.updateChatSettings(id, { sampling: { maxTokens: 1.5 } })).rejects.toThrow(
      'chat setting "sampling.maxTokens" must be a whole number of tokens',
    );
    await expect(api.updateChatSettings(id, { sampling: { beamWidth: 4 } as never })).rejects.toThrow(
      'chat setting "sampling.beamWidth" is not a sampling setting',
    );
    await expect(api.updateChatSettings(id, { systemPrompt: 7 as never })).rejects.toThrow(
      'chat setting "systemPrompt" must be text (got 7)',
    );
    await expect(api.updateChatSettings(id, { model: 'x' } as never)).rejects.toThrow(
      'chat setting "model" is not a chat setting',
    );
    expect((await api.getChat(id)).settings).toEqual(chat.settings);

    const changed = await api.updateChatSettings(id, {
      systemPrompt: 'Short answers.',
      sampling: { temperature: 0, seed: 3 },
      contextSize: 1024,
    });
    expect(changed.settings).toEqual({
      systemPrompt: 'Short answers.',
      sampling: { ...chat.settings.sampling, temperature: 0, seed: 3 },
      contextSize: 1024,
      promptFormat: 'completion',
      contextOverflow: 'truncate-middle',
      kvCacheTypes: { k: null, v: null },
      thinking: null,
      toolUse: DEFAULT_TOOL_USE,
    });
    expect((await api.getChat(id)).settings).toEqual(changed.settings);
  });

  it('moves a chat to another model (issue #30 item 11): messages kept, the context within the new one', async () => {
    const { backend, api, model, store } = setup();
    const chat = await api.createChat({ modelId: model.id, contextSize: 2048, systemPrompt: 'Be brief.' });
    const id = chat.chat.id;
    addLine(store, id, ['Hello', 'Hi there.']);
    const path = join(tempDir(), 'short-context.gguf');
    await writeRandomModel(path, { nLayer: 1, nEmbd: 64, nFf: 64, nHead: 2, contextLength: 512 });
    const other = addModel(backend, path);

    await expect(api.updateChatSettings(id, { modelId: 999 })).rejects.toThrow('no model with id 999 in the library');
    await expect(api.updateChatSettings(id, { modelId: 'x' as never })).rejects.toThrow(
      'modelId must be the id of a model in the library (got "x")',
    );
    // A context the new model was not trained on is refused, not stored.
    await expect(api.updateChatSettings(id, { modelId: other.id, contextSize: 1024 })).rejects.toThrow(
      /contextSize.*512/,
    );
    expect((await api.getChat(id)).chat.modelId).toBe(model.id);

    const seen = backend.seen.length;
    const moved = await api.updateChatSettings(id, { modelId: other.id });
    expect(moved.chat).toMatchObject({ modelId: other.id, modelName: other.name });
    expect(moved.settings).toMatchObject({ contextSize: 512, systemPrompt: 'Be brief.' });
    expect(moved.messages.map((m) => m.content)).toEqual(['Hello', 'Hi there.']);
    expect(backend.seen.slice(seen).some((e) => e.type === 'chats-changed')).toBe(true);
    expect((await api.getChat(id)).chat.modelId).toBe(other.id);
  });

  it("keeps a chat's KV cache types, null for the server's default, and checks them", async () => {
    const { backend, api } = setup();
    // Heads of 32: whole q8_0 and q4_0 blocks (stories260K's heads of 8 hold none).
    const path = join(tempDir(), 'heads-32.gguf');
    await writeRandomModel(path, { nLayer: 1, nEmbd: 64, nFf: 64, nHead: 2 });
    const model = addModel(backend, path);
    const chat = await api.createChat({ modelId: model.id, kvCacheTypes: { k: 'q8_0' } });
    expect(chat.settings.kvCacheTypes).toEqual({ k: 'q8_0', v: null });
    expect(chat.kvCacheDefault).toEqual({ k: 'f16', v: 'f16' });
    const id = chat.chat.id;
    await expect(api.updateChatSettings(id, { kvCacheTypes: { k: 'q5_1' as never } })).rejects.toThrow(
      'chat setting "kvCacheTypes.k" must be one of f16, q8_0, q4_0, f32, or null for the default (got "q5_1")',
    );
    await expect(api.updateChatSettings(id, { kvCacheTypes: { both: 'f16' } as never })).rejects.toThrow(
      'chat setting "kvCacheTypes.both" is not a KV cache setting (k or v)',
    );
    await expect(api.updateChatSettings(id, { kvCacheTypes: 'q8_0' as never })).rejects.toThrow(
      'chat setting "kvCacheTypes" must be an object with k and/or v (got "q8_0")',
    );
    const changed = await api.updateChatSettings(id, { kvCacheTypes: { k: null, v: 'q4_0' } });
    expect(changed.settings.kvCacheTypes).toEqual({ k: null, v: 'q4_0' });
    expect((await api.getChat(id)).settings.kvCacheTypes).toEqual({ k: null, v: 'q4_0' });
    // Other settings leave them alone.
    const other = await api.updateChatSettings(id, { systemPrompt: 'Hi.' });
    expect(other.settings.kvCacheTypes).toEqual({ k: null, v: 'q4_0' });
  });

  it('refuses a quantized KV cache whose blocks do not fit the heads, as llama.cpp does', async () => {
    const { api, model } = setup();
    const id = (await api.createChat({ modelId: model.id })).chat.id;
    await expect(api.updateChatSettings(id, { kvCacheTypes: { v: 'q4_0' } })).rejects.toThrow(
      'chat setting "kvCacheTypes.v" does not fit this model: a q4_0 KV cache needs a head size that is a multiple of 32; ' +
        'this model\'s heads have 8 (got "q4_0")',
    );
    expect((await api.updateChatSettings(id, { kvCacheTypes: { k: 'f32' } })).settings.kvCacheTypes).toEqual({
      k: 'f32',
      v: null,
    });
  });

  it("states the server's default KV cache types (gufo serve --cache-type-k/-v)", async () => {
    const backend = testBackend({ kvTypes: { k: 'q8_0', v: 'q4_0' } });
    const chat = await backend.api.createChat({ modelId: addModel(backend).id });
    expect(chat.settings.kvCacheTypes).toEqual({ k: null, v: null });
    expect(chat.kvCacheDefault).toEqual({ k: 'q8_0', v: 'q4_0' });
  });

  it('renames and deletes chats (with their messages), announcing each change', async () => {
    const { backend, api, model, store } = setup();
    const a = (await api.createChat({ modelId: model.id, title: 'A' })).chat.id;
    const b = (await api.createChat({ modelId: model.id, title: 'B' })).chat.id;
    addLine(store, b, ['hello there', 'general kenobi']);
    const before = backend.seen.length;
    await api.renameChat(a, 'Apples');
    await api.deleteChat(b);
    expect(backend.seen.slice(before)).toEqual([{ type: 'chats-changed' }, { type: 'chats-changed' }]);
    expect((await api.listChats()).map((c) => c.title)).toEqual(['Apples']);
    expect(await api.searchMessages('kenobi')).toEqual([]);
    await expect(api.getChat(b)).rejects.toThrow(`no chat with id ${b} (it may have been deleted)`);
    await expect(api.renameChat(a, '')).rejects.toThrow('a chat title must be text');
  });
});

describe('chat tree, search and export', () => {
  it('lists every message of every branch and switches branches down to the newest leaf', async () => {
    const { api, model, store } = setup();
    const id = (await api.createChat({ modelId: model.id })).chat.id;
    const [u1, a1] = addLine(store, id, ['Hi', 'Hello!']);
    const [u2, a2] = addLine(store, id, ['Tell me a story', 'Once upon a time'], a1);
    // A second answer to u2, and an edit of u2 with its own answer and a follow-up.
    const [a2b] = addLine(store, id, ['Long ago'], u2, 'assistant');
    const [u2b, a2c, u3, a3] = addLine(
      store,
      id,
      ['Tell me a poem', 'Roses are red', 'Another', 'Violets are blue'],
      a1,
    );

    const all = await api.selectBranch(id, u1!);
    expect(all.messages.map((m) => m.id)).toEqual([u1, a1, u2, a2, a2b, u2b, a2c, u3, a3]);
    expect(all.activeLeafId).toBe(a3);
    expect((await api.selectBranch(id, u2!)).activeLeafId).toBe(a2b);
    expect((await api.selectBranch(id, a2!)).activeLeafId).toBe(a2);
    expect((await api.getChat(id)).activeLeafId).toBe(a2);
    await expect(api.selectBranch(id, 12345)).rejects.toThrow(`chat ${id} has no message with id 12345`);
  });

  it('searches finished messages across chats, and lists chats by title or message words', async () => {
    const { api, model, store } = setup();
    const pets = (await api.createChat({ modelId: model.id, title: 'Pets' })).chat.id;
    const food = (await api.createChat({ modelId: model.id, title: 'Food' })).chat.id;
    const [, answer] = addLine(store, pets, ['What do cats eat?', 'Cats eat fish and mice.']);
    addLine(store, food, ['Is fish healthy?']);
    const hits = await api.searchMessages('mice');
    expect(hits).toEqual([
      { chatId: pets, chatTitle: 'Pets', messageId: answer, role: 'assistant', snippet: 'Cats eat fish and «mice».' },
    ]);
    expect((await api.searchMessages('fish')).map((h) => h.chatId).sort()).toEqual([pets, food].sort());
    expect(await api.searchMessages('fish', 1)).toHaveLength(1);
    await expect(api.searchMessages('fish', 0)).rejects.toThrow(
      'the search limit must be a whole number from 1 to 500',
    );
    expect((await api.listChats('mice')).map((c) => c.id)).toEqual([pets]);
    expect((await api.listChats('foo')).map((c) => c.id)).toEqual([food]);
  });

  it('exports the branch on show as Markdown and the whole tree as JSON', async () => {
    const { api, model, store } = setup();
    const chat = await api.createChat({ modelId: model.id, title: 'Über Stories!', systemPrompt: 'Be kind.' });
    const id = chat.chat.id;
    const [u1, a1] = addLine(store, id, ['Tell a story', 'Once upon a time there was a cat.']);
    const [a1b] = addLine(store, id, ['A dog lived in a house.'], u1, 'assistant');
    store.finishMessage(
      store.addMessage({ chatId: id, parentId: a1b!, role: 'user', content: 'More', status: 'done' }).id,
      { status: 'done' },
    );
    const partial = store.addMessage({
      chatId: id,
      parentId: a1b!,
      role: 'assistant',
      content: 'The dog',
      status: 'streaming',
    });
    store.finishMessage(partial.id, { status: 'stopped' });
    await api.selectBranch(id, a1!);

    const md = await api.exportChat(id, 'markdown');
    expect(md.fileName).toBe(`chat-${id}-uber-stories.md`);
    expect(md.mimeType).toBe('text/markdown');
    expect(model.name).toBe('stories260K'); // the file's name (general.name says "llama")
    expect(md.content).toMatch(
      /^# Über Stories!\n\n- Model: stories260K\n- Created: .+\n- Exported: .+\n\n## System prompt\n\nBe kind\.\n\n## User\n\nTell a story\n\n## Assistant\n\nOnce upon a time there was a cat\.\n$/,
    );

    await api.selectBranch(id, a1b!);
    const other = await api.exportChat(id, 'markdown');
    expect(other.content).toContain('## Assistant\n\nA dog lived in a house.');
    expect(other.content).toContain('## Assistant\n\nThe dog\n\n_(stopped before the end)_\n');
    expect(other.content).not.toContain('there was a cat');

    const json = await api.exportChat(id, 'json');
    expect(json).toMatchObject({ fileName: `chat-${id}-uber-stories.json`, mimeType: 'application/json' });
    const view: ChatView = await api.getChat(id);
    const parsed = JSON.parse(json.content) as ChatView & { format: string; version: number };
    expect(parsed).toMatchObject({ format: 'gufo-chat', version: 1 });
    expect(parsed.chat).toEqual(view.chat);
    expect(parsed.settings).toEqual(view.settings);
    expect(parsed.activeLeafId).toBe(view.activeLeafId);
    expect(parsed.messages).toEqual(view.messages);
    expect(parsed.messages).toHaveLength(5);
    await expect(api.exportChat(id, 'pdf' as never)).rejects.toThrow(
      'unknown export format "pdf"; use markdown or json',
    );
  });
});

describe('context overflow policy', () => {
  const system = 'You are a storyteller.';
  // The first question is the longest, so that keeping it changes the prompt's length.
  const contents = Array.from({ length: 12 }, (_, i) =>
    i % 2 === 0 ? `Tell me about cat number ${i / 2}.` : `Cat number ${(i - 1) / 2} sat on a mat and was happy.`,
  );
  contents[0] = 'Tell me about cat number 0, the oldest and the wisest cat of the whole little town.';
  const context = 256;
  const reserve = 16; // min(maxTokens 16, 256 / 4)

  /** The oracle: the template and tokenizer run here on the system prompt, branch[0, head) and branch[start, ...). */
  function promptLength(head: number, start: number): number {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const vocab = readVocab(gguf);
      const kept = [
        ...contents.slice(0, head).map((content, i) => ({ i, content })),
        ...contents.slice(start).map((content, i) => ({ i: start + i, content })),
      ];
      const messages = [
        { role: 'system', content: system },
        ...kept.map(({ i, content }) => ({ role: i % 2 === 0 ? 'user' : 'assistant', content })),
      ];
      const { prompt } = renderChat(vocab, messages, {
        architecture: 'llama',
        addBos: vocab.addBos,
        addGenerationPrompt: false,
      });
      return createTokenizer(vocab).tokenize(prompt, { addBos: true, parseSpecial: true }).length;
    } finally {
      file.close();
    }
  }

  async function chatWithLine(overflow?: ContextOverflow) {
    const t = setup();
    const chat = await t.api.createChat({
      modelId: t.model.id,
      systemPrompt: system,
      sampling: { maxTokens: 16 },
      contextSize: context,
      promptFormat: 'llama2',
      ...(overflow && { contextOverflow: overflow }),
    });
    const id = chat.chat.id;
    t.store.setActiveLeaf(id, addLine(t.store, id, contents).at(-1)!);
    return { ...t, id, chat };
  }

  it('truncates the middle by default: keeps the system prompt and the first exchange, leaves out the oldest after them', async () => {
    const { api, id, chat } = await chatWithLine();
    expect(chat.settings.contextOverflow).toBe('truncate-middle');
    const firstFit = [2, 4, 6, 8, 10].find((start) => promptLength(2, start) + reserve <= context)!;
    expect(firstFit).toBeGreaterThan(2);
    expect(promptLength(2, firstFit - 2) + reserve).toBeGreaterThan(context);
    const usage = (await api.getChat(id)).contextUsage!;
    expect(usage).toMatchObject({
      usedTokens: promptLength(2, firstFit),
      contextSize: context,
      droppedMessages: firstFit - 2,
      overflow: 'truncate-middle',
    });
    expect(usage.policy).toMatch(
      /^When the context is full: truncate the middle \(keep the system prompt and the first exchange/,
    );
    // Nothing is deleted, and with room enough nothing is left out.
    expect((await api.getChat(id)).messages).toHaveLength(12);
    const roomy = (await api.updateChatSettings(id, { contextSize: 2048 })).contextUsage!;
    expect(roomy).toMatchObject({ usedTokens: promptLength(0, 0), contextSize: 2048, droppedMessages: 0 });
  });

  it('as a rolling window, leaves the oldest exchanges out, the first one too', async () => {
    const { api, id } = await chatWithLine('rolling-window');
    const firstFit = [0, 2, 4, 6, 8, 10].find((start) => promptLength(0, start) + reserve <= context)!;
    expect(firstFit).toBeGreaterThan(0);
    expect(promptLength(0, firstFit - 2) + reserve).toBeGreaterThan(context);
    const usage = (await api.getChat(id)).contextUsage!;
    expect(usage).toMatchObject({
      usedTokens: promptLength(0, firstFit),
      droppedMessages: firstFit,
      overflow: 'rolling-window',
    });
    expect(usage.policy).toMatch(/^When the context is full: rolling window/);
    // The policies keep different messages for the same conversation.
    const middle = (await api.updateChatSettings(id, { contextOverflow: 'truncate-middle' })).contextUsage!;
    expect(middle.usedTokens).not.toBe(usage.usedTokens);
  });

  it('with "stop", leaves nothing out and refuses an answer to a conversation that no longer fits', async () => {
    const { backend, api, id } = await chatWithLine('stop');
    const usage = (await api.getChat(id)).contextUsage!;
    expect(usage).toMatchObject({ usedTokens: promptLength(0, 0), droppedMessages: 0, overflow: 'stop' });
    expect(usage.usedTokens).toBeGreaterThan(context);
    const { assistantMessageId } = await api.sendMessage(id, 'And then?');
    const answer = await answered(backend, assistantMessageId);
    expect(answer.status).toBe('error');
    expect(answer.error).toMatch(
      /^the conversation no longer fits this chat's context: \d+ tokens with the system prompt, in a context of 256, and "Stop at the limit" leaves nothing out; raise the context size/,
    );
  });

  it('checks the policy it is given', async () => {
    const { api, id } = await chatWithLine();
    await expect(api.updateChatSettings(id, { contextOverflow: 'middle' as never })).rejects.toThrow(
      'chat setting "contextOverflow" must be one of truncate-middle, rolling-window, stop (got "middle")',
    );
    expect((await api.updateChatSettings(id, { contextOverflow: 'stop' })).settings.contextOverflow).toBe('stop');
    expect((await api.getChat(id)).settings.contextOverflow).toBe('stop');
  });

  it('ends the answer with a clear error when the newest message alone does not fit', async () => {
    const { backend, api, model } = setup();
    const id = (await api.createChat({ modelId: model.id, sampling: { maxTokens: 16 }, contextSize: 32 })).chat.id;
    const { userMessageId, assistantMessageId } = await api.sendMessage(
      id,
      'Once upon a time there was a very long story about many little cats and dogs in the park.',
    );
    const answer = await answered(backend, assistantMessageId);
    expect(answer).toMatchObject({ status: 'error', content: '', parentId: userMessageId });
    expect(answer.error).toMatch(
      /^the message is too long for this chat's context: \d+ tokens with the system prompt, and 8 must stay free for the answer, in a context of 32; shorten it or raise the context size$/,
    );
    // Another answer may start once this one has ended.
    expect((await api.getChat(id)).messages.map((m) => m.status)).toEqual(['done', 'error']);
  });
});

describe('messages and what can go wrong', () => {
  it('checks a new message before storing anything', async () => {
    const { api, model, store } = setup();
    const id = (await api.createChat({ modelId: model.id })).chat.id;
    const [u1] = addLine(store, id, ['Hi', 'Hello']);
    await expect(api.sendMessage(id, '   ')).rejects.toThrow('a message needs some text');
    await expect(api.sendMessage(id, 'Hi', u1)).rejects.toThrow(
      `message ${u1} is a user message, not a assistant or tool message`,
    );
    await expect(api.sendMessage(999, 'Hi')).rejects.toThrow('no chat with id 999');
    await expect(api.editMessage(id, 999, 'Hi')).rejects.toThrow(`chat ${id} has no message with id 999`);
    await expect(api.regenerate(id, u1!)).rejects.toThrow(`message ${u1} is a user message`);
    expect((await api.getChat(id)).messages).toHaveLength(2);
  });

  it('keeps a chat readable when its model file is gone, and says why it cannot answer', async () => {
    const dir = tempDir();
    const copy = join(dir, 'stories.gguf');
    copyFileSync(STORIES_260K, copy);
    const backend = testBackend();
    const model = addModel(backend, copy);
    const store = new ChatStore(backend.context.db);
    const id = (await backend.api.createChat({ modelId: model.id })).chat.id;
    const [, a1] = addLine(store, id, ['Hi', 'Hello']);
    store.setActiveLeaf(id, a1!);
    expect((await backend.api.getChat(id)).contextUsage).not.toBeNull();

    rmSync(copy);
    backend.context.models.delete(model.id);
    const view = await backend.api.getChat(id);
    expect(view.chat).toMatchObject({ modelId: null, modelName: model.name });
    expect(view.messages.map((m) => m.content)).toEqual(['Hi', 'Hello']);
    expect(view.contextUsage).toBeNull();
    await expect(backend.api.sendMessage(id, 'Still there?')).rejects.toThrow(
      `the model file of this chat is missing: ${copy} (${model.name})`,
    );
    expect((await backend.api.getChat(id)).messages).toHaveLength(2);
  });

  it('names the chat whose settings are corrupt, and still lists and deletes it', async () => {
    const { api, model, backend } = setup();
    const good = (await api.createChat({ modelId: model.id, title: 'Good' })).chat.id;
    const bad = (await api.createChat({ modelId: model.id, title: 'Bad' })).chat.id;
    backend.context.db.prepare("UPDATE chats SET sampling_json = 'not json' WHERE id = ?").run(bad);

    const error = await api.getChat(bad).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(CorruptRowError);
    expect((error as Error).message).toBe(
      `the database row chats ${bad} has unreadable sampling_json (not JSON); delete or fix that row`,
    );
    await expect(api.sendMessage(bad, 'Hi')).rejects.toThrow(`chats ${bad}`);
    expect((await api.listChats()).map((c) => c.title).sort()).toEqual(['Bad', 'Good']);
    expect((await api.getChat(good)).chat.title).toBe('Good');
    await api.deleteChat(bad);
    expect((await api.listChats()).map((c) => c.id)).toEqual([good]);
  });

  it('marks answers the app was killed in the middle of as interrupted when it starts again, text kept', async () => {
    const dataDir = join(tempDir(), 'home');
    const first = setup(dataDir);
    const id = (await first.api.createChat({ modelId: first.model.id })).chat.id;
    const [u1] = addLine(first.store, id, ['Tell a story']);
    const answer = first.store.addMessage({
      chatId: id,
      parentId: u1!,
      role: 'assistant',
      content: '',
      status: 'streaming',
    });
    first.store.appendContent(answer.id, 'Once upon');
    // As a kill leaves it: the row still says streaming.
    first.backend.context.db.close();

    const second: TestBackend = testBackend({ dataDir });
    const message = (await second.api.getChat(id)).messages.find((m) => m.id === answer.id);
    expect(message).toMatchObject({ status: 'interrupted', content: 'Once upon' });
    expect((await second.api.searchMessages('upon')).map((h) => h.messageId)).toEqual([answer.id]);
  });
});
