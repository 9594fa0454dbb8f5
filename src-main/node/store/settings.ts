/** App settings: one row per key, values as JSON, defaults for what was never set. */
import { isIP } from 'node:net';
import {
  API_KEY_CHARS,
  CONTEXT_TOKENS,
  DEFAULT_KV_CACHE_TYPES,
  GPU_MEMORY_BUDGET_MAX_GIB,
  isKvCacheType,
  KV_CACHE_TYPES,
  type OpenAiServerSettings,
  type Settings,
  type Theme,
} from '../../../src-preload/api';
import { originPatternProblem } from '../server/guard';
import type { Db } from './database';
import { parseJsonColumn } from './json-column';

export const DEFAULT_SETTINGS: Settings = {
  theme: 'system',
  modelDirs: [],
  defaultContext: 2048,
  exportDir: null,
  gpuMemoryBudgetGiB: null,
  kvCacheTypes: DEFAULT_KV_CACHE_TYPES,
};

export const DEFAULT_OPENAI_SERVER_SETTINGS: OpenAiServerSettings = {
  enabled: false,
  host: '127.0.0.1',
  port: 7824,
  apiKey: null,
  contextSize: 4096,
  origins: [],
};

const THEMES: readonly Theme[] = ['system', 'light', 'dark'];

/** Checks one field of each setting; answers the problem, or null when the value is fine. */
type Validators<T> = { [K in keyof T]: (value: unknown) => string | null };

const contextTokens = (v: unknown) =>
  Number.isInteger(v) && (v as number) >= CONTEXT_TOKENS.min && (v as number) <= CONTEXT_TOKENS.max
    ? null
    : `must be a whole number of tokens from ${CONTEXT_TOKENS.min} to ${CONTEXT_TOKENS.max}`;

const VALIDATORS: Validators<Settings> = {
  theme: (v) => (THEMES.includes(v as Theme) ? null : `must be one of ${THEMES.join(', ')}`),
  modelDirs: (v) =>
    Array.isArray(v) && v.every((d) => typeof d === 'string' && d !== '') ? null : 'must be a list of folder paths',
  defaultContext: contextTokens,
  exportDir: (v) => (v === null || (typeof v === 'string' && v !== '') ? null : 'must be a folder path or null'),
  gpuMemoryBudgetGiB: (v) =>
    v === null || (typeof v === 'number' && v > 0 && v <= GPU_MEMORY_BUDGET_MAX_GIB)
      ? null
      : `must be a number of GiB above 0 and at most ${GPU_MEMORY_BUDGET_MAX_GIB}, or null (automatic)`,
  kvCacheTypes: (v) => {
    const types = v as Partial<Record<'k' | 'v', unknown>> | null;
    return typeof types === 'object' && types !== null && isKvCacheType(types.k) && isKvCacheType(types.v)
      ? null
      : `must be { k, v }, each one of ${KV_CACHE_TYPES.join(', ')}`;
  },
};

const OPENAI_SERVER_VALIDATORS: Validators<OpenAiServerSettings> = {
  enabled: (v) => (typeof v === 'boolean' ? null : 'must be true or false'),
  host: (v) =>
    v === 'localhost' || (typeof v === 'string' && isIP(v) !== 0)
      ? null
      : 'must be an IP address (such as 127.0.0.1) or "localhost"',
  port: (v) =>
    Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535
      ? null
      : 'must be a whole number from 0 (any free port) to 65535',
  // It travels in an HTTP header: printable ASCII without spaces.
  apiKey: (v) =>
    v === null ||
    (typeof v === 'string' &&
      /^[\x21-\x7e]*$/.test(v) &&
      v.length >= API_KEY_CHARS.min &&
      v.length <= API_KEY_CHARS.max)
      ? null
      : `must be null (no key) or ${API_KEY_CHARS.min} to ${API_KEY_CHARS.max} printable characters without spaces`,
  contextSize: contextTokens,
  origins: (v) => {
    const problem = Array.isArray(v) ? v.map(originPatternProblem).find((p) => p !== null) : 'it is not a list';
    return problem ? `must be a list of origins: ${problem}` : null;
  },
};

