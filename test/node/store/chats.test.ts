import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ChatStore, ftsQuery, type StoredChatSettings } from '../../../src-main/node/store/chats';
import Database from 'better-sqlite3';
import { migrate, openStore, type Db } from '../../../src-main/node/store/database';
import { CorruptRowError } from '../../../src-main/node/store/json-column';
import { MIGRATIONS } from '../../../src-main/node/store/schema';
import { tempDir } from '../../support/temp';

const SETTINGS: StoredChatSettings = {
  systemPrompt: 'Be brief.',
  sampling: { temperature: 0.7, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1.1, seed: null, maxTokens: 256 },
  contextSize: 512,
  promptFormat: 'completion',
  contextOverflow: 'truncate-middle',
  kvCacheTypes: { k: null, v: null },
  thinking: null,
};

function openChats(path = join(tempDir(), 'gufo.db')): { db: Db; store: ChatStore; path: string } {
  const { db } = openStore(path);
  // A model row for the chats' foreign key.
  db.prepare(
    "INSERT INTO models (id, path, name, source, bytes, mtime_ms) VALUES (1, '/m/a.gguf', 'A', 'added', 1, 1)",
  ).run();
  return { db, store: new ChatStore(db), path };
}

function newChat(store: ChatStore, title = 'Chat'): number {
  return store.create({ title, modelId: 1, modelName: 'A', modelPath: '/m/a.gguf', settings: SETTINGS });
}

/** A database at the schema just before the migration whose summary starts `summary`, holding one chat made then. */
function chatBefore(summary: string): { path: string; before: number } {
  const path = join(tempDir(), 'gufo.db');
  const old = new Database(path);
  migrate(old, undefined, MIGRATIONS.find((m) => m.summary.startsWith(summary))!.version - 1);
  old
    .prepare("INSERT INTO models (id, path, name, source, bytes, mtime_ms) VALUES (1, '/m/a.gguf', 'A', 'added', 1, 1)")
    .run();
  const before = Number(
    old
      .prepare(
        "INSERT INTO chats (title, model_id, model_name, model_path, sampling_json, context_size) VALUES ('Chat', 1, 'A', '/m/a.gguf', ?, 512)",
      )
      .run(JSON.stringify(SETTINGS.sampling)).lastInsertRowid,
  );
  old.close();
  return { path, before };
}

