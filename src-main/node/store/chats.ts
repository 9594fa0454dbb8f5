/**
 * The chats and messages tables: conversations as trees of messages (edits and regenerations are
 * siblings under one parent), per-chat settings, and full-text search over messages_fts.
 *
 * An answer is written token by token with appendContent, each a transaction of its own, so a
 * crash or kill keeps everything streamed until then.
 */
import {
  CONTEXT_OVERFLOWS,
  isKvCacheType,
  type ChatFunctionTool,
  type ChatKvCacheTypes,
  type ContextOverflow,
  type ChatSettings,
  type ChatSummary,
  type ChatToolUse,
  type GenerationStats,
  type MessageRole,
  type MessageStatus,
  type MessageView,
  type SamplingSettings,
  type SearchHit,
} from '../../../src-preload/api';
import type { Statement } from 'better-sqlite3';
import { promptFormatProblem, type PromptFormat } from '../../core/prompt-format';
import type { Db } from './database';
import { CorruptRowError, parseJsonColumn } from './json-column';

const NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

interface ChatRow {
  id: number;
  title: string;
  model_id: number | null;
  model_name: string;
  model_path: string;
  system_prompt: string;
  sampling_json: string;
  context_size: number;
  prompt_format: string | null;
  tools_json: string | null;
  tool_use_json: string | null;
  context_overflow: string;
  kv_cache_type_k: string | null;
  kv_cache_type_v: string | null;
  /** NULL: the template's default; 0 or 1: enable_thinking. */
  thinking: number | null;
  active_leaf_id: number | null;
  created_at: string;
  updated_at: string;
  message_count: number;
}

interface MessageRow {
  id: number;
  chat_id: number;
  parent_id: number | null;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  stats_json: string | null;
  error: string | null;
  created_at: string;
}

/**
 * A chat's settings as stored. A null prompt format: the chat was made before formats existed, and
 * takes its model's default (which needs the model file to know).
 */
export interface StoredChatSettings extends Omit<ChatSettings, 'promptFormat'> {
  promptFormat: PromptFormat | null;
}

/** A chat as stored: what the UI sees, plus where its model file is. */
export interface ChatRecord {
  summary: ChatSummary;
  settings: StoredChatSettings;
  modelPath: string;
  activeLeafId: number | null;
}

export interface NewChatRecord {
  title: string;
  modelId: number;
  modelName: string;
  modelPath: string;
  settings: StoredChatSettings;
}

export interface NewMessage {
  chatId: number;
  parentId: number | null;
  role: MessageRole;
  content: string;
  status: MessageStatus;
}

/** How an answer ended. */
export interface MessageEnd {
  status: Exclude<MessageStatus, 'streaming'>;
  stats?: GenerationStats | null;
  error?: string | null;
}

/**
 * The user's words as an FTS5 query: each word quoted (so no character of it is FTS5 syntax) and
 * matched as a prefix, all of them required. Null when the text holds no word.
 */
export function ftsQuery(text: string): string | null {
  const words = text.split(/\s+/).filter((w) => /[\p{L}\p{N}]/u.test(w));
  if (words.length === 0) return null;
  return words.map((w) => `"${w.replaceAll('"', '""')}"*`).join(' ');
}

/** Chats with their message count; callers add WHERE / ORDER BY. */
const CHAT_SELECT = `SELECT c.*, (SELECT COUNT(*) FROM messages m WHERE m.chat_id = c.id) AS message_count FROM chats c`;

export class ChatStore {
  /** Prepared once: it runs for every streamed token. */
  readonly #append: Statement<[string, number]>;

  constructor(private readonly db: Db) {
    this.#append = db.prepare("UPDATE messages SET content = content || ? WHERE id = ? AND status = 'streaming'");
  }

