/**
 * Everything the back end's features share: the data folder, the database and its stores, events,
 * jobs and the engine processes. Made once per app (Electron) or server (`gufo serve`) by
 * createBackend; each feature's API is built over it.
 */
import type { AppMode, ModelEntry } from '../../src-preload/api';
import type { McpServerSet } from '../node/mcp/server-set';
import type { Db } from '../node/store/database';
import type { McpServerStore } from '../node/store/mcp-servers';
import { ModelStore } from '../node/store/models';
import type { SettingsStore } from '../node/store/settings';
import type { EnginePool } from './engine-pool';
import type { EventHub } from './events';
import type { JobManager } from './jobs';

export interface BackendContext {
  mode: AppMode;
  /** package.json's version. */
  version: string;
  dataDir: string;
  /** `<dataDir>/models`: exports and downloads go here; always scanned. */
  modelsDir: string;
  /** Extra folders from GUFO_MODELS_DIRS (settings add their own). */
  envModelDirs: string[];
  /** The environment the back end runs in: where other apps keep models, HF_ENDPOINT, OLLAMA_HOST. */
  env: NodeJS.ProcessEnv;
  db: Db;
  models: ModelStore;
  settings: SettingsStore;
  events: EventHub;
  jobs: JobManager;
  engines: EnginePool;
  /** The MCP servers the user added (Settings › Tools), and their running processes and sessions. */
  mcpServers: McpServerStore;
  mcp: McpServerSet;
  /**
   * Whether this back end owns the data folder (see node/data-dir-lock.ts): only the owner treats
   * leftovers as a crash's and starts listeners; a second one (a CLI command while the app runs)
   * leaves them to it.
   */
  owner: boolean;
  /** Startup notices for the user (a corrupt database moved aside). */
  notices: string[];
  /** The native open dialog (Electron); absent in browser mode. */
  pickPaths?: (kind: 'files' | 'folder') => Promise<string[]>;
  /** Registers work to do when the back end closes (stop background work, flush state). */
  onClose(closer: () => void | Promise<void>): void;
}

/** The library entry with this id, or an error saying it is not there. */
export function requireModel(ctx: BackendContext, id: number): ModelEntry {
  const model = ctx.models.get(id);
  if (!model) throw new Error(`no model with id ${id} in the library (it may have been removed)`);
  return model;
}

/** Like requireModel, for work that reads the file: also fails when the library knows it is unreadable. */
export function requireReadableModel(ctx: BackendContext, id: number): ModelEntry {
  const model = requireModel(ctx, id);
  if (model.error) throw new Error(model.error);
  return model;
}
