/**
 * The chat on show: its view (every message of every branch), kept live from the back end's
 * events, and what the user can do to it. Components read it and call its methods.
 */
import { SvelteMap } from 'svelte/reactivity';
import type { AnswerProgress, ChatSettingsPatch, ChatView, GufoBridge, ToolCallDecision } from '../../src-preload/api';
import { downloadExport } from './chat-download';
import { activePath, buildTree } from './chat-tree';
import { applyChatEvent, isStreaming, mergeFetchedView } from './chat-view';
import { messageOf } from './format';

export class ChatStore {
  view: ChatView | null = $state(null);
  /** The chat being opened, while its view loads. */
  loadingId: number | null = $state(null);
  /** What went wrong last (shown with role="alert" until dismissed or the next success). */
  error: string | null = $state(null);
  /** A message to scroll to and highlight once shown (a search hit). */
  focusId: number | null = $state(null);

  readonly tree = $derived(buildTree(this.view?.messages ?? []));
  /** The conversation on show: the active branch from its first message to its leaf. */
  readonly path = $derived(activePath(this.tree, this.view?.activeLeafId ?? null));
  readonly streaming = $derived(isStreaming(this.view));
  /** An MCP tool runs in this chat (Stop cancels it). */
  readonly toolRunning = $derived(this.view?.toolCall?.state === 'running');
  /** Answers being written in this chat: the model load, or tokens so far; kept until a fresh view has the final numbers. */
  readonly live = new SvelteMap<number, AnswerProgress>();

  readonly #gufo: GufoBridge;
  readonly #stopListening: () => void;
  /** Bumped by each open(), so a slow load cannot replace a later one. */
  #openCount = 0;
  /** A leaf an action answered before the event creating it arrived. */
  #pendingLeafId: number | null = null;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    this.#stopListening = gufo.onEvent((event) => {
      if (event.type === 'chats-changed') return void this.#refresh();
      if (event.type === 'chat-progress') {
        if (event.chatId === this.chatId) this.live.set(event.messageId, event.progress);
        return;
      }
      if (!this.view || applyChatEvent(this.view, event) === 'none') return;
      this.#adoptPendingLeaf();
      // A finished answer changes the context usage, which only a fresh view tells.
      if (event.type === 'chat-message' && event.message.status !== 'streaming') {
        const ended = event.message.id;
        void this.#refresh().then(() => this.live.delete(ended));
      }
    });
  }

  dispose(): void {
    this.#stopListening();
  }

  get chatId(): number | null {
    return this.view?.chat.id ?? null;
  }

  /** Shows chat `chatId` (none for null); with `atMessageId`, on the branch through that message. */
  async open(chatId: number | null, atMessageId: number | null = null): Promise<void> {
    const count = ++this.#openCount;
    if (chatId !== this.chatId) this.live.clear();
    this.loadingId = chatId;
    if (chatId === null) {
      this.view = null;
      return;
    }
    try {
      const view =
        atMessageId === null ? await this.#gufo.getChat(chatId) : await this.#gufo.selectBranch(chatId, atMessageId);
      if (count !== this.#openCount) return;
      this.view = mergeFetchedView(this.view, view);
      this.focusId = atMessageId;
      this.error = null;
    } catch (err) {
      if (count !== this.#openCount) return;
      this.view = null;
      this.error = messageOf(err);
    } finally {
      if (count === this.#openCount) this.loadingId = null;
    }
  }

  /** Sends `content` as the next user message; false when it was not sent (the error is shown). */
  send(content: string): Promise<boolean> {
    return this.#act(async (chatId) => {
      const { assistantMessageId } = await this.#gufo.sendMessage(chatId, content);
      this.#showLeaf(assistantMessageId);
    });
  }

  /** Sends `content` as the result of the tool the last answer called; false when it was not sent (the error is shown). */
  sendToolResult(content: string): Promise<boolean> {
    return this.#act(async (chatId) => {
      const { assistantMessageId } = await this.#gufo.sendToolResult(chatId, content);
      this.#showLeaf(assistantMessageId);
    });
  }

  /** The user's word on the MCP tool call waiting in this chat. */
  answerToolCall(decision: ToolCallDecision): Promise<boolean> {
    return this.#act((chatId) => this.#gufo.answerToolCall(chatId, decision));
  }

  regenerate(assistantMessageId: number): Promise<boolean> {
    return this.#act(async (chatId) => {
      const answer = await this.#gufo.regenerate(chatId, assistantMessageId);
      this.#showLeaf(answer.assistantMessageId);
    });
  }

  /** Writes `content` as a new version of user message `messageId`, then answers it. */
  edit(messageId: number, content: string): Promise<boolean> {
    return this.#act(async (chatId) => {
      const { assistantMessageId } = await this.#gufo.editMessage(chatId, messageId, content);
      this.#showLeaf(assistantMessageId);
    });
  }

  stop(): Promise<boolean> {
    return this.#act((chatId) => this.#gufo.stopGeneration(chatId));
  }

  selectBranch(messageId: number): Promise<boolean> {
    return this.#act(async (chatId) => this.#adopt(await this.#gufo.selectBranch(chatId, messageId)));
  }

  updateSettings(patch: ChatSettingsPatch): Promise<boolean> {
    return this.#act(async (chatId) => this.#adopt(await this.#gufo.updateChatSettings(chatId, patch)));
  }

  rename(title: string): Promise<boolean> {
    return this.#act(async (chatId) => {
      await this.#gufo.renameChat(chatId, title);
      if (this.view?.chat.id === chatId) this.view.chat.title = title;
    });
  }

  delete(): Promise<boolean> {
    return this.#act(async (chatId) => {
      await this.#gufo.deleteChat(chatId);
      if (this.view?.chat.id === chatId) this.view = null;
    });
  }

  export(format: 'markdown' | 'json'): Promise<boolean> {
    return this.#act(async (chatId) => downloadExport(await this.#gufo.exportChat(chatId, format)));
  }

  dismissError(): void {
    this.error = null;
  }

  /** Runs an action on the open chat; failures become `error` instead of being thrown. */
  async #act(action: (chatId: number) => Promise<void>): Promise<boolean> {
    const chatId = this.chatId;
    if (chatId === null) return false;
    try {
      await action(chatId);
      this.error = null;
      return true;
    } catch (err) {
      this.error = messageOf(err);
      return false;
    }
  }

  async #refresh(): Promise<void> {
    const chatId = this.chatId;
    if (chatId === null) return;
    try {
      this.#adopt(await this.#gufo.getChat(chatId));
    } catch {
      // The chat was deleted (elsewhere): the list shows it is gone, and the next action says why.
    }
  }

  #adopt(view: ChatView): void {
    if (this.view?.chat.id !== view.chat.id) return;
    this.view = mergeFetchedView(this.view, view);
    this.#adoptPendingLeaf();
  }

  #showLeaf(messageId: number): void {
    this.#pendingLeafId = messageId;
    this.#adoptPendingLeaf();
  }

  #adoptPendingLeaf(): void {
    if (!this.view || this.#pendingLeafId === null || !this.tree.byId.has(this.#pendingLeafId)) return;
    this.view.activeLeafId = this.#pendingLeafId;
    this.#pendingLeafId = null;
  }
}
