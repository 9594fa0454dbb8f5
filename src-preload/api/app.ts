/** The app itself: who is answering, settings, and the file system as the UI may browse it. */
import type { KvCacheTypes } from './kv-cache';

/** How the UI is being delivered: an Electron window, or a browser tab on `gufo serve`. */
export type AppMode = 'electron' | 'browser';

export interface AppInfo {
  name: 'Gufo';
  /** The version in package.json. */
  version: string;
  mode: AppMode;
  /** `process.platform` of the back end. */
  platform: string;
  /** Node.js version of the back end. */
  node: string;
  /** Where Gufo keeps its database and downloaded/exported models (GUFO_HOME or the OS user-data dir). */
  dataDir: string;
  /** The data dir's models/ folder: exports land there; always scanned. */
  modelsDir: string;
  /** Folders named by GUFO_MODELS_DIRS: scanned too, changed only through the environment. */
  envModelDirs: string[];
  /**
   * Things the user must know about from startup, e.g. a corrupt database that was moved aside
   * ("gufo.db was not a valid database; it was kept as gufo.db.corrupt-…, and a new one started").
   */
  notices: string[];
}

export type Theme = 'system' | 'light' | 'dark';

/** Context sizes (tokens) a setting or a chat may ask for; a model's own limit applies too. */
export const CONTEXT_TOKENS = { min: 16, max: 1 << 20 } as const;

/** The most a GPU memory budget setting may say, in GiB (beyond any machine's memory). */
export const GPU_MEMORY_BUDGET_MAX_GIB = 1 << 16;

export interface Settings {
  theme: Theme;
  /** Extra folders scanned for models (besides GUFO_MODELS_DIRS and the data dir's models/). */
  modelDirs: string[];
  /** Context size for new chats (tokens). */
  defaultContext: number;
  /** Where exports go by default (the data dir's models/ when null). */
  exportDir: string | null;
  /**
   * The GPU memory the export screen measures each type against, in GiB; null: automatic (the
   * machine's RAM for a software adapter, else none, since WebGPU reports no memory size).
   */
  gpuMemoryBudgetGiB: number | null;
  /** The KV cache types of chats that pick none; `gufo serve --cache-type-k/-v` overrides them. */
  kvCacheTypes: KvCacheTypes;
}

/** One entry of a folder, as the in-app file browser shows it (browser mode has no native picker). */
export interface DirEntry {
  name: string;
  path: string;
  kind: 'file' | 'dir';
  /** Bytes, for files. */
  bytes: number | null;
}

export interface DirListing {
  path: string;
  parent: string | null;
  entries: DirEntry[];
}

export interface AppApi {
  appInfo(): Promise<AppInfo>;
  getSettings(): Promise<Settings>;
  /**
   * Saves the given fields; answers the whole settings. Invalid values are an error naming the
   * field (folders must be absolute paths of existing folders; paths are stored resolved, each once).
   */
  updateSettings(patch: Partial<Settings>): Promise<Settings>;
  /** Folders and .gguf files in `path` (default: the user's home), for the in-app file browser. */
  listDir(path?: string): Promise<DirListing>;
  /**
   * The native "open" dialog where there is one (Electron): chosen paths, [] when cancelled;
   * null in browser mode, where the UI shows its own file browser (listDir) instead.
   */
  pickPaths(kind: 'files' | 'folder'): Promise<string[] | null>;
}

export const APP_METHODS = [
  'appInfo',
  'getSettings',
  'updateSettings',
  'listDir',
  'pickPaths',
] as const satisfies readonly (keyof AppApi)[];
