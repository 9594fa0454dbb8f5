/** The chat list beside the conversation: every chat, newest first, or those matching a search, with message hits. */
import type { ChatSummary, GufoBridge, SearchHit } from '../../src-preload/api';
import { messageOf } from './format';

/** Typing pauses this long before a search runs. */
const SEARCH_DELAY_MS = 200;
const MAX_HITS = 30;

export class ChatListStore {
  chats: ChatSummary[] = $state([]);
  hits: SearchHit[] = $state([]);
  /** The search as typed; the lists answer `searched`, which lags it by the typing pause. */
  query = $state('');
  searched = $state('');
  loaded = $state(false);
  error: string | null = $state(null);

  readonly #gufo: GufoBridge;
  readonly #stopListening: () => void;
  #timer: ReturnType<typeof setTimeout> | undefined;
  /** Bumped by each refresh, so an older answer cannot replace a newer one. */
  #refreshCount = 0;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
    this.#stopListening = gufo.onEvent((event) => {
      // A finished message reorders the list (newest first) and changes its counts.
      if (event.type === 'chats-changed' || (event.type === 'chat-message' && event.message.status !== 'streaming'))
        void this.refresh();
    });
    void this.refresh();
  }

  dispose(): void {
    this.#stopListening();
    clearTimeout(this.#timer);
  }

  search(query: string): void {
    this.query = query;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => void this.refresh(), SEARCH_DELAY_MS);
  }

  async refresh(): Promise<void> {
    const count = ++this.#refreshCount;
    const query = this.query.trim();
    try {
      const [chats, hits] = await Promise.all([
        // No argument at all for "every chat": the HTTP binding would send an undefined one as null.
        query === '' ? this.#gufo.listChats() : this.#gufo.listChats(query),
        query === '' ? [] : this.#gufo.searchMessages(query, MAX_HITS),
      ]);
      if (count !== this.#refreshCount) return;
      this.chats = chats;
      this.hits = hits;
      this.searched = query;
      this.error = null;
      this.loaded = true;
    } catch (err) {
      if (count === this.#refreshCount) this.error = messageOf(err);
    }
  }
}