/**
 * Stored values an earlier version accepted and that stay in force until changed: a shorter key
 * falling back to the default (no key) would open the server to anyone who reaches it.
 */
const OPENAI_SERVER_STORED: Partial<Validators<OpenAiServerSettings>> = {
  apiKey: (v) => (typeof v === 'string' && /^[\x21-\x7e]{1,256}$/.test(v) ? null : OPENAI_SERVER_VALIDATORS.apiKey(v)),
};

/** What is wrong with `value` for an OpenAI-server setting, or null (for command-line options that set the same things). */
export function openAiServerSettingProblem<K extends keyof OpenAiServerSettings>(
  field: K,
  value: unknown,
): string | null {
  return OPENAI_SERVER_VALIDATORS[field](value);
}

/** A group of settings stored one row per field, keyed `<prefix><field>`. */
export class SettingsGroup<T extends object> {
  constructor(
    private readonly db: Db,
    private readonly prefix: string,
    private readonly defaults: T,
    private readonly validators: Validators<T>,
    /** Looser checks for values already stored, where an earlier version allowed more. */
    private readonly stored: Partial<Validators<T>> = {},
  ) {}

  get(): T {
    const rows = this.db.prepare('SELECT key, value_json FROM settings').all() as { key: string; value_json: string }[];
    const settings = structuredClone(this.defaults);
    for (const row of rows) {
      if (!row.key.startsWith(this.prefix)) continue;
      const field = row.key.slice(this.prefix.length);
      if (!Object.hasOwn(this.validators, field)) continue; // a setting from another version, or another group
      const value = parseJsonColumn<unknown>(row.value_json, { table: 'settings', id: row.key, column: 'value_json' });
      // A stored value that is no longer valid falls back to the default rather than breaking startup.
      const valid = this.stored[field as keyof T] ?? this.validators[field as keyof T];
      if (valid(value) === null) (settings as Record<string, unknown>)[field] = value;
    }
    return settings;
  }

  /** Throws an error naming the first field of `patch` that is unknown or invalid. */
  check(patch: Partial<T>): void {
    for (const [field, value] of Object.entries(patch)) {
      if (!Object.hasOwn(this.validators, field)) throw new Error(`unknown setting "${this.prefix}${field}"`);
      const problem = this.validators[field as keyof T](value);
      if (problem) throw new Error(`setting "${this.prefix}${field}" ${problem}`);
    }
  }

  /** Saves the given fields after checking all of them; an invalid one is an error naming it. */
  update(patch: Partial<T>): T {
    this.check(patch);
    const entries = Object.entries(patch);
    const put = this.db.prepare(
      'INSERT INTO settings (key, value_json) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value_json = excluded.value_json',
    );
    this.db.transaction(() => {
      for (const [field, value] of entries) put.run(this.prefix + field, JSON.stringify(value));
    })();
    return this.get();
  }
}

export class SettingsStore {
  readonly #app: SettingsGroup<Settings>;
  /** The OpenAI-compatible server's listener (keys "openAiServer.<field>"). */
  readonly openAiServer: SettingsGroup<OpenAiServerSettings>;

  constructor(db: Db) {
    this.#app = new SettingsGroup(db, '', DEFAULT_SETTINGS, VALIDATORS);
    this.openAiServer = new SettingsGroup(
      db,
      'openAiServer.',
      DEFAULT_OPENAI_SERVER_SETTINGS,
      OPENAI_SERVER_VALIDATORS,
      OPENAI_SERVER_STORED,
    );
  }

  get(): Settings {
    return this.#app.get();
  }

  /** Saves the given fields after checking all of them; an invalid one is an error naming it. */
  update(patch: Partial<Settings>): Settings {
    return this.#app.update(patch);
  }
}
