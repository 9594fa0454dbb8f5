/** appInfo, settings and the in-app file browser. */
import { accessSync, constants, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import type { AppApi, DirEntry, Settings } from '../../src-preload/api';
import type { BackendContext } from './context';
import { promised } from './promised';

export function createAppApi(ctx: BackendContext): AppApi {
  return promised<AppApi>({
    appInfo() {
      return {
        name: 'Gufo',
        version: ctx.version,
        mode: ctx.mode,
        platform: process.platform,
        node: process.versions.node,
        dataDir: ctx.dataDir,
        modelsDir: ctx.modelsDir,
        envModelDirs: [...ctx.envModelDirs],
        notices: [...ctx.notices],
      };
    },

    getSettings() {
      return ctx.settings.get();
    },

    updateSettings(patch) {
      const settings = ctx.settings.update(withCheckedFolders(patch, ctx.settings.get()));
      ctx.events.emit({ type: 'settings-changed', settings });
      return settings;
    },

    listDir(path) {
      const dir = resolve(path ?? homedir());
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (err) {
        throw new Error(`cannot list ${dir}: ${(err as Error).message}`);
      }
      const entries: DirEntry[] = [];
      for (const name of names) {
        const full = join(dir, name);
        try {
          const stat = statSync(full);
          // Hidden folders too: models live in ~/.ollama, ~/.cache/huggingface, ~/.lmstudio.
          if (stat.isDirectory()) entries.push({ name, path: full, kind: 'dir', bytes: null });
          else if (stat.isFile() && !name.startsWith('.') && name.toLowerCase().endsWith('.gguf'))
            entries.push({ name, path: full, kind: 'file', bytes: stat.size });
        } catch {
          // A dangling link or a file we may not read: not something the user can pick.
        }
      }
      // Folders, hidden folders, then files: each group by name.
      const group = (e: DirEntry) => (e.kind === 'file' ? 2 : e.name.startsWith('.') ? 1 : 0);
      entries.sort((a, b) => group(a) - group(b) || a.name.localeCompare(b.name));
      const parent = dirname(dir);
      return { path: dir, parent: parent === dir ? null : parent, entries };
    },

    pickPaths(kind) {
      return ctx.pickPaths ? ctx.pickPaths(kind) : null;
    },
  });
}

type FolderSetting = 'modelDirs' | 'exportDir';

/**
 * The patch with its folders resolved (model folders each once). A folder newly named must be an
 * existing one (the export folder, one Gufo may write to); folders already saved are kept even
 * while missing, since a drive may be unplugged for now. Other mistakes are left to the store's checks.
 */
function withCheckedFolders(patch: Partial<Settings>, current: Settings): Partial<Settings> {
  const checked = { ...patch };
  if (Array.isArray(patch.modelDirs)) {
    const saved = new Set(current.modelDirs);
    checked.modelDirs = [...new Set(patch.modelDirs.map((dir) => checkFolder('modelDirs', dir, saved)))];
  }
  if (typeof patch.exportDir === 'string') {
    checked.exportDir = checkFolder(
      'exportDir',
      patch.exportDir,
      new Set(current.exportDir === null ? [] : [current.exportDir]),
    );
  }
  return checked;
}

function checkFolder(key: FolderSetting, dir: string, saved: Set<string>): string {
  if (typeof dir !== 'string' || dir === '') return dir;
  if (!isAbsolute(dir)) throw new Error(`setting "${key}": ${dir} is not an absolute path`);
  const full = resolve(dir);
  if (saved.has(full)) return full;
  let isFolder: boolean;
  try {
    isFolder = statSync(full).isDirectory();
  } catch {
    throw new Error(`setting "${key}": ${full} does not exist`);
  }
  if (!isFolder) throw new Error(`setting "${key}": ${full} is not a folder`);
  if (key === 'exportDir') {
    try {
      accessSync(full, constants.W_OK);
    } catch {
      throw new Error(`setting "exportDir": ${full} is not writable`);
    }
  }
  return full;
}
