/** appInfo, settings and the in-app file browser. */
import { readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { AppApi, DirEntry } from '../../src-preload/api';
import type { BackendContext } from './context';

export function createAppApi(ctx: BackendContext): AppApi {
  return {
    async appInfo() {
      return {
        name: 'Gufo',
        version: ctx.version,
        mode: ctx.mode,
        platform: process.platform,
        node: process.versions.node,
        dataDir: ctx.dataDir,
        notices: [...ctx.notices],
      };
    },

    async getSettings() {
      return ctx.settings.get();
    },

    async updateSettings(patch) {
      const settings = ctx.settings.update(patch);
      ctx.events.emit({ type: 'settings-changed', settings });
      return settings;
    },

    async listDir(path) {
      const dir = resolve(path ?? homedir());
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch (err) {
        throw new Error(`cannot list ${dir}: ${(err as Error).message}`);
      }
      const entries: DirEntry[] = [];
      for (const name of names) {
        if (name.startsWith('.')) continue;
        const full = join(dir, name);
        try {
          const stat = statSync(full);
          if (stat.isDirectory()) entries.push({ name, path: full, kind: 'dir', bytes: null });
          else if (stat.isFile() && name.toLowerCase().endsWith('.gguf')) entries.push({ name, path: full, kind: 'file', bytes: stat.size });
        } catch {
          // A dangling link or a file we may not read: not something the user can pick.
        }
      }
      entries.sort((a, b) => (a.kind === b.kind ? a.name.localeCompare(b.name) : a.kind === 'dir' ? -1 : 1));
      const parent = dirname(dir);
      return { path: dir, parent: parent === dir ? null : parent, entries };
    },

    async pickPaths(kind) {
      return ctx.pickPaths ? ctx.pickPaths(kind) : null;
    },
  };
}
