/** App settings: one row per key, values as JSON, defaults for what was never set. */
import type { Settings, Theme } from '../../../src-preload/api';
import type { Db } from './database';
import { parseJsonColumn } from './json-column';

export const DEFAULT_SETTINGS: Settings = {
  theme: 'system',
  modelDirs: [],
  defaultContext: 2048,
  exportDir: null,
};

const THEMES: readonly Theme[] = ['system', 'light', 'dark'];

/** Checks one field; answers the problem, or null when the value is fine. */
const VALIDATORS: { [K in keyof Settings]: (value: unknown) => string | null } = {
  theme: (v) => (THEMES.includes(v as Theme) ? null : `must be one of ${THEMES.join(', ')}`),
  modelDirs: (v) => (Array.isArray(v) && v.every((d) => typeof d === 'string' && d !== '') ? null : 'must be a list of folder paths'),
  defaultContext: (v) => (Number.isInteger(v) && (v as number) >= 16 && (v as number) <= 1 << 20 ? null : 'must be a whole number of tokens from 16 to 1048576'),
  exportDir: (v) => (v === null || (typeof v === 'string' && v !== '') ? null : 'must be a folder path or null'),
};

export class SettingsStore {
  constructor(private readonly db: Db) {}

  get(): Settings {
    const rows = this.db.prepare('SELECT key, value_json FROM settings').all() as { key: string; value_json: string }[];
    const settings: Settings = structuredClone(DEFAULT_SETTINGS);
    for (const row of rows) {
      if (!Object.hasOwn(VALIDATORS, row.key)) continue; // a setting from another version
      const key = row.key as keyof Settings;
      const value = parseJsonColumn<unknown>(row.value_json, { table: 'settings', id: row.key, column: 'value_json' });
      // A stored value that is no longer valid falls back to the default rather than breaking startup.
      if (VALIDATORS[key](value) === null) (settings as unknown as Record<string, unknown>)[key] = value;
    }
    return settings;
  }

  /** Saves the given fields after checking all of them; an invalid one is an error naming it. */
  update(patch: Partial<Settings>): Settings {
    const entries = Object.entries(patch);
    for (const [key, value] of entries) {
      if (!Object.hasOwn(VALIDATORS, key)) throw new Error(`unknown setting "${key}"`);
      const problem = VALIDATORS[key as keyof Settings](value);
      if (problem) throw new Error(`setting "${key}" ${problem}`);
    }
    const put = this.db.prepare('INSERT INTO settings (key, value_json) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json');
    this.db.transaction(() => {
      for (const [key, value] of entries) put.run(key, JSON.stringify(value));
    })();
    return this.get();
  }
}
