/**
 * The last few GGUF files the inspector opened, kept open so that paging through metadata or
 * tensors does not parse the header again on every request. Keyed by path, size and mtime: a file
 * that changed on disk is opened afresh. A file is closed once it has left the cache and no work
 * still reads it (a background job may outlive its place in the cache).
 */
import { statSync } from 'node:fs';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { openGguf, type OpenGguf } from '../gguf-io';

interface Entry {
  key: string;
  open: OpenGguf;
  users: number;
  evicted: boolean;
}

/** A file in use; call release() when done with it. */
export interface GgufLease {
  readonly gguf: GgufFile;
  release(): void;
}

export class GgufCache {
  /** Most recently used last. */
  readonly #entries = new Map<string, Entry>();

  constructor(private readonly capacity = 4) {}

  /** Opens `path` (or reuses it, when unchanged) for work that may outlive this call. */
  acquire(path: string): GgufLease {
    const stat = statSync(path);
    const key = `${path}\0${stat.size}\0${stat.mtimeMs}`;
    let entry = this.#entries.get(path);
    if (entry && entry.key !== key) {
      this.#evict(entry);
      entry = undefined;
    }
    if (entry) this.#entries.delete(path);
    entry ??= { key, open: openGguf(path), users: 0, evicted: false };
    this.#entries.set(path, entry);
    for (const old of this.#entries.values()) {
      if (this.#entries.size <= this.capacity) break;
      this.#evict(old);
    }
    entry.users++;
    const held = entry;
    let released = false;
    return {
      gguf: held.open.gguf,
      release: () => {
        if (released) return;
        released = true;
        held.users--;
        this.#closeIfIdle(held);
      },
    };
  }

  /** Runs `work` on the file at `path` and releases it after. */
  use<T>(path: string, work: (gguf: GgufFile) => T): T {
    const lease = this.acquire(path);
    try {
      return work(lease.gguf);
    } finally {
      lease.release();
    }
  }

  /** Closes every file not in use; files in use close when released. */
  close(): void {
    for (const entry of [...this.#entries.values()]) this.#evict(entry);
  }

  #evict(entry: Entry): void {
    if (this.#entries.get(entry.open.gguf.file) === entry) this.#entries.delete(entry.open.gguf.file);
    entry.evicted = true;
    this.#closeIfIdle(entry);
  }

  #closeIfIdle(entry: Entry): void {
    if (entry.evicted && entry.users === 0) entry.open.file.close();
  }
}
