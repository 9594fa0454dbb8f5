/**
 * The app's chat running its MCP tools: an answer's calls are asked about one at a time (or run
 * at once when the tool is always allowed), each result saved as a tool message before the next
 * step, and once every call has one the model answers them, round after round up to the chat's
 * limit. What waits is read from the stored messages, so a kill loses nothing: the call is asked
 * again.
 */
import {
  DEFAULT_TOOL_USE,
  type MessageStatus,
  type MessageView,
  type ToolCallDecision,
  type ToolCallState,
} from '../../../src-preload/api';
import type { ChatRecord, ChatStore } from '../../node/store/chats';
import type { BackendContext } from '../context';
import { callsAnswered, chatToolSet, DENIED, runToolCall, unansweredCall, type ToolOutcome } from './mcp-tools';
import { openModelText } from './prompt';
import { branchPath } from './tree';

export interface ToolLoopDeps {
  ctx: BackendContext;
  store: ChatStore;
  /** Starts the model's answer to the tool message `parent` (all calls answered). */
  answer(record: ChatRecord, parent: MessageView): void;
}

/** The waiting call of a chat, with the server that runs it. */
interface Waiting extends ToolCallState {
  parentId: number;
}

export class ToolLoop {
  /** The call running in each chat, with its cancel. */
  readonly #running = new Map<number, { state: ToolCallState; controller: AbortController }>();

  constructor(private readonly deps: ToolLoopDeps) {}

  /** The chat's call that runs or waits for the user; null when none. */
  async state(chatId: number): Promise<ToolCallState | null> {
    const running = this.#running.get(chatId);
    if (running) return running.state;
    const waiting = await this.#waiting(chatId);
    if (!waiting) return null;
    const { parentId: _, ...state } = waiting;
    return state;
  }

  /** After an answer or a result: runs an always-allowed call, else asks about the next one, or lets the model go on. */
  async advance(chatId: number): Promise<void> {
    const record = this.deps.store.get(chatId);
    if (!record || this.#running.has(chatId)) return;
    const waiting = await this.#waiting(chatId);
    if (waiting) {
      const allowed = (record.settings.toolUse ?? DEFAULT_TOOL_USE).allowedTools;
      if (allowed.includes(`${waiting.server}/${waiting.name}`)) return this.#run(record, waiting);
      return this.#announce(chatId, waiting);
    }
    this.#announce(chatId, null);
    const branch = this.#branch(record);
    const text = openModelText(record.modelPath);
    try {
      if (callsAnswered(branch, text.toolCalls.syntax)) this.deps.answer(record, branch.at(-1)!);
    } finally {
      text.close();
    }
  }

  /** The user's word on the waiting call; resolves once it is taken (the call runs in the background). */
  async decide(chatId: number, decision: ToolCallDecision): Promise<void> {
    if (decision !== 'run' && decision !== 'always' && decision !== 'deny')
      throw new Error(`a tool call's answer must be "run", "always" or "deny" (got ${JSON.stringify(decision)})`);
    if (this.#running.has(chatId)) throw new Error(`a tool call is already running in chat ${chatId}`);
    const record = this.deps.store.get(chatId);
    const waiting = record && (await this.#waiting(chatId));
    if (!record || !waiting) throw new Error(`chat ${chatId} has no tool call waiting for an answer`);
    if (decision === 'deny') return this.#save(record, waiting, DENIED, 'error');
    if (decision === 'always') {
      const toolUse = record.settings.toolUse ?? { ...DEFAULT_TOOL_USE };
      const allowed = [...new Set([...toolUse.allowedTools, `${waiting.server}/${waiting.name}`])];
      record.settings.toolUse = { ...toolUse, allowedTools: allowed };
      this.deps.store.updateSettings(chatId, record.settings);
    }
    this.#run(record, waiting).catch((err: unknown) => console.error(`gufo: tool call in chat ${chatId}:`, err));
  }

  /** Cancels the chat's running call (its message says it was stopped; the model does not go on). */
  stop(chatId: number): void {
    this.#running.get(chatId)?.controller.abort();
  }

  /** Cancels every running call (the back end is closing). */
  close(): void {
    for (const { controller } of this.#running.values()) controller.abort();
  }

  #branch(record: ChatRecord): MessageView[] {
    return branchPath(this.deps.store.messages(record.summary.id), record.activeLeafId);
  }

  async #waiting(chatId: number): Promise<Waiting | null> {
    const record = this.deps.store.get(chatId);
    if (!record) return null;
    const toolUse = record.settings.toolUse ?? DEFAULT_TOOL_USE;
    if (toolUse.mcpServers.length === 0) return null;
    const branch = this.#branch(record);
    let syntax;
    try {
      const text = openModelText(record.modelPath);
      syntax = text.toolCalls.syntax;
      text.close();
    } catch {
      return null; // the model file is gone: the chat stays readable
    }
    const found = unansweredCall(branch, syntax, toolUse.maxRounds);
    if (!found) return null;
    const { owners } = await chatToolSet(record.settings.tools, this.deps.ctx.mcp, toolUse.mcpServers);
    const server = owners.get(found.call.name);
    if (!server) return null; // one of the chat's own tools: its result is the user's to give
    return {
      messageId: branch[found.at]!.id,
      index: found.index,
      server,
      name: found.call.name,
      arguments: found.call.arguments,
      state: 'asking',
      parentId: branch.at(-1)!.id,
    };
  }

  async #run(record: ChatRecord, waiting: Waiting): Promise<void> {
    const chatId = record.summary.id;
    const controller = new AbortController();
    const { parentId: _, ...asking } = waiting;
    const state: ToolCallState = { ...asking, state: 'running' };
    this.#running.set(chatId, { state, controller });
    this.#announce(chatId, state);
    let outcome: ToolOutcome;
    try {
      outcome = await runToolCall(this.deps.ctx.mcp, waiting.server, waiting, controller.signal);
    } finally {
      this.#running.delete(chatId);
    }
    if (controller.signal.aborted)
      return this.#save(record, waiting, { content: 'Error: the user stopped this call', error: 'stopped' }, 'stopped');
    await this.#save(record, waiting, outcome, outcome.error === null ? 'done' : 'error');
  }

  /** Saves the call's tool message as the branch's new end, then takes the next step. */
  async #save(
    record: ChatRecord,
    waiting: Waiting,
    outcome: ToolOutcome,
    status: Exclude<MessageStatus, 'streaming'>,
  ): Promise<void> {
    const { store, ctx } = this.deps;
    const chatId = record.summary.id;
    const message = store.transaction(() => {
      // Added as being written, then ended with its status and reason: the store's one way to set an error.
      const added = store.addMessage({
        chatId,
        parentId: waiting.parentId,
        role: 'tool',
        content: outcome.content,
        status: 'streaming',
      });
      store.setActiveLeaf(chatId, added.id);
      store.touch(chatId);
      return store.finishMessage(added.id, { status, error: outcome.error })!;
    });
    ctx.events.emit({ type: 'chat-message', message });
    if (status === 'stopped') return this.#announce(chatId, null);
    await this.advance(chatId);
  }

  #announce(chatId: number, toolCall: ToolCallState | null): void {
    this.deps.ctx.events.emit({ type: 'chat-tool-call', chatId, toolCall });
  }
}
