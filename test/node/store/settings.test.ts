import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore, type Db } from '../../../src-main/node/store/database';
import { CorruptRowError } from '../../../src-main/node/store/json-column';
import { DEFAULT_SETTINGS, SettingsStore } from '../../../src-main/node/store/settings';
import { tempDir } from '../../support/temp';

function store(): { db: Db; settings: SettingsStore; path: string } {
  const path = join(tempDir(), 'gufo.db');
  const { db } = openStore(path);
  return { db, settings: new SettingsStore(db), path };
}

const putRaw = (db: Db, key: string, json: string) =>
  db.prepare('INSERT INTO settings (key, value_json) VALUES (?, ?)').run(key, json);

describe('SettingsStore', () => {
  it('answers the defaults for what was never set, as a copy', () => {
    const { db, settings } = store();
    const first = settings.get();
    expect(first).toEqual(DEFAULT_SETTINGS);
    first.modelDirs.push('/elsewhere');
    expect(settings.get().modelDirs).toEqual([]);
    expect(DEFAULT_SETTINGS.modelDirs).toEqual([]);
    db.close();
  });

  it('saves fields in the SQLite file, keeping the others', () => {
    const { db, settings, path } = store();
    expect(settings.update({ theme: 'dark', defaultContext: 4096 })).toEqual({
      ...DEFAULT_SETTINGS,
      theme: 'dark',
      defaultContext: 4096,
    });
    settings.update({ exportDir: '/exports' });
    db.close();
    const reopened = openStore(path).db;
    expect(new SettingsStore(reopened).get()).toEqual({
      ...DEFAULT_SETTINGS,
      theme: 'dark',
      defaultContext: 4096,
      exportDir: '/exports',
    });
    reopened.close();
  });

  it.each([
    [{ theme: 'blue' }, /setting "theme" must be one of system, light, dark/],
    [{ defaultContext: 15 }, /setting "defaultContext" must be a whole number of tokens from 16 to 1048576/],
    [{ defaultContext: 2048.5 }, /"defaultContext"/],
    [{ defaultContext: null }, /"defaultContext"/],
    [{ modelDirs: '/models' }, /setting "modelDirs" must be a list of folder paths/],
    [{ modelDirs: ['/ok', ''] }, /"modelDirs"/],
    [{ exportDir: '' }, /setting "exportDir" must be a folder path or null/],
    [
      { gpuMemoryBudgetGiB: 0 },
      /setting "gpuMemoryBudgetGiB" must be a number of GiB above 0 and at most 65536, or null \(automatic\)/,
    ],
    [{ gpuMemoryBudgetGiB: -8 }, /"gpuMemoryBudgetGiB"/],
    [{ gpuMemoryBudgetGiB: '8' }, /"gpuMemoryBudgetGiB"/],
    [{ gpuMemoryBudgetGiB: Number.NaN }, /"gpuMemoryBudgetGiB"/],
    [{ gpuMemoryBudgetGiB: 65537 }, /"gpuMemoryBudgetGiB"/],
    [{ colour: 'red' }, /unknown setting "colour"/],
  ])('refuses %j, naming the field', (patch, message) => {
    const { db, settings } = store();
    expect(() => settings.update(patch as never)).toThrow(message);
    expect(settings.get()).toEqual(DEFAULT_SETTINGS);
    db.close();
  });

  it('keeps a GPU memory budget in GiB, fractions too, and null for automatic', () => {
    const { db, settings } = store();
    expect(settings.get().gpuMemoryBudgetGiB).toBeNull();
    expect(settings.update({ gpuMemoryBudgetGiB: 7.5 }).gpuMemoryBudgetGiB).toBe(7.5);
    expect(settings.update({ gpuMemoryBudgetGiB: null }).gpuMemoryBudgetGiB).toBeNull();
    db.close();
  });

  it('checks every field before saving any', () => {
    const { db, settings } = store();
    expect(() => settings.update({ theme: 'dark', defaultContext: 0 })).toThrow(/defaultContext/);
    expect(settings.get().theme).toBe('system');
    db.close();
  });

  it('falls back to the default for a stored value no longer valid, and ignores unknown keys', () => {
    const { db, settings } = store();
    putRaw(db, 'theme', '"sepia"');
    putRaw(db, 'defaultContext', '8192');
    putRaw(db, 'fromAnotherVersion', '{"x":1}');
    expect(settings.get()).toEqual({ ...DEFAULT_SETTINGS, defaultContext: 8192 });
    db.close();
  });

  it('keeps an API key an earlier version saved, shorter than new keys may be, rather than serving without one', () => {
    const { db, settings } = store();
    putRaw(db, 'openAiServer.apiKey', JSON.stringify('sk-short'));
    expect(settings.openAiServer.get().apiKey).toBe('sk-short');
    expect(() => settings.openAiServer.update({ apiKey: 'sk-short' })).toThrow(
      /"openAiServer.apiKey" must be null \(no key\) or 16 to 256/,
    );
    putRaw(db, 'openAiServer.port', JSON.stringify(-1));
    expect(settings.openAiServer.get().port).toBe(7824);
    db.close();
  });

  it('reports a row that is not JSON, naming it', () => {
    const { db, settings } = store();
    putRaw(db, 'theme', '{not json');
    expect(() => settings.get()).toThrow(CorruptRowError);
    expect(() => settings.get()).toThrow(/settings theme has unreadable value_json/);
    db.close();
  });
});
