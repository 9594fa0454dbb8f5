/**
 * The back end of GufoApi: one implementation, bound to the UI by Electron IPC (src-main/app) and
 * by HTTP + SSE in browser mode (src-main/node/server), and used directly by tests.
 *
 * Layer: may import core, node and the engine host (never the engine's GPU code, which runs in
 * its own process).
 */
import type { KvCacheTypes } from '../../src-preload/api/kv-cache';
import { mkdirSync } from 'node:fs';
import type { AppMode, GufoApi } from '../../src-preload/api';
import type { EngineLauncher } from '../engine-wire/host';
import { dataDir as defaultDataDir, databasePath, envModelDirs, modelsDir } from '../node/data-dir';
import { lockDataDir } from '../node/data-dir-lock';
import { openStore } from '../node/store/database';
import { ModelStore } from '../node/store/models';
import { SettingsStore } from '../node/store/settings';
// Named import: bundles only the version, not the whole package.json.
import { version } from '../../package.json';
import { createAppApi } from './app-api';
import { createBenchApi } from './bench';
import { createChatApi } from './chat';
import { createDownloadsApi } from './downloads';
import type { BackendContext } from './context';
import { EnginePool } from './engine-pool';
import { createEnginesApi } from './engines-api';
import { EventHub } from './events';
import { createExportApi } from './export';
import { createInspectorApi } from './inspector';
import { JobManager } from './jobs';
import { createJobsApi } from './jobs-api';
import { createLibraryApi } from './library';
import { createMcpApi, openMcpServers } from './mcp';
import { createOllamaApi } from './ollama';
import { createQualityLevelsApi } from './quality/levels';
import { createServerApi } from './server-api';

export interface BackendOptions {
  mode: AppMode;
  /** Default: GUFO_HOME, else the OS user-data folder. */
  dataDir?: string;
  env?: NodeJS.ProcessEnv;
  /** How engine processes start (default: child_process.fork). */
  engineLauncher?: EngineLauncher;
  /** Engine processes at most (default 1). */
  engineCap?: number;
  /** KV cache types of loads that name none (`gufo serve --cache-type-k/-v`; default: the app setting). */
  kvTypes?: KvCacheTypes;
  /** Sequences each loaded model keeps, each with its KV cache (`gufo serve --parallel`; default 1). */
  parallel?: number;
  pickPaths?: (kind: 'files' | 'folder') => Promise<string[]>;
  /** At most one progress event per job in this many ms (default 100; tests use 0 to see every report). */
  progressEveryMs?: number;
  /** How long an MCP server may take to start, and one tool call to run (defaults in node/mcp/). */
  mcpTimeouts?: { startTimeoutMs?: number; callTimeoutMs?: number };
}

export interface Backend {
  api: GufoApi;
  events: EventHub;
  context: BackendContext;
  /** Cancels jobs, stops engines, closes the database. */
  close(): Promise<void>;
}

export function createBackend(options: BackendOptions): Backend {
  const env = options.env ?? process.env;
  const dir = options.dataDir ?? defaultDataDir(env);
  mkdirSync(modelsDir(dir), { recursive: true });
  const { db, notices } = openStore(databasePath(dir));
  const lock = lockDataDir(dir);
  const events = new EventHub();
  const settings = new SettingsStore(db);
  const closers: (() => void | Promise<void>)[] = [];
  const context: BackendContext = {
    mode: options.mode,
    version,
    dataDir: dir,
    modelsDir: modelsDir(dir),
    envModelDirs: envModelDirs(env),
    env,
    db,
    models: new ModelStore(db),
    settings,
    events,
    jobs: new JobManager(events, options.progressEveryMs),
    engines: new EnginePool({
      launcher: options.engineLauncher,
      cap: options.engineCap,
      kvTypes: () => options.kvTypes ?? settings.get().kvCacheTypes,
      slots: options.parallel,
    }),
    ...openMcpServers(db, events, options.mcpTimeouts),
    owner: lock.owner,
    notices,
    pickPaths: options.pickPaths,
    onClose: (closer) => closers.push(closer),
  };
  const api: GufoApi = {
    ...createAppApi(context),
    ...createLibraryApi(context),
    ...createInspectorApi(context),
    ...createChatApi(context),
    ...createBenchApi(context),
    ...createExportApi(context),
    ...createQualityLevelsApi(context),
    ...createJobsApi(context),
    ...createDownloadsApi(context),
    ...createOllamaApi(context),
    ...createEnginesApi(context),
    ...createMcpApi(context),
    ...createServerApi(context, {
      listModels: () => api.listModels(),
      removeModel: (id, options) => api.removeModel(id, options),
      startDownload: (request) => api.startDownload(request),
      listDownloads: () => api.listDownloads(),
    }),
  };
  let closing: Promise<void> | undefined;
  return {
    api,
    events,
    context,
    close: () =>
      (closing ??= (async () => {
        await context.jobs.close();
        for (const closer of closers.reverse()) await closer();
        await context.engines.close();
        db.close();
        lock.release();
      })()),
  };
}