  /** Runs `work` as one transaction. */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work)();
  }

  create(chat: NewChatRecord): number {
    const columns: ChatColumns = {
      title: chat.title,
      model_id: chat.modelId,
      model_name: chat.modelName,
      model_path: chat.modelPath,
      ...settingsColumns(chat.settings),
    };
    const names = Object.keys(columns);
    const result = this.db
      .prepare(`INSERT INTO chats (${names.join(', ')}) VALUES (${names.map(() => '?').join(', ')})`)
      .run(...Object.values(columns));
    return Number(result.lastInsertRowid);
  }

  /**
   * Newest first. With `search`: chats whose title contains it, or with a message matching its
   * words. Reads no JSON column, so one corrupt row never hides the others.
   */
  list(search?: string): ChatSummary[] {
    const text = search?.trim() ?? '';
    if (text === '')
      return (this.db.prepare(`${CHAT_SELECT} ORDER BY c.updated_at DESC, c.id DESC`).all() as ChatRow[]).map(
        toSummary,
      );
    const query = ftsQuery(text);
    const rows = this.db
      .prepare(
        `${CHAT_SELECT}
         WHERE c.title LIKE @like ESCAPE '\\'
            OR (@query IS NOT NULL AND c.id IN (
                 SELECT m.chat_id FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH @query))
         ORDER BY c.updated_at DESC, c.id DESC`,
      )
      .all({ like: `%${text.replace(/[\\%_]/g, '\\$&')}%`, query }) as ChatRow[];
    return rows.map(toSummary);
  }

  /** The chat's summary (no JSON read, so also for a corrupt row), or undefined when there is none. */
  summary(id: number): ChatSummary | undefined {
    const row = this.#row(id);
    return row && toSummary(row);
  }

  /** The chat, or undefined when there is none; a row whose settings do not read is a CorruptRowError. */
  get(id: number): ChatRecord | undefined {
    const row = this.#row(id);
    if (!row) return undefined;
    return {
      summary: toSummary(row),
      settings: {
        systemPrompt: row.system_prompt,
        sampling: readSampling(row),
        contextSize: row.context_size,
        promptFormat: readPromptFormat(row),
        contextOverflow: readContextOverflow(row),
        kvCacheTypes: readKvCacheTypes(row),
        thinking: readThinking(row),
        ...readTools(row),
        ...readToolUse(row),
      },
      modelPath: row.model_path,
      activeLeafId: row.active_leaf_id,
    };
  }

  rename(id: number, title: string): void {
    this.db.prepare(`UPDATE chats SET title = ?, updated_at = ${NOW} WHERE id = ?`).run(title, id);
  }

  /** Moves the chat to another model of the library; its messages stay. */
  setModel(id: number, model: { modelId: number; modelName: string; modelPath: string }): void {
    this.db
      .prepare(`UPDATE chats SET model_id = ?, model_name = ?, model_path = ?, updated_at = ${NOW} WHERE id = ?`)
      .run(model.modelId, model.modelName, model.modelPath, id);
  }

  /** Deletes the chat and (by cascade) its messages. */
  delete(id: number): void {
    this.db.prepare('DELETE FROM chats WHERE id = ?').run(id);
  }

  updateSettings(id: number, settings: StoredChatSettings): void {
    const columns = settingsColumns(settings);
    const assignments = Object.keys(columns).map((name) => `${name} = ?`);
    this.db
      .prepare(`UPDATE chats SET ${assignments.join(', ')}, updated_at = ${NOW} WHERE id = ?`)
      .run(...Object.values(columns), id);
  }

  setActiveLeaf(chatId: number, leafId: number | null): void {
    this.db.prepare('UPDATE chats SET active_leaf_id = ? WHERE id = ?').run(leafId, chatId);
  }

  touch(chatId: number): void {
    this.db.prepare(`UPDATE chats SET updated_at = ${NOW} WHERE id = ?`).run(chatId);
  }

  /** Every message of the chat, oldest first (ids grow with time). */
  messages(chatId: number): MessageView[] {
    return (this.db.prepare('SELECT * FROM messages WHERE chat_id = ? ORDER BY id').all(chatId) as MessageRow[]).map(
      toMessage,
    );
  }

  message(id: number): MessageView | undefined {
    const row = this.db.prepare('SELECT * FROM messages WHERE id = ?').get(id) as MessageRow | undefined;
    return row && toMessage(row);
  }

  addMessage(message: NewMessage): MessageView {
    const result = this.db
      .prepare('INSERT INTO messages (chat_id, parent_id, role, content, status) VALUES (?, ?, ?, ?, ?)')
      .run(message.chatId, message.parentId, message.role, message.content, message.status);
    return this.message(Number(result.lastInsertRowid))!;
  }

  /** Appends streamed text to a message being written (one small transaction). */
  appendContent(id: number, text: string): void {
    this.#append.run(text, id);
  }

  /** Ends a message being written; answers it as it is now (undefined if it was not streaming). */
  finishMessage(id: number, end: MessageEnd): MessageView | undefined {
    const changed = this.db
      .prepare("UPDATE messages SET status = ?, stats_json = ?, error = ? WHERE id = ? AND status = 'streaming'")
      .run(end.status, end.stats ? JSON.stringify(end.stats) : null, end.error ?? null, id).changes;
    return changed > 0 ? this.message(id) : undefined;
  }

  /** Marks every message still 'streaming' (the app stopped mid-answer) 'interrupted'; answers how many. */
  interruptStreaming(): number {
    return this.db.prepare("UPDATE messages SET status = 'interrupted' WHERE status = 'streaming'").run().changes;
  }

  /** Messages matching the user's words, best first, with the matches between « and ». */
  search(text: string, limit: number): SearchHit[] {
    const query = ftsQuery(text);
    if (query === null) return [];
    return this.db
      .prepare(
        `SELECT m.chat_id AS chatId, c.title AS chatTitle, m.id AS messageId, m.role AS role,
                snippet(messages_fts, 0, '«', '»', '…', 16) AS snippet
         FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN chats c ON c.id = m.chat_id
         WHERE messages_fts MATCH ? ORDER BY rank LIMIT ?`,
      )
      .all(query, limit) as SearchHit[];
  }

  #row(id: number): ChatRow | undefined {
    return this.db.prepare(`${CHAT_SELECT} WHERE c.id = ?`).get(id) as ChatRow | undefined;
  }
}

