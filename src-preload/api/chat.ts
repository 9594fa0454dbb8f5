/** Conversations: a tree of messages per chat (edits and regenerations are branches), streamed from the engine. */
import type { ContextOverflow } from './context-overflow';
import type { KvCacheType, KvCacheTypes } from './kv-cache';

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

/**
 * How the conversation becomes the text the model continues: "model" (the file's own chat
 * template; only for a model that has one), "completion" (plain text: the system prompt, then the
 * messages as written, which the model continues; the default for a model without a template), or
 * a built-in template family's name ("chatml", "llama2", ...: ChatView.promptFormats lists them).
 */
export type PromptFormat = 'model' | 'completion' | (string & {});

export interface PromptFormatChoice {
  value: PromptFormat;
  label: string;
}

export interface ChatPromptFormats {
  /** Whether the model file has its own chat template (tokenizer.chat_template); a base model has none. */
  modelHasTemplate: boolean;
  /** The formats this chat may use, in the order to offer them. */
  choices: PromptFormatChoice[];
}

/** A function the model may call, as OpenAI's `tools` list holds it (a type, not an interface: templates take it as a plain record). */
export type ChatFunctionTool = {
  type: 'function';
  function: { name: string; description?: string; parameters: Record<string, unknown> };
};

/**
 * A chat's own KV cache types, K and V each (llama.cpp's --cache-type-k/-v); null: the server's
 * default (ChatView.kvCacheDefault: f16, unless `gufo serve --cache-type-k/-v` names another).
 */
export interface ChatKvCacheTypes {
  k: KvCacheType | null;
  v: KvCacheType | null;
}

/** How a chat's model uses tools: which MCP servers it sees, whether it must call, how far calls go on alone. */
export interface ChatToolUse {
  /** Names of MCP servers (Settings › Tools) whose tools the model sees, beside `tools`. */
  mcpServers: string[];
  /**
   * The API's tool_choice: "auto" (the model chooses), "required" (some call), or the name of the
   * one tool it must call. It holds the answer to the user's message; answers to tool results choose freely.
   */
  toolChoice: string;
  /** Rounds of tool calls after one user message, at most; then the chat waits for the user. */
  maxRounds: number;
  /** Tools that run without asking ("Always allow"), as "server/tool". */
  allowedTools: string[];
}

/** A chat's tool use until it is changed: no MCP server, the model chooses, 8 rounds, every call asked. */
export const DEFAULT_TOOL_USE: Readonly<ChatToolUse> = {
  mcpServers: [],
  toolChoice: 'auto',
  maxRounds: 8,
  allowedTools: [],
};
/** The most rounds of calls one user message may lead to. */
export const MAX_TOOL_ROUNDS = 100;

export interface ChatSettings {
  systemPrompt: string;
  /** Functions the model may call, given to its chat template as the server gives them; absent: none. */
  tools?: ChatFunctionTool[];
  /** Absent: DEFAULT_TOOL_USE. */
  toolUse?: ChatToolUse;
  sampling: SamplingSettings;
  /** Context size in tokens (the KV cache the engine allocates for this chat). */
  contextSize: number;
  /** Null only for a chat made before formats existed whose model file cannot be read (its default is unknown). */
  promptFormat: PromptFormat | null;
  /** What an answer does when the conversation outgrows the context. */
  contextOverflow: ContextOverflow;
  /** The KV cache's element types the chat's model is loaded with. */
  kvCacheTypes: ChatKvCacheTypes;
  /** Reasoning models (Qwen 3 and others): the template's enable_thinking; null: the template's default. */
  thinking: boolean | null;
}

