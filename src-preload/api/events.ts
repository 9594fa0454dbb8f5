/** What the back end pushes to the UI: over IPC in Electron, over SSE (`GET /api/events`) in browser mode. */
import type { Settings } from './app';
import type { AnswerProgress, MessageView, ToolCallState } from './chat';
import type { DownloadView } from './downloads';
import type { LoadedModel } from './engines';
import type { JobState } from './jobs';
import type { McpServerView } from './mcp';

export type GufoEvent =
  /** A job started, progressed or ended. */
  | { type: 'job'; job: JobState }
  /** Models were added, removed, hashed or rescanned: list them again. */
  | { type: 'library-changed' }
  /** Text appended to a message being written. */
  | { type: 'chat-delta'; chatId: number; messageId: number; text: string }
  /** Where an answer being written is: loading the model, or tokens so far (a few times a second). */
  | { type: 'chat-progress'; chatId: number; messageId: number; progress: AnswerProgress }
  /** A message was created or its status/stats changed (not sent for each delta). */
  | { type: 'chat-message'; message: MessageView }
  /** A chat was created, renamed or deleted. */
  | { type: 'chats-changed' }
  /** A chat's tool call began waiting for the user, began running, or ended (null). */
  | { type: 'chat-tool-call'; chatId: number; toolCall: ToolCallState | null }
  /** An MCP server was added, changed, removed, started, or failed: every server now. */
  | { type: 'mcp-servers'; servers: McpServerView[] }
  | { type: 'settings-changed'; settings: Settings }
  /** A download was queued, progressed (a few times a second) or changed status. */
  | { type: 'download'; download: DownloadView }
  /** A model was loaded onto the GPU or freed: every model loaded now. */
  | { type: 'loaded-models'; models: LoadedModel[] };

export type GufoEventListener = (event: GufoEvent) => void;
