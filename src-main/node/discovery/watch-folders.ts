/**
 * Watches folders for models coming and going, and calls back once things settle (a copy or a
 * pull writes for a while). Where fs.watch is recursive (macOS, Windows) the roots are watched;
 * on Linux (inotify, one folder per watch) every folder the last scan read is. Files being
 * written (temporary, partial, hidden) are ignored: only their final rename counts.
 */
import { watch, type FSWatcher } from 'node:fs';

export interface FolderWatcherOptions {
  /** Quiet time before calling back. */
  debounceMs?: number;
  /** Watches at most this many folders (inotify's per-user limit is shared with every other app). */
  maxFolders?: number;
  /** Whether fs.watch can watch a tree (default: not on Linux). */
  recursive?: boolean;
}

/** Names of files still being written: ours (.part, .tmp), Ollama's (-partial), Hugging Face's (.incomplete, .lock). */
const IN_PROGRESS = /(^\.|\.part$|\.tmp$|-partial(-\d+)?$|\.incomplete$|\.lock$)/;

export class FolderWatcher {
  readonly recursive: boolean;
  readonly #watchers = new Map<string, FSWatcher>();
  readonly #onChange: () => void;
  readonly #debounceMs: number;
  readonly #maxFolders: number;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #closed = false;

  constructor(onChange: () => void, options: FolderWatcherOptions = {}) {
    this.#onChange = onChange;
    this.#debounceMs = options.debounceMs ?? 500;
    this.#maxFolders = options.maxFolders ?? 2000;
    this.recursive = options.recursive ?? process.platform !== 'linux';
  }

  /** Watches exactly these folders from now on (the ones already watched stay watched). */
  watch(folders: readonly string[]): void {
    if (this.#closed) return;
    const wanted = new Set(folders.slice(0, this.#maxFolders));
    for (const [folder, watcher] of this.#watchers) {
      if (wanted.has(folder)) continue;
      watcher.close();
      this.#watchers.delete(folder);
    }
    for (const folder of wanted) {
      if (this.#watchers.has(folder)) continue;
      try {
        const watcher = watch(folder, { recursive: this.recursive, persistent: false }, (_event, name) =>
          this.#changed(name),
        );
        // A folder deleted or out of watches: it is looked at again after the next scan.
        watcher.on('error', () => {
          watcher.close();
          this.#watchers.delete(folder);
          this.#changed(null);
        });
        this.#watchers.set(folder, watcher);
      } catch {
        // Gone since the scan, or no watch left: the next scan tries again.
      }
    }
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const watcher of this.#watchers.values()) watcher.close();
    this.#watchers.clear();
  }

  #changed(name: string | Buffer | null): void {
    if (this.#closed) return;
    const file = name === null ? null : String(name).split(/[\\/]/).at(-1)!;
    if (file !== null && IN_PROGRESS.test(file)) return;
    clearTimeout(this.#timer);
    this.#timer = setTimeout(() => {
      if (!this.#closed) this.#onChange();
    }, this.#debounceMs);
  }
}
