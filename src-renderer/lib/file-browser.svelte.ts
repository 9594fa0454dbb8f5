/** The in-app file browser's state: the folder on show, the files chosen in it, where it was left. */
import type { DirEntry, DirListing, GufoApi } from '../../src-preload/api';
import { messageOf } from './format';

/** Where the last browser was left, so the next one opens there (the home folder at first). */
let lastPath: string | undefined;

export class FileBrowser {
  listing: DirListing | null = $state(null);
  /** The path field; follows the folder on show, and can be typed into. */
  typedPath = $state('');
  loading = $state(false);
  error: string | null = $state(null);
  /** Paths of the files chosen in this folder. */
  selected: string[] = $state([]);

  readonly folders: DirEntry[] = $derived(this.listing?.entries.filter((e) => e.kind === 'dir') ?? []);
  readonly files: DirEntry[] = $derived(this.listing?.entries.filter((e) => e.kind === 'file') ?? []);

  readonly #api: Pick<GufoApi, 'listDir'>;
  /** Counts listDir requests, so a slower earlier answer cannot replace a later one. */
  #requests = 0;

  constructor(api: Pick<GufoApi, 'listDir'>) {
    this.#api = api;
  }

  /** Shows where the last browser was left, else the home folder. */
  resume(): Promise<void> {
    return this.open(lastPath);
  }

  /**
   * Shows `path`; the home folder when undefined. Only the latest request's answer is shown, and
   * a path typed while a listing loads is kept rather than overwritten by it.
   */
  async open(path: string | undefined): Promise<void> {
    const request = ++this.#requests;
    const typedBefore = this.typedPath;
    this.loading = true;
    try {
      const listing = await this.#api.listDir(path);
      if (request !== this.#requests) return;
      this.listing = listing;
      if (this.typedPath === typedBefore) this.typedPath = listing.path;
      this.selected = [];
      this.error = null;
      lastPath = listing.path;
    } catch (err) {
      if (request === this.#requests) this.error = messageOf(err);
    } finally {
      if (request === this.#requests) this.loading = false;
    }
  }

  /** Opens the folder typed into the path field. */
  openTyped(): Promise<void> {
    return this.open(this.typedPath.trim() || undefined);
  }

  isSelected(path: string): boolean {
    return this.selected.includes(path);
  }

  toggle(path: string): void {
    this.selected = this.isSelected(path) ? this.selected.filter((p) => p !== path) : [...this.selected, path];
  }
}