function toSummary(row: ChatRow): ChatSummary {
  return {
    id: row.id,
    title: row.title,
    modelId: row.model_id,
    modelName: row.model_name,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    messageCount: row.message_count,
  };
}

const SAMPLING_FIELDS: readonly (keyof SamplingSettings)[] = [
  'temperature',
  'topK',
  'topP',
  'minP',
  'repeatPenalty',
  'seed',
  'maxTokens',
];

/** The chat's sampling settings; JSON that does not parse, or lacks a field, is an error naming the row. */
function readSampling(row: ChatRow): SamplingSettings {
  const value = parseJsonColumn<unknown>(row.sampling_json, { table: 'chats', id: row.id, column: 'sampling_json' });
  const sampling =
    typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  const missing =
    sampling &&
    SAMPLING_FIELDS.find((f) => !(typeof sampling[f] === 'number' || (f === 'seed' && sampling[f] === null)));
  const problem = sampling === null ? 'is not an object' : missing ? `lacks a number for ${missing}` : null;
  if (problem)
    throw new CorruptRowError(
      `the database row chats ${row.id} has unusable sampling_json (it ${problem}); delete or fix that row`,
    );
  return sampling as unknown as SamplingSettings;
}

/** The chat's prompt format; a value no Gufo writes is an error naming the row. */
function readPromptFormat(row: ChatRow): PromptFormat | null {
  const value = row.prompt_format;
  // Whether the model has a template is checked when the format is set; here only the name.
  if (value === null || promptFormatProblem(value, true) === null) return value as PromptFormat | null;
  throw new CorruptRowError(
    `the database row chats ${row.id} has an unknown prompt_format ${JSON.stringify(value)}; delete or fix that row`,
  );
}

