/**
 * The library screen's state: the models (kept live from 'library-changed' events), the folders
 * scanned, sorting and filtering, and adding and removing models.
 */
import type { AddModelsResult, GufoBridge, LibraryFolder, ModelEntry } from '../../src-preload/api';
import { droppedPaths } from './dropped-paths';
import { messageOf } from './format';
import { architecturesOf, filterModels, nextSort, sortModels, type SortKey, type SortOrder } from './library-view';

/** Events come in bursts (one per hashed file, one per window that lists): reload once per burst. */
const RELOAD_AFTER_MS = 150;

const NO_DROP_PATHS =
  'The browser did not reveal where the dropped files are, so Gufo cannot add them. Use “Add files…” or “Add folder…” instead.';

export class LibraryStore {
  models: ModelEntry[] = $state([]);
  folders: LibraryFolder[] = $state([]);
  /** False until the first list has answered (the empty state waits for it). */
  loaded = $state(false);
  /** What is being done now ("Scanning folders…"), null when idle. */
  busy: string | null = $state(null);
  /** Why the library could not be listed. */
  loadError: string | null = $state(null);
  /** Why the last add, pick or drop failed (cleared by the next one). */
  actionError: string | null = $state(null);
  lastAdd: AddModelsResult | null = $state(null);
  /** The in-app file browser, open for files or a folder (browser mode has no native dialog). */
  browsing: 'files' | 'folder' | null = $state(null);
  query = $state('');
  /** '' for every architecture. */
  architecture = $state('');
  sort: SortOrder = $state({ key: 'name', direction: 'ascending' });

  readonly architectures = $derived(architecturesOf(this.models));
  readonly visible = $derived(sortModels(filterModels(this.models, this.query, this.architecture), this.sort));

  readonly #gufo: GufoBridge;
  #reloadTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(gufo: GufoBridge) {
    this.#gufo = gufo;
  }

  /** Loads the library and follows its changes; answers the function that stops following. */
  connect(): () => void {
    const stop = this.#gufo.onEvent((event) => {
      if (event.type === 'library-changed' || event.type === 'settings-changed') this.#scheduleReload();
    });
    void this.refresh();
    return () => {
      stop();
      clearTimeout(this.#reloadTimer);
    };
  }

  async refresh(): Promise<void> {
    try {
      const [models, folders] = await Promise.all([this.#gufo.listModels(), this.#gufo.libraryFolders()]);
      this.models = models;
      this.folders = folders;
      this.loadError = null;
    } catch (err) {
      this.loadError = messageOf(err);
    } finally {
      this.loaded = true;
    }
  }

  async rescan(): Promise<void> {
    this.busy = 'Scanning folders…';
    try {
      this.models = await this.#gufo.rescanLibrary();
      this.folders = await this.#gufo.libraryFolders();
      this.loadError = null;
    } catch (err) {
      this.loadError = messageOf(err);
    } finally {
      this.busy = null;
    }
  }

  sortBy(key: SortKey): void {
    this.sort = nextSort(this.sort, key);
  }

  /** The native dialog where there is one; otherwise the in-app file browser. */
  async pick(kind: 'files' | 'folder'): Promise<void> {
    this.actionError = null;
    let paths: string[] | null;
    try {
      paths = await this.#gufo.pickPaths(kind);
    } catch (err) {
      this.actionError = messageOf(err);
      return;
    }
    if (paths === null) this.browsing = kind;
    else if (paths.length > 0) await this.add(paths);
  }

  async add(paths: string[]): Promise<void> {
    this.browsing = null;
    this.actionError = null;
    this.lastAdd = null;
    this.busy = paths.length === 1 ? `Adding ${paths[0]}…` : `Adding ${paths.length} items…`;
    try {
      this.lastAdd = await this.#gufo.addModels(paths);
    } catch (err) {
      this.actionError = messageOf(err);
    } finally {
      this.busy = null;
    }
    await this.refresh();
  }

  async drop(data: DataTransfer): Promise<void> {
    const paths = droppedPaths(data, this.#gufo.pathForFile);
    if (paths.length > 0) await this.add(paths);
    else this.actionError = NO_DROP_PATHS;
  }

  /** Throws what went wrong, for the confirm dialog to show; the list reloads either way. */
  async remove(model: ModelEntry, deleteFile: boolean): Promise<void> {
    try {
      await this.#gufo.removeModel(model.id, { deleteFile });
    } finally {
      await this.refresh();
    }
  }

  #scheduleReload(): void {
    clearTimeout(this.#reloadTimer);
    this.#reloadTimer = setTimeout(() => void this.refresh(), RELOAD_AFTER_MS);
  }
}
