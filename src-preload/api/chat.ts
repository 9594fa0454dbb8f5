/** Conversations: a tree of messages per chat (edits and regenerations are branches), streamed from the engine. */

export interface SamplingSettings {
  /** 0 is greedy. */
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  repeatPenalty: number;
  /** Null: a new random seed for every answer. */
  seed: number | null;
  /** Tokens per answer at most. */
  maxTokens: number;
}

export type SamplingPresetName = 'precise' | 'balanced' | 'creative';

export interface ChatSettings {
  systemPrompt: string;
  sampling: SamplingSettings;
  /** Context size in tokens (the KV cache the engine allocates for this chat). */
  contextSize: number;
}

export interface ChatSummary {
  id: number;
  title: string;
  modelId: number | null;
  /** The model's name when the chat was made (kept if the model leaves the library). */
  modelName: string;
  createdAt: string;
  updatedAt: string;
  messageCount: number;
}

export type MessageRole = 'system' | 'user' | 'assistant';

/**
 * 'streaming': being written now; 'interrupted': the app stopped mid-answer (everything streamed
 * until then is kept); 'stopped': the user stopped it.
 */
export type MessageStatus = 'done' | 'streaming' | 'stopped' | 'interrupted' | 'error';

export interface GenerationStats {
  promptTokens: number;
  generatedTokens: number;
  ttftMs: number;
  decodeTokS: number;
  prefillTokS: number;
  stopReason: 'stop' | 'length' | 'cancelled' | 'context' | 'error';
}

export interface MessageView {
  id: number;
  chatId: number;
  parentId: number | null;
  role: MessageRole;
  content: string;
  status: MessageStatus;
  /** For assistant messages once finished. */
  stats: GenerationStats | null;
  error: string | null;
  createdAt: string;
}

/**
 * What happens when the conversation outgrows the context: the system prompt and the newest
 * messages are kept; the oldest messages are left out of the prompt (never deleted).
 */
export interface ContextUsage {
  /** Tokens of the prompt for the active branch, as the model would see it. */
  usedTokens: number;
  contextSize: number;
  /** Messages of the active branch left out of the prompt because they no longer fit. */
  droppedMessages: number;
  policy: string;
}

export interface ChatView {
  chat: ChatSummary;
  settings: ChatSettings;
  /** Every message of every branch; `parentId` links them. */
  messages: MessageView[];
  /** The last message of the branch being shown; null for an empty chat. */
  activeLeafId: number | null;
  contextUsage: ContextUsage | null;
}

export interface NewChat {
  modelId: number;
  title?: string;
  systemPrompt?: string;
  preset?: SamplingPresetName;
  sampling?: Partial<SamplingSettings>;
  contextSize?: number;
}

export interface SearchHit {
  chatId: number;
  chatTitle: string;
  messageId: number;
  role: MessageRole;
  /** The matching text with the matches between « and ». */
  snippet: string;
}

export interface ChatExport {
  /** A suggested file name ("chat-12-once-upon-a-time.md"). */
  fileName: string;
  mimeType: string;
  content: string;
}

export interface ChatApi {
  samplingPresets(): Promise<Record<SamplingPresetName, SamplingSettings>>;
  /** Newest first; with `search`, only chats whose title or messages match. */
  listChats(search?: string): Promise<ChatSummary[]>;
  /** Full-text search over every message (FTS5). */
  searchMessages(query: string, limit?: number): Promise<SearchHit[]>;
  createChat(input: NewChat): Promise<ChatView>;
  getChat(chatId: number): Promise<ChatView>;
  renameChat(chatId: number, title: string): Promise<void>;
  deleteChat(chatId: number): Promise<void>;
  updateChatSettings(chatId: number, patch: Partial<ChatSettings>): Promise<ChatView>;
  /**
   * Adds a user message under `parentId` (default: the active leaf) and starts the answer; the
   * answer streams as 'chat-delta' events. Answers the ids of both messages.
   */
  sendMessage(chatId: number, content: string, parentId?: number | null): Promise<{ userMessageId: number; assistantMessageId: number }>;
  /** A new answer to the same user message, as a sibling branch of `assistantMessageId`. */
  regenerate(chatId: number, assistantMessageId: number): Promise<{ assistantMessageId: number }>;
  /** A new user message beside `messageId` (a sibling branch) with `content`, then its answer. */
  editMessage(chatId: number, messageId: number, content: string): Promise<{ userMessageId: number; assistantMessageId: number }>;
  /** Stops the answer being written in this chat (within one token); no-op when none is. */
  stopGeneration(chatId: number): Promise<void>;
  /** Shows the branch that ends at (or continues from, down the newest children) `messageId`. */
  selectBranch(chatId: number, messageId: number): Promise<ChatView>;
  exportChat(chatId: number, format: 'markdown' | 'json'): Promise<ChatExport>;
}

export const CHAT_METHODS = [
  'samplingPresets',
  'listChats',
  'searchMessages',
  'createChat',
  'getChat',
  'renameChat',
  'deleteChat',
  'updateChatSettings',
  'sendMessage',
  'regenerate',
  'editMessage',
  'stopGeneration',
  'selectBranch',
  'exportChat',
] as const satisfies readonly (keyof ChatApi)[];