/** Settings to change; `sampling` may name only the fields that change. */
export interface ChatSettingsPatch {
  /**
   * Another model of the library for the chat (not while it answers): the next answer uses it. The
   * context size shrinks to its trained context if need be; the prompt format becomes its default.
   */
  modelId?: number;
  systemPrompt?: string;
  /** An OpenAI `tools` list (checked: a mistake names its field); [] for none. */
  tools?: unknown[];
  /** The fields that change. */
  toolUse?: Partial<ChatToolUse>;
  sampling?: Partial<SamplingSettings>;
  contextSize?: number;
  promptFormat?: PromptFormat;
  contextOverflow?: ContextOverflow;
  /** Either or both; null for the server's default. */
  kvCacheTypes?: Partial<ChatKvCacheTypes>;
  /** Null for the template's default. */
  thinking?: boolean | null;
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

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/**
 * 'streaming': being written now; 'interrupted': the app stopped mid-answer (everything streamed
 * until then is kept); 'stopped': the user stopped it.
 */
export type MessageStatus = 'done' | 'streaming' | 'stopped' | 'interrupted' | 'error';

/**
 * An answer that filled the context and went on from a shorter prompt (context overflow
 * 'truncate-middle' or 'rolling-window') has the numbers of its last part, and the tokens of all.
 */
export interface GenerationStats {
  /** Tokens of the whole prompt (system prompt and the messages that fit). */
  promptTokens: number;
  /** Of those, tokens the engine still held from the previous turn and did not evaluate again. */
  reusedTokens: number;
  generatedTokens: number;
  ttftMs: number;
  decodeTokS: number;
  /** Over the prompt tokens evaluated (promptTokens - reusedTokens, or promptReadTokens - reusedTokens). */
  prefillTokS: number;
  /** Stopped while the prompt was being read: the tokens read by then, reused ones included (absent: all of it). */
  promptReadTokens?: number;
  /**
   * 'stop': the model ended its turn; 'length': maxTokens reached; 'context': the context is full;
   * 'cancelled': stopped.
   */
  stopReason: 'stop' | 'length' | 'cancelled' | 'context' | 'error';
  /** The sampling seed used (a fresh random one when the settings' seed is null), to reproduce it. */
  seed: number;
  /** The context it was written in (absent on answers written before it was recorded). */
  contextSize?: number;
  /** Messages at the start of the conversation left out of the prompt to fit the context (absent: none). */
  leftOutMessages?: number;
  /** The KV cache's types it was written with (absent on answers written before it was recorded). */
  kvCacheTypes?: KvCacheTypes;
}

/**
 * How an answer being written is coming along, a few times a second ('chat-progress' events);
 * its GenerationStats replace it once it ends.
 */
export type AnswerProgress =
  /** The chat's model is being loaded onto the GPU: tensor bytes uploaded (totalBytes 0 until the engine has opened the file). */
  | { phase: 'loading'; doneBytes: number; totalBytes: number }
  /**
   * Then each of the model's GPU kernels runs once, so that the answer's timings hold none of
   * their compilation (minutes on a software GPU with an empty shader cache, a moment after).
   */
  | { phase: 'preparing'; doneKernels: number; totalKernels: number }
  /**
   * Tokens so far, counted from the engine's token events: the prompt's (for an answer that went
   * on past a full context, the conversation's part of it), and those generated;
   * decodeTokS over the tokens after the first (null until there are two).
   */
  | { phase: 'generating'; promptTokens: number; generatedTokens: number; decodeTokS: number | null };

/** A tool call an assistant message makes, read from its text in the chat model's own call syntax. */
export interface MessageToolCall {
  name: string;
  /** The arguments' JSON text as the model wrote them (whitespace outside strings dropped). */
  arguments: string;
}

export interface MessageView {
  id: number;
  chatId: number;
  parentId: number | null;
  /** 'tool': a tool's result, answering the calls of the assistant message before it. */
  role: MessageRole;
  /** As written (an answer's tool calls in the model's syntax). */
  content: string;
  status: MessageStatus;
  /** For assistant messages once finished. */
  stats: GenerationStats | null;
  error: string | null;
  createdAt: string;
  /**
   * A finished assistant message's tool calls and the text before them (ChatView only; absent
   * when it makes none, or the model file cannot be read).
   */
  toolCalls?: { content: string; calls: MessageToolCall[] };
}

/** A call of an MCP tool the chat's last answer makes, waiting for the user's word or running. */
export interface ToolCallState {
  /** The assistant message that makes the call. */
  messageId: number;
  /** Its place among that message's calls. */
  index: number;
  server: string;
  name: string;
  /** The arguments' JSON text, shown before it runs. */
  arguments: string;
  /** 'asking': Run, Always allow or Deny; 'running': the server has it (Stop cancels it). */
  state: 'asking' | 'running';
}

/** The user's word on a tool call: run it once, run this tool always in this chat, or refuse it. */
export type ToolCallDecision = 'run' | 'always' | 'deny';

/** How full the context is for the active branch, and what the chat does when it outgrows it. */
export interface ContextUsage {
  /** Tokens of the prompt for the active branch, as the model would see it. */
  usedTokens: number;
  contextSize: number;
  /** Messages of the active branch left out of the prompt because they no longer fit. */
  droppedMessages: number;
  /** The chat's policy, and its summary ("When the context is full: ..."). */
  overflow: ContextOverflow;
  policy: string;
}

export interface ChatView {
  chat: ChatSummary;
  settings: ChatSettings;
  /** Every message of every branch; `parentId` links them. */
  messages: MessageView[];
  /** The last message of the branch being shown; null for an empty chat. */
  activeLeafId: number | null;
  /** For the active branch; null when the model file cannot be read (the chat itself stays readable). */
  contextUsage: ContextUsage | null;
  /** Null when the model file cannot be read. */
  promptFormats: ChatPromptFormats | null;
  /** The KV cache types a null in settings.kvCacheTypes stands for (the server's default). */
  kvCacheDefault: KvCacheTypes;
  /** The MCP tool call of the active branch's last answer that waits for the user or runs; absent or null: none. */
  toolCall?: ToolCallState | null;
}

export interface NewChat {
  modelId: number;
  title?: string;
  systemPrompt?: string;
  preset?: SamplingPresetName;
  sampling?: Partial<SamplingSettings>;
  contextSize?: number;
  /** Default: the model's own template, or plain completion for a model without one. */
  promptFormat?: PromptFormat;
  /** Default: DEFAULT_CONTEXT_OVERFLOW. */
  contextOverflow?: ContextOverflow;
  /** Default: the server's (null each). */
  kvCacheTypes?: Partial<ChatKvCacheTypes>;
  /** Default: null, the template's own. */
  thinking?: boolean | null;
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
  /** The KV cache types a chat that names none gets (ChatView.kvCacheDefault), for the New chat dialog. */
  kvCacheDefault(): Promise<KvCacheTypes>;
  /** Newest first; with `search`, only chats whose title or messages match. */
  listChats(search?: string): Promise<ChatSummary[]>;
  /** Full-text search over every message (FTS5). */
  searchMessages(query: string, limit?: number): Promise<SearchHit[]>;
  createChat(input: NewChat): Promise<ChatView>;
  getChat(chatId: number): Promise<ChatView>;
  renameChat(chatId: number, title: string): Promise<void>;
  deleteChat(chatId: number): Promise<void>;
  /** Takes effect from the next answer. An invalid value is an error naming the field ("sampling.topP"). */
  updateChatSettings(chatId: number, patch: ChatSettingsPatch): Promise<ChatView>;
  /**
   * Adds a user message under `parentId` (an assistant message, or a tool's result; absent or null: the active leaf,
   * since browser mode's JSON turns an absent argument into null; a new first message is an
   * editMessage of the first one) and starts the answer; the answer streams as 'chat-delta' events.
   * Answers the ids of both messages at once. Like regenerate and editMessage, it fails while an
   * answer is being written in the chat (one at a time per chat).
   */
  sendMessage(
    chatId: number,
    content: string,
    parentId?: number | null,
  ): Promise<{ userMessageId: number; assistantMessageId: number }>;
  /**
   * Adds a tool's result (`content`, often JSON) under `parentId` (an assistant message that called
   * the tool; absent or null: the active leaf) and starts the answer to it, as sendMessage does.
   */
  sendToolResult(
    chatId: number,
    content: string,
    parentId?: number | null,
  ): Promise<{ toolMessageId: number; assistantMessageId: number }>;
  /**
   * The user's word on the chat's waiting tool call (ChatView.toolCall): its result (or the
   * refusal) becomes a tool message, and once every call of the answer has one the model goes on.
   */
  answerToolCall(chatId: number, decision: ToolCallDecision): Promise<void>;
  /** A new answer to the same user message (or tool result), as a sibling branch of `assistantMessageId`. */
  regenerate(chatId: number, assistantMessageId: number): Promise<{ assistantMessageId: number }>;
  /** A new user message beside `messageId` (a sibling branch) with `content`, then its answer. */
  editMessage(
    chatId: number,
    messageId: number,
    content: string,
  ): Promise<{ userMessageId: number; assistantMessageId: number }>;
  /**
   * Stops the answer being written in this chat (the engine stops within one token); resolves once
   * it is saved as 'stopped'; a tool call running in it is cancelled. No-op when none is being written.
   */
  stopGeneration(chatId: number): Promise<void>;
  /** Shows the branch that ends at (or continues from, down the newest children) `messageId`. */
  selectBranch(chatId: number, messageId: number): Promise<ChatView>;
  exportChat(chatId: number, format: 'markdown' | 'json'): Promise<ChatExport>;
}

export const CHAT_METHODS = [
  'samplingPresets',
  'kvCacheDefault',
  'listChats',
  'searchMessages',
  'createChat',
  'getChat',
  'renameChat',
  'deleteChat',
  'updateChatSettings',
  'sendMessage',
  'sendToolResult',
  'answerToolCall',
  'regenerate',
  'editMessage',
  'stopGeneration',
  'selectBranch',
  'exportChat',
] as const satisfies readonly (keyof ChatApi)[];