describe('ChatStore', () => {
  it('stores a chat with its settings and model, and keeps it when the model leaves the library', () => {
    const { db, store } = openChats();
    const id = newChat(store, 'Stories');
    const record = store.get(id)!;
    expect(record.settings).toEqual(SETTINGS);
    expect(record.modelPath).toBe('/m/a.gguf');
    expect(record.activeLeafId).toBeNull();
    expect(record.summary).toMatchObject({ id, title: 'Stories', modelId: 1, modelName: 'A', messageCount: 0 });
    expect(record.summary.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);

    db.prepare('DELETE FROM models WHERE id = 1').run();
    expect(store.get(id)!.summary).toMatchObject({ modelId: null, modelName: 'A' });
    expect(store.get(id)!.modelPath).toBe('/m/a.gguf');
    db.close();
  });

  it('keeps messages as a tree, appends streamed text and finishes the message once', () => {
    const { db, store } = openChats();
    const chatId = newChat(store);
    const user = store.addMessage({ chatId, parentId: null, role: 'user', content: 'Hi', status: 'done' });
    const a1 = store.addMessage({ chatId, parentId: user.id, role: 'assistant', content: '', status: 'streaming' });
    store.appendContent(a1.id, 'Hel');
    store.appendContent(a1.id, 'lo');
    expect(store.message(a1.id)).toMatchObject({ content: 'Hello', status: 'streaming', stats: null });

    const stats = {
      promptTokens: 9,
      reusedTokens: 0,
      generatedTokens: 2,
      ttftMs: 5,
      decodeTokS: 10,
      prefillTokS: 90,
      stopReason: 'stop' as const,
      seed: 7,
    };
    expect(store.finishMessage(a1.id, { status: 'done', stats })).toMatchObject({
      content: 'Hello',
      status: 'done',
      stats,
    });
    // A second end (a late cancel) and late text change nothing.
    expect(store.finishMessage(a1.id, { status: 'stopped' })).toBeUndefined();
    store.appendContent(a1.id, '!');
    expect(store.message(a1.id)).toMatchObject({ content: 'Hello', status: 'done' });

    const a2 = store.addMessage({ chatId, parentId: user.id, role: 'assistant', content: 'Hey', status: 'done' });
    expect(store.messages(chatId).map((m) => [m.id, m.parentId])).toEqual([
      [user.id, null],
      [a1.id, user.id],
      [a2.id, user.id],
    ]);
    expect(store.summary(chatId)!.messageCount).toBe(3);
    db.close();
  });

  it('marks answers left streaming as interrupted, keeping their text, and indexes them then', () => {
    const { db, store, path } = openChats();
    const chatId = newChat(store);
    const user = store.addMessage({ chatId, parentId: null, role: 'user', content: 'Tell a story', status: 'done' });
    const answer = store.addMessage({ chatId, parentId: user.id, role: 'assistant', content: '', status: 'streaming' });
    store.appendContent(answer.id, 'Once upon a time');
    // Not searchable while it streams.
    expect(store.search('upon', 10)).toEqual([]);
    db.close();

    const reopened = new ChatStore(openStore(path).db);
    expect(reopened.interruptStreaming()).toBe(1);
    expect(reopened.message(answer.id)).toMatchObject({ content: 'Once upon a time', status: 'interrupted' });
    expect(reopened.search('upon', 10).map((h) => h.messageId)).toEqual([answer.id]);
    expect(reopened.interruptStreaming()).toBe(0);
  });

  it('finds finished messages by their words with « » around the matches, and chats by title or message', () => {
    const { db, store } = openChats();
    const pets = newChat(store, 'Pets');
    const cooking = newChat(store, 'Cooking 100% (fast_food)');
    const u = store.addMessage({
      chatId: pets,
      parentId: null,
      role: 'user',
      content: 'My dog chases the red ball every morning.',
      status: 'done',
    });
    store.addMessage({ chatId: pets, parentId: u.id, role: 'assistant', content: 'Dogs love balls.', status: 'done' });
    store.addMessage({
      chatId: cooking,
      parentId: null,
      role: 'user',
      content: 'How long do I boil an egg?',
      status: 'done',
    });

    const hits = store.search('red BALL', 10);
    expect(hits).toEqual([
      {
        chatId: pets,
        chatTitle: 'Pets',
        messageId: u.id,
        role: 'user',
        snippet: 'My dog chases the «red» «ball» every morning.',
      },
    ]);
    // Words match as prefixes: "ball" also finds "balls".
    expect(
      store
        .search('ball', 10)
        .map((h) => h.messageId)
        .sort(),
    ).toHaveLength(2);
    expect(store.search('ball', 1)).toHaveLength(1);
    expect(store.search('giraffe', 10)).toEqual([]);

    expect(store.list('egg').map((c) => c.id)).toEqual([cooking]);
    expect(store.list('pets').map((c) => c.id)).toEqual([pets]);
    expect(store.list('100%').map((c) => c.id)).toEqual([cooking]);
    expect(store.list('t_f').map((c) => c.id)).toEqual([cooking]);
    // LIKE's wildcards are literal: "g_1" would match "g 1" in the title otherwise.
    expect(store.list('g_1').map((c) => c.id)).toEqual([]);
    expect(store.list('').map((c) => c.id)).toEqual([cooking, pets]);
    db.close();
  });

  it('turns any text into a safe FTS5 query: quotes and operators are just words', () => {
    const { db, store } = openChats();
    const chatId = newChat(store);
    const m = store.addMessage({
      chatId,
      parentId: null,
      role: 'user',
      content: 'say "hello" AND NOT (goodbye) near: x*',
      status: 'done',
    });
    for (const text of ['"hello', 'AND', 'NOT (goodbye', 'near:', 'x*', 'hello" OR "', '^', '{col}: a', '-', '"""']) {
      expect(() => store.search(text, 10), text).not.toThrow();
      expect(() => store.list(text), text).not.toThrow();
    }
    expect(store.search('"hello', 10).map((h) => h.messageId)).toEqual([m.id]);
    expect(store.search('NOT (goodbye', 10).map((h) => h.messageId)).toEqual([m.id]);
    expect(ftsQuery('  ')).toBeNull();
    expect(ftsQuery('-- ""')).toBeNull();
    expect(ftsQuery('a "b')).toBe('"a"* """b"*');
    db.close();
  });

  it('deletes a chat with its whole tree and its search entries', () => {
    const { db, store } = openChats();
    const keep = newChat(store, 'Keep');
    const drop = newChat(store, 'Drop');
    const u = store.addMessage({
      chatId: drop,
      parentId: null,
      role: 'user',
      content: 'unicorns everywhere',
      status: 'done',
    });
    store.addMessage({ chatId: drop, parentId: u.id, role: 'assistant', content: 'unicorns indeed', status: 'done' });
    store.addMessage({ chatId: keep, parentId: null, role: 'user', content: 'unicorns too', status: 'done' });
    store.delete(drop);
    expect(store.get(drop)).toBeUndefined();
    expect(db.prepare('SELECT COUNT(*) FROM messages WHERE chat_id = ?').pluck().get(drop)).toBe(0);
    expect(store.search('unicorns', 10).map((h) => h.chatId)).toEqual([keep]);
    // The external-content index still agrees with the table.
    expect(() => db.prepare("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").run()).not.toThrow();
    db.close();
  });

  it('names the chat in the error for sampling settings that do not read, and still lists every chat', () => {
    const { db, store } = openChats();
    const good = newChat(store, 'Good');
    const notJson = newChat(store, 'Not JSON');
    const noField = newChat(store, 'No field');
    db.prepare("UPDATE chats SET sampling_json = '{oops' WHERE id = ?").run(notJson);
    db.prepare('UPDATE chats SET sampling_json = ? WHERE id = ?').run(
      JSON.stringify({ ...SETTINGS.sampling, topP: 'high' }),
      noField,
    );

    expect(() => store.get(notJson)).toThrow(CorruptRowError);
    expect(() => store.get(notJson)).toThrow(
      `the database row chats ${notJson} has unreadable sampling_json (not JSON)`,
    );
    expect(() => store.get(noField)).toThrow(
      `the database row chats ${noField} has unusable sampling_json (it lacks a number for topP)`,
    );
    expect(store.get(good)!.settings).toEqual(SETTINGS);
    expect(
      store
        .list()
        .map((c) => c.title)
        .sort(),
    ).toEqual(['Good', 'No field', 'Not JSON']);
    expect(store.summary(notJson)!.title).toBe('Not JSON');
    db.close();
  });

  it('saves settings, renames, and moves the active leaf', () => {
    const { db, store } = openChats();
    const id = newChat(store);
    const next: StoredChatSettings = {
      systemPrompt: '',
      sampling: { ...SETTINGS.sampling, seed: 42, temperature: 0 },
      contextSize: 128,
      promptFormat: 'llama2',
      contextOverflow: 'stop',
      kvCacheTypes: { k: 'q8_0', v: null },
      thinking: false,
    };
    store.updateSettings(id, next);
    store.rename(id, 'Renamed');
    const u = store.addMessage({ chatId: id, parentId: null, role: 'user', content: 'x', status: 'done' });
    store.setActiveLeaf(id, u.id);
    expect(store.get(id)).toMatchObject({ settings: next, activeLeafId: u.id, summary: { title: 'Renamed' } });
    db.close();
  });

  it('keeps the prompt format across a reopen; a chat from before formats has none, an unknown one names the row', () => {
    const { db, store, path } = openChats();
    const id = newChat(store);
    store.updateSettings(id, { ...SETTINGS, promptFormat: 'chatml' });
    const legacy = newChat(store, 'Legacy');
    const odd = newChat(store, 'Odd');
    // What schema 5 leaves in the chats made before it, and a value no Gufo writes.
    db.prepare('UPDATE chats SET prompt_format = NULL WHERE id = ?').run(legacy);
    db.prepare("UPDATE chats SET prompt_format = 'alpaca' WHERE id = ?").run(odd);
    db.close();

    const reopened = openStore(path).db;
    const chats = new ChatStore(reopened);
    expect(chats.get(id)!.settings.promptFormat).toBe('chatml');
    expect(chats.get(legacy)!.settings.promptFormat).toBeNull();
    expect(() => chats.get(odd)).toThrow(
      `the database row chats ${odd} has an unknown prompt_format "alpaca"; delete or fix that row`,
    );
    reopened.close();
  });

  it('holds tool results (role "tool"); a database from before them keeps its tree and search through the upgrade', () => {
    const path = join(tempDir(), 'gufo.db');
    const old = new Database(path);
    // The version before the migration that lets messages be tool results.
    migrate(old, undefined, MIGRATIONS.find((m) => m.summary.startsWith('tool results'))!.version - 1);
    old
      .prepare(
        "INSERT INTO models (id, path, name, source, bytes, mtime_ms) VALUES (1, '/m/a.gguf', 'A', 'added', 1, 1)",
      )
      .run();
    // Rows as that version wrote them (its chats table lacks later columns, so not through ChatStore).
    const chatId = Number(
      old
        .prepare(
          "INSERT INTO chats (title, model_id, model_name, model_path, sampling_json, context_size) VALUES ('Chat', 1, 'A', '/m/a.gguf', ?, 512)",
        )
        .run(JSON.stringify(SETTINGS.sampling)).lastInsertRowid,
    );
    const addOld = (parentId: number | null, role: string, content: string) => ({
      id: Number(
        old
          .prepare('INSERT INTO messages (chat_id, parent_id, role, content) VALUES (?, ?, ?, ?)')
          .run(chatId, parentId, role, content).lastInsertRowid,
      ),
    });
    const question = addOld(null, 'user', 'weather in Paris?');
    const call = addOld(question.id, 'assistant', '<tool_call>{"name": "get_weather", "arguments": {}}</tool_call>');
    expect(() => addOld(call.id, 'tool', 'x')).toThrow(/CHECK/);
    old.close();

    const { db } = openStore(path);
    const store = new ChatStore(db);
    const result = store.addMessage({
      chatId,
      parentId: call.id,
      role: 'tool',
      content: '{"temperature": 18, "sky": "sunny"}',
      status: 'done',
    });
    expect(store.messages(chatId).map((m) => [m.id, m.parentId, m.role])).toEqual([
      [question.id, null, 'user'],
      [call.id, question.id, 'assistant'],
      [result.id, call.id, 'tool'],
    ]);
    expect(store.search('Paris', 10).map((h) => h.messageId)).toEqual([question.id]);
    expect(store.search('sunny', 10).map((h) => h.messageId)).toEqual([result.id]);
    store.delete(chatId);
    expect(store.messages(chatId)).toEqual([]);
    expect(store.search('sunny', 10)).toEqual([]);
    db.close();
  });

  it("keeps a chat's tools (none stored as NULL); tools_json that is not a list names the row", () => {
    const { db, store } = openChats();
    const tools = [{ type: 'function' as const, function: { name: 'now', parameters: { type: 'object' } } }];
    const id = newChat(store);
    expect(store.get(id)!.settings.tools).toBeUndefined();
    store.updateSettings(id, { ...SETTINGS, tools });
    expect(store.get(id)!.settings.tools).toEqual(tools);
    store.updateSettings(id, { ...SETTINGS, tools: [] });
    expect(db.prepare('SELECT tools_json FROM chats WHERE id = ?').pluck().get(id)).toBeNull();
    db.prepare(`UPDATE chats SET tools_json = '{"name": "now"}' WHERE id = ?`).run(id);
    expect(() => store.get(id)).toThrow(
      `the database row chats ${id} has unusable tools_json (it is not a list); delete or fix that row`,
    );
    db.close();
  });

  it("keeps a chat's context overflow policy; chats from before it keep the rolling window they had, and an unknown value names the row", () => {
    const { path, before } = chatBefore("a chat's context overflow");

    const { db } = openStore(path);
    const store = new ChatStore(db);
    expect(store.get(before)!.settings.contextOverflow).toBe('rolling-window');
    const id = store.create({ title: 'New', modelId: 1, modelName: 'A', modelPath: '/m/a.gguf', settings: SETTINGS });
    expect(store.get(id)!.settings.contextOverflow).toBe('truncate-middle');
    store.updateSettings(id, { ...SETTINGS, contextOverflow: 'stop' });
    expect(store.get(id)!.settings.contextOverflow).toBe('stop');
    db.prepare("UPDATE chats SET context_overflow = 'middle' WHERE id = ?").run(id);
    expect(() => store.get(id)).toThrow(
      `the database row chats ${id} has an unknown context_overflow "middle"; delete or fix that row`,
    );
    db.close();
  });

  it("keeps a chat's KV cache types (none: the server's default); chats from before them take the default, and an unknown stored value falls back to it", () => {
    const { path, before } = chatBefore("a chat's KV cache types");

    const { db } = openStore(path);
    const store = new ChatStore(db);
    expect(store.get(before)!.settings.kvCacheTypes).toEqual({ k: null, v: null });
    const id = store.create({
      title: 'New',
      modelId: 1,
      modelName: 'A',
      modelPath: '/m/a.gguf',
      settings: { ...SETTINGS, kvCacheTypes: { k: 'q8_0', v: 'q4_0' } },
    });
    expect(store.get(id)!.settings.kvCacheTypes).toEqual({ k: 'q8_0', v: 'q4_0' });
    store.updateSettings(id, { ...SETTINGS, kvCacheTypes: { k: 'f32', v: null } });
    expect(store.get(id)!.settings.kvCacheTypes).toEqual({ k: 'f32', v: null });
    db.close();

    // Read again from the file: what was saved is there.
    const reopened = openStore(path).db;
    const again = new ChatStore(reopened);
    expect(again.get(id)!.settings.kvCacheTypes).toEqual({ k: 'f32', v: null });
    // A value no Gufo writes (a newer type, a typo, a number) is the default, not a broken chat.
    reopened.prepare("UPDATE chats SET kv_cache_type_k = 'q5_1', kv_cache_type_v = 7 WHERE id = ?").run(id);
    expect(again.get(id)!.settings.kvCacheTypes).toEqual({ k: null, v: null });
    expect(again.get(id)!.settings.contextOverflow).toBe('truncate-middle');
    reopened.close();
  });

  it("keeps a chat's thinking switch (null: the template's default); chats from before it take the default, and so does a value no Gufo writes", () => {
    const { path, before } = chatBefore("a chat's thinking switch");

    const { db } = openStore(path);
    const store = new ChatStore(db);
    expect(store.get(before)!.settings.thinking).toBeNull();
    const id = store.create({
      title: 'New',
      modelId: 1,
      modelName: 'A',
      modelPath: '/m/a.gguf',
      settings: { ...SETTINGS, thinking: false },
    });
    expect(store.get(id)!.settings.thinking).toBe(false);
    store.updateSettings(id, { ...SETTINGS, thinking: true });
    expect(store.get(id)!.settings.thinking).toBe(true);
    store.updateSettings(id, { ...SETTINGS, thinking: null });
    expect(store.get(id)!.settings.thinking).toBeNull();
    store.updateSettings(id, { ...SETTINGS, thinking: false });
    db.close();

    const reopened = openStore(path).db;
    const again = new ChatStore(reopened);
    expect(again.get(id)!.settings.thinking).toBe(false);
    reopened.prepare("UPDATE chats SET thinking = 'yes' WHERE id = ?").run(id);
    expect(again.get(id)!.settings.thinking).toBeNull();
    reopened.close();
  });
});
