/**
 * ChatApi: conversations as message trees (edits and regenerations are branches), kept in SQLite,
 * with answers streamed from the engine in the background (chat/answers.ts).
 */
import { existsSync } from 'node:fs';
import {
  CONTEXT_TOKENS,
  DEFAULT_CONTEXT_OVERFLOW,
  type ChatApi,
  type ChatSettingsPatch,
  type ChatSummary,
  type ChatView,
  type ContextUsage,
  type MessageRole,
  type MessageView,
  type NewChat,
} from '../../src-preload/api';
import { summarizeModel } from '../core/model-summary';
import { defaultPromptFormat, promptFormats } from '../core/prompt-format';
import { openGguf } from '../node/gguf-io';
import { ChatStore, type ChatRecord, type StoredChatSettings } from '../node/store/chats';
import { Answers } from './chat/answers';
import { chatToolSet, forcedCall } from './chat/mcp-tools';
import { ToolLoop } from './chat/tool-loop';
import { exportChat } from './chat/export';
import { contextUsage, openModelText, type ModelText } from './chat/prompt';
import {
  applySettings,
  DEFAULT_PRESET,
  effectiveSettings,
  isRecord,
  SAMPLING_PRESETS,
  samplingPreset,
  type ModelFacts,
} from './chat/settings';
import { branchPath, newestLeaf } from './chat/tree';
import { withToolCalls } from './chat/tool-calls';
import { requireReadableModel, type BackendContext } from './context';
import { promised } from './promised';
import { promptWorkersOf } from './prompt-worker/index';

/** A chat's title until its first message names it. */
const DEFAULT_TITLE = 'New chat';
const TITLE_MAX = 200;
/** Characters of the first message that become the title. */
const AUTO_TITLE_CHARS = 60;
const SEARCH_LIMIT = 50;
const SEARCH_LIMIT_MAX = 500;
const NEW_CHAT_FIELDS: readonly (keyof NewChat)[] = [
  'modelId',
  'title',
  'systemPrompt',
  'preset',
  'sampling',
  'contextSize',
  'promptFormat',
  'contextOverflow',
  'kvCacheTypes',
  'thinking',
];

