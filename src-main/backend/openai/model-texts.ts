/**
 * Tokenizers and chat templates of the models being served, kept open between requests (building
 * a large vocabulary's tokenizer takes tens of milliseconds). A few at most; one in use by a
 * request is never closed under it, and a file changed on disk is opened afresh.
 */
import { openModelText, type ModelText } from '../chat/prompt';

interface Held {
  text: ModelText;
  /** The file's mtime when opened. */
  mtimeMs: number;
  users: number;
  lastUsed: number;
}

export class ModelTexts {
  readonly #held = new Map<string, Held>();
  #closed = false;

  constructor(private readonly keepIdle = 4) {}

  /** Runs `work` with the model text of the file at `path` (as of `mtimeMs`). */
  async use<T>(path: string, mtimeMs: number, work: (text: ModelText) => T | Promise<T>): Promise<T> {
    let held = this.#held.get(path);
    if (held && held.mtimeMs !== mtimeMs && held.users === 0) {
      held.text.close();
      this.#held.delete(path);
      held = undefined;
    }
    // A changed file while the old one is in use: this request gets a text of its own.
    const own = held && held.mtimeMs !== mtimeMs;
    if (!held || own) {
      held = { text: openModelText(path), mtimeMs, users: 0, lastUsed: 0 };
      if (!own) this.#held.set(path, held);
    }
    held.users += 1;
    held.lastUsed = Date.now();
    try {
      return await work(held.text);
    } finally {
      held.users -= 1;
      if (own || (this.#closed && held.users === 0)) held.text.close();
      else this.#trim();
    }
  }

  /** Closes every text now, or when its last request ends (the back end is closing). */
  close(): void {
    this.#closed = true;
    for (const held of this.#held.values()) if (held.users === 0) held.text.close();
    this.#held.clear();
  }

  /** Closes the least recently used idle texts beyond `keepIdle`. */
  #trim(): void {
    const idle = [...this.#held.entries()]
      .filter(([, h]) => h.users === 0)
      .sort((a, b) => a[1].lastUsed - b[1].lastUsed);
    for (const [path, held] of idle.slice(0, Math.max(0, this.#held.size - this.keepIdle))) {
      held.text.close();
      this.#held.delete(path);
    }
  }
}