/** The chat's context overflow policy; a value no Gufo writes is an error naming the row. */
function readContextOverflow(row: ChatRow): ContextOverflow {
  const value = row.context_overflow;
  if ((CONTEXT_OVERFLOWS as readonly string[]).includes(value)) return value as ContextOverflow;
  throw new CorruptRowError(
    `the database row chats ${row.id} has an unknown context_overflow ${JSON.stringify(value)}; delete or fix that row`,
  );
}

/** Columns a chat's row is written with (create and updateSettings), named as the table names them. */
type ChatColumns = Partial<Omit<ChatRow, 'id' | 'active_leaf_id' | 'created_at' | 'updated_at' | 'message_count'>>;

/**
 * A chat's settings as their columns hold them, the one list create and updateSettings both
 * write: no tools or tool use is NULL, and so is the template's default thinking.
 */
function settingsColumns(settings: StoredChatSettings): ChatColumns {
  return {
    system_prompt: settings.systemPrompt,
    sampling_json: JSON.stringify(settings.sampling),
    context_size: settings.contextSize,
    prompt_format: settings.promptFormat,
    tools_json: settings.tools?.length ? JSON.stringify(settings.tools) : null,
    context_overflow: settings.contextOverflow,
    kv_cache_type_k: settings.kvCacheTypes.k,
    kv_cache_type_v: settings.kvCacheTypes.v,
    thinking: settings.thinking === null ? null : Number(settings.thinking),
    tool_use_json: settings.toolUse ? JSON.stringify(settings.toolUse) : null,
  };
}

/**
 * The chat's KV cache types. Unlike the other settings, a value no Gufo writes is not an error: it
 * only names how the cache is stored, so it falls back to the server's default (null).
 */
function readKvCacheTypes(row: ChatRow): ChatKvCacheTypes {
  const read = (value: string | null) => (isKvCacheType(value) ? value : null);
  return { k: read(row.kv_cache_type_k), v: read(row.kv_cache_type_v) };
}

/** The chat's thinking switch; a value no Gufo writes is the template's default (null), as a KV cache type is. */
function readThinking(row: ChatRow): boolean | null {
  return row.thinking === 1 ? true : row.thinking === 0 ? false : null;
}

/** The chat's tools (checked when they were set); JSON that is not a list is an error naming the row. */
function readTools(row: ChatRow): { tools?: ChatFunctionTool[] } {
  const tools = parseJsonColumn<unknown>(row.tools_json, { table: 'chats', id: row.id, column: 'tools_json' });
  if (tools === null) return {};
  if (!Array.isArray(tools))
    throw new CorruptRowError(
      `the database row chats ${row.id} has unusable tools_json (it is not a list); delete or fix that row`,
    );
  return { tools: tools as ChatFunctionTool[] };
}

function readToolUse(row: ChatRow): { toolUse?: ChatToolUse } {
  const toolUse = parseJsonColumn<unknown>(row.tool_use_json, { table: 'chats', id: row.id, column: 'tool_use_json' });
  if (toolUse === null) return {};
  if (typeof toolUse !== 'object' || Array.isArray(toolUse))
    throw new CorruptRowError(
      `the database row chats ${row.id} has unusable tool_use_json (it is not an object); delete or fix that row`,
    );
  return { toolUse: toolUse as ChatToolUse };
}

function toMessage(row: MessageRow): MessageView {
  return {
    id: row.id,
    chatId: row.chat_id,
    parentId: row.parent_id,
    role: row.role,
    content: row.content,
    status: row.status,
    stats: parseJsonColumn<GenerationStats>(row.stats_json, { table: 'messages', id: row.id, column: 'stats_json' }),
    error: row.error,
    createdAt: row.created_at,
  };
}