export function createChatApi(ctx: BackendContext): ChatApi {
  const store = new ChatStore(ctx.db);
  // Answers cut off when the app was killed keep their text and say what happened to them.
  // Answers left 'streaming' by a crashed owner; another process's may still be being written.
  if (ctx.owner) store.interruptStreaming();
  const loop: ToolLoop = new ToolLoop({
    ctx,
    store,
    answer: (record, parent) => {
      checkCanAnswer(record);
      const assistant = store.transaction(() => insertAnswer(record.summary.id, parent.id));
      startAnswer(record, parent, assistant);
    },
  });
  const answers = new Answers(ctx, store, (chatId) => {
    loop.advance(chatId).catch((err: unknown) => console.error(`gufo: the tool calls of chat ${chatId}:`, err));
  });
  const promptWorkers = promptWorkersOf(ctx);
  ctx.onClose(() => {
    loop.close();
    return answers.close();
  });

  const requireSummary = (chatId: unknown): ChatSummary => {
    const summary = Number.isInteger(chatId) ? store.summary(chatId as number) : undefined;
    if (!summary) throw noChat(chatId);
    return summary;
  };

  /** The chat with its settings (a CorruptRowError when they do not read). */
  const requireChat = (chatId: unknown): ChatRecord => {
    const record = Number.isInteger(chatId) ? store.get(chatId as number) : undefined;
    if (!record) throw noChat(chatId);
    return record;
  };

  /** The message, which must have one of `roles` when they are given. */
  const requireMessage = (chatId: number, messageId: unknown, ...roles: MessageRole[]): MessageView => {
    const message = Number.isInteger(messageId) ? store.message(messageId as number) : undefined;
    if (!message || message.chatId !== chatId)
      throw new Error(`chat ${chatId} has no message with id ${JSON.stringify(messageId)}`);
    if (roles.length > 0 && !roles.includes(message.role))
      throw new Error(`message ${message.id} is a ${message.role} message, not a ${roles.join(' or ')} message`);
    return message;
  };

  /** The model file's tokenizer side, or null when it cannot be read (the chat stays readable). */
  const modelTextOf = (path: string): ModelText | null => {
    try {
      return openModelText(path);
    } catch {
      return null;
    }
  };

  /** The usage bar's numbers; null when the conversation does not render. */
  const usageOf = async (
    record: ChatRecord,
    text: ModelText,
    messages: readonly MessageView[],
  ): Promise<ContextUsage | null> => {
    try {
      const {
        systemPrompt,
        contextSize,
        sampling,
        promptFormat: format,
        tools: own,
        toolUse,
        contextOverflow: overflow,
        thinking,
      } = effectiveSettings(record.settings, text.hasChatTemplate);
      // The MCP tools of servers already running count too; a view starts none.
      const { tools: all } = await chatToolSet(own, ctx.mcp, toolUse.mcpServers, false);
      const tools = all.length > 0 ? all : undefined;
      const limits = { contextSize, maxTokens: sampling.maxTokens, overflow };
      const path = branchPath(messages, record.activeLeafId);
      // An answer being written counts as the prompt it is written after, as its progress does
      // (prompt plus tokens so far), not as a finished turn of its own: the bar never counts down.
      const branch = path.at(-1)?.status === 'streaming' ? path.slice(0, -1) : path;
      const job = {
        kind: 'plan',
        systemPrompt,
        branch,
        limits,
        format,
        tools,
        thinking,
      } as const;
      return contextUsage(await promptWorkers.run(text, record.modelPath, job), limits);
    } catch {
      // A template that rejects this conversation: the answer reports it when one is asked for.
      return null;
    }
  };

  const view = async (chatId: number): Promise<ChatView> => {
    const record = requireChat(chatId);
    const messages = store.messages(chatId);
    const base = {
      chat: record.summary,
      messages,
      activeLeafId: record.activeLeafId,
      kvCacheDefault: ctx.engines.defaultKvTypes,
    };
    const toolCall = await loop.state(chatId).catch(() => null);
    const text = modelTextOf(record.modelPath);
    if (!text) return { ...base, settings: record.settings, contextUsage: null, promptFormats: null, toolCall };
    try {
      const settings = effectiveSettings(record.settings, text.hasChatTemplate);
      const promptFormatsView = {
        modelHasTemplate: text.hasChatTemplate,
        choices: promptFormats(text.hasChatTemplate),
      };
      // Plain completion has no turns, so no calls: its text is shown as written.
      const shown = settings.promptFormat === 'completion' ? messages : withToolCalls(messages, text.toolCalls.syntax);
      return {
        ...base,
        messages: shown,
        settings,
        contextUsage: await usageOf(record, text, messages),
        promptFormats: promptFormatsView,
        toolCall,
      };
    } finally {
      text.close();
    }
  };

  /** The model's K and V head sizes, from its metadata; null when the file or its counts do not read. */
  const headSizesOf = (path: string): { k: number; v: number } | null => {
    try {
      const { gguf, file } = openGguf(path);
      try {
        const { headSize, valueHeadSize } = summarizeModel(gguf);
        return headSize === null || valueHeadSize === null ? null : { k: headSize, v: valueHeadSize };
      } finally {
        file.close();
      }
    } catch {
      return null;
    }
  };

  /** What the settings checks need to know about the model at `path` (id null: it left the library). */
  const modelFactsOf = (modelId: number | null, path: string): ModelFacts => {
    const maxContext = (modelId === null ? undefined : ctx.models.get(modelId)?.contextLength) ?? CONTEXT_TOKENS.max;
    const text = modelTextOf(path);
    const hasChatTemplate = text?.hasChatTemplate ?? null;
    text?.close();
    return { maxContext, hasChatTemplate, headSizes: headSizesOf(path) };
  };

  /** Throws when no answer can start in the chat now, before anything is stored. */
  const checkCanAnswer = (record: ChatRecord): void => {
    answers.assertCanStart(record.summary.id);
    if (!existsSync(record.modelPath)) {
      throw new Error(
        `the model file of this chat is missing: ${record.modelPath} (${record.summary.modelName}); put it back, or start a new chat with another model`,
      );
    }
  };

  /** Adds the empty answer row under `userId` and shows its branch; call inside a transaction. */
  const insertAnswer = (chatId: number, userId: number): MessageView => {
    const assistant = store.addMessage({
      chatId,
      parentId: userId,
      role: 'assistant',
      content: '',
      status: 'streaming',
    });
    store.setActiveLeaf(chatId, assistant.id);
    store.touch(chatId);
    return assistant;
  };

  const startAnswer = (record: ChatRecord, user: MessageView, assistant: MessageView): void => {
    ctx.events.emit({ type: 'chat-message', message: assistant });
    const chatId = record.summary.id;
    answers.start({
      chatId,
      messageId: assistant.id,
      modelPath: record.modelPath,
      settings: record.settings,
      branch: branchPath(store.messages(chatId), user.id),
      tools: async (text) => {
        const toolUse = effectiveSettings(record.settings, text.hasChatTemplate).toolUse;
        const { tools } = await chatToolSet(record.settings.tools, ctx.mcp, toolUse.mcpServers);
        // The choice holds the answer to the user; answers to results choose, so that the model can end its turn.
        const forced = user.role === 'user' ? forcedCall(text, tools, toolUse.toolChoice) : null;
        return { tools, forced };
      },
    });
  };

  /** Adds a user message (or a tool's result) under `parentId` (the chat's first one names it) and starts its answer. */
  const ask = (record: ChatRecord, parentId: number | null, content: unknown, role: 'user' | 'tool' = 'user') => {
    if (typeof content !== 'string' || content.trim() === '')
      throw new Error(role === 'tool' ? 'a tool result needs some text' : 'a message needs some text');
    checkCanAnswer(record);
    const chatId = record.summary.id;
    const retitle = record.summary.title === DEFAULT_TITLE && record.summary.messageCount === 0;
    const { user, assistant } = store.transaction(() => {
      const user = store.addMessage({ chatId, parentId, role, content, status: 'done' });
      if (retitle) store.rename(chatId, autoTitle(content));
      return { user, assistant: insertAnswer(chatId, user.id) };
    });
    ctx.events.emit({ type: 'chat-message', message: user });
    if (retitle) ctx.events.emit({ type: 'chats-changed' });
    startAnswer(record, user, assistant);
    return { userMessageId: user.id, assistantMessageId: assistant.id };
  };

  return promised<ChatApi>({
    samplingPresets() {
      return structuredClone(SAMPLING_PRESETS);
    },

    kvCacheDefault() {
      return { ...ctx.engines.defaultKvTypes };
    },

    listChats(search) {
      // null too: browser mode's JSON sends an absent argument as null.
      if (search != null && typeof search !== 'string') throw new Error('the chat search must be text');
      return store.list(search ?? undefined);
    },

    searchMessages(query, limit) {
      limit ??= SEARCH_LIMIT;
      if (typeof query !== 'string') throw new Error('the message search must be text');
      if (!Number.isInteger(limit) || limit < 1 || limit > SEARCH_LIMIT_MAX)
        throw new Error(`the search limit must be a whole number from 1 to ${SEARCH_LIMIT_MAX}`);
      return store.search(query, limit);
    },

    async createChat(input) {
      if (!isRecord(input)) throw new Error('createChat needs { modelId, ... }');
      const unknown = Object.keys(input).find((k) => !NEW_CHAT_FIELDS.includes(k as keyof NewChat));
      if (unknown) throw new Error(`"${unknown}" is not something a new chat takes (${NEW_CHAT_FIELDS.join(', ')})`);
      if (!Number.isInteger(input.modelId))
        throw new Error(`a new chat needs the id of a model in the library (got ${JSON.stringify(input.modelId)})`);
      const model = requireReadableModel(ctx, input.modelId);
      const facts = modelFactsOf(model.id, model.path);
      const base: StoredChatSettings = {
        systemPrompt: '',
        sampling: samplingPreset(input.preset ?? DEFAULT_PRESET),
        contextSize: Math.max(CONTEXT_TOKENS.min, Math.min(ctx.settings.get().defaultContext, facts.maxContext)),
        promptFormat: facts.hasChatTemplate === null ? null : defaultPromptFormat(facts.hasChatTemplate),
        contextOverflow: DEFAULT_CONTEXT_OVERFLOW,
        kvCacheTypes: { k: null, v: null },
        thinking: null,
      };
      const { systemPrompt, sampling, contextSize, promptFormat, contextOverflow, kvCacheTypes, thinking } = input;
      const settings = applySettings(
        base,
        { systemPrompt, sampling, contextSize, promptFormat, contextOverflow, kvCacheTypes, thinking },
        facts,
      );
      const title = input.title === undefined ? DEFAULT_TITLE : checkTitle(input.title);
      const id = store.create({ title, modelId: model.id, modelName: model.name, modelPath: model.path, settings });
      ctx.events.emit({ type: 'chats-changed' });
      return view(id);
    },

    async getChat(chatId) {
      return view(requireSummary(chatId).id);
    },

    renameChat(chatId, title) {
      const summary = requireSummary(chatId);
      store.rename(summary.id, checkTitle(title));
      ctx.events.emit({ type: 'chats-changed' });
    },

    async deleteChat(chatId) {
      const summary = requireSummary(chatId);
      await answers.stop(summary.id);
      store.delete(summary.id);
      ctx.events.emit({ type: 'chats-changed' });
    },

    async updateChatSettings(chatId, patch) {
      const record = requireChat(chatId);
      const { modelId, ...settings } = isRecord(patch) ? (patch as ChatSettingsPatch) : { modelId: undefined };
      if (modelId === undefined || modelId === record.summary.modelId) {
        const facts = modelFactsOf(record.summary.modelId, record.modelPath);
        store.updateSettings(
          record.summary.id,
          applySettings(record.settings, isRecord(patch) ? settings : patch, facts),
        );
        return view(record.summary.id);
      }
      // Another model: not while it answers; the next answer loads the new model.
      if (!Number.isInteger(modelId))
        throw new Error(`modelId must be the id of a model in the library (got ${JSON.stringify(modelId)})`);
      answers.assertCanStart(record.summary.id);
      const model = requireReadableModel(ctx, modelId);
      if (model.notRunnable) throw new Error(`${model.name} cannot chat: ${model.notRunnable}`);
      const facts = modelFactsOf(model.id, model.path);
      // What depends on the model starts from the new one's: its trained context as the most, its prompt format.
      const base: StoredChatSettings = {
        ...record.settings,
        contextSize: Math.max(CONTEXT_TOKENS.min, Math.min(record.settings.contextSize, facts.maxContext)),
        promptFormat: facts.hasChatTemplate === null ? null : defaultPromptFormat(facts.hasChatTemplate),
      };
      const next = applySettings(base, settings, facts);
      store.transaction(() => {
        store.setModel(record.summary.id, { modelId: model.id, modelName: model.name, modelPath: model.path });
        store.updateSettings(record.summary.id, next);
      });
      ctx.events.emit({ type: 'chats-changed' });
      return view(record.summary.id);
    },

    sendMessage(chatId, content, parentId) {
      const record = requireChat(chatId);
      const parent = parentId ?? record.activeLeafId;
      if (parent !== null) requireMessage(record.summary.id, parent, 'assistant', 'tool');
      return ask(record, parent, content);
    },

    sendToolResult(chatId, content, parentId) {
      const record = requireChat(chatId);
      const parent = requireMessage(record.summary.id, parentId ?? record.activeLeafId, 'assistant');
      const { userMessageId, assistantMessageId } = ask(record, parent.id, content, 'tool');
      return { toolMessageId: userMessageId, assistantMessageId };
    },

    async answerToolCall(chatId, decision) {
      const { id } = requireSummary(chatId);
      answers.assertCanStart(id);
      await loop.decide(id, decision);
    },

    regenerate(chatId, assistantMessageId) {
      const record = requireChat(chatId);
      const user = requireMessage(
        record.summary.id,
        requireMessage(record.summary.id, assistantMessageId, 'assistant').parentId,
        'user',
        'tool',
      );
      checkCanAnswer(record);
      const assistant = store.transaction(() => insertAnswer(record.summary.id, user.id));
      startAnswer(record, user, assistant);
      return { assistantMessageId: assistant.id };
    },

    editMessage(chatId, messageId, content) {
      const record = requireChat(chatId);
      const original = requireMessage(record.summary.id, messageId, 'user');
      return ask(record, original.parentId, content);
    },

    async stopGeneration(chatId) {
      const { id } = requireSummary(chatId);
      loop.stop(id);
      await answers.stop(id);
    },

    async selectBranch(chatId, messageId) {
      const { id } = requireSummary(chatId);
      requireMessage(id, messageId);
      store.setActiveLeaf(id, newestLeaf(store.messages(id), messageId));
      return view(id);
    },

    async exportChat(chatId, format) {
      return exportChat(await view(requireSummary(chatId).id), format);
    },
  });
}

function noChat(chatId: unknown): Error {
  return new Error(`no chat with id ${JSON.stringify(chatId)} (it may have been deleted)`);
}

function checkTitle(title: unknown): string {
  const trimmed = typeof title === 'string' ? title.trim() : '';
  if (trimmed === '' || trimmed.length > TITLE_MAX)
    throw new Error(`a chat title must be text of 1 to ${TITLE_MAX} characters`);
  return trimmed;
}

/** The first line of the first message, cut at a word near AUTO_TITLE_CHARS. */
function autoTitle(content: string): string {
  const line = content.trim().split('\n')[0]!.trim();
  if (line.length <= AUTO_TITLE_CHARS) return line;
  const cut = line.slice(0, AUTO_TITLE_CHARS);
  const space = cut.lastIndexOf(' ');
  return `${(space > AUTO_TITLE_CHARS / 2 ? cut.slice(0, space) : cut).trimEnd()}…`;
}
