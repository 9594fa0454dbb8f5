import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openStore, StoreError } from '../../../src-main/node/store/database';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src-main/node/store/schema';
import { tempDir } from '../../support/temp';

const tables = (db: Database.Database) =>
  (
    db.prepare("SELECT name FROM sqlite_master WHERE type IN ('table', 'trigger') ORDER BY name").all() as {
      name: string;
    }[]
  ).map((r) => r.name);

describe('openStore', () => {
  it('creates a database at the latest version, in WAL mode, with foreign keys on', () => {
    const path = join(tempDir(), 'gufo.db');
    const { db, notices } = openStore(path);
    expect(notices).toEqual([]);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    expect(tables(db)).toEqual(
      expect.arrayContaining(['models', 'chats', 'messages', 'messages_fts', 'settings', 'bench_runs', 'exports']),
    );
    db.close();
  });

  // Each earlier version, made by applying the migrations up to it, then opened by this version.
  it.each(Array.from({ length: SCHEMA_VERSION }, (_, v) => v))(
    'upgrades a database from version %i, keeping its rows',
    (from) => {
      const path = join(tempDir(), 'gufo.db');
      const old = new Database(path);
      migrate(old, MIGRATIONS, from);
      expect(old.pragma('user_version', { simple: true })).toBe(from);
      if (from >= 1) old.prepare("INSERT INTO settings (key, value_json) VALUES ('theme', '\"dark\"')").run();
      old.close();

      const { db } = openStore(path);
      expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
      const fresh = openStore(join(tempDir(), 'fresh.db')).db;
      expect(tables(db)).toEqual(tables(fresh));
      if (from >= 1)
        expect(db.prepare("SELECT value_json FROM settings WHERE key = 'theme'").pluck().get()).toBe('"dark"');
      db.close();
      fresh.close();
    },
  );

  it('moves a file that is not a database aside, keeps it byte for byte, and says so', () => {
    const dir = tempDir();
    const path = join(dir, 'gufo.db');
    writeFileSync(path, 'these are not the bytes of a database');
    const { db, notices } = openStore(path);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toContain(path);
    expect(notices[0]).toContain('is not an SQLite database');
    const aside = readdirSync(dir).find((f) => f.startsWith('gufo.db.corrupt-'))!;
    expect(notices[0]).toContain(aside);
    expect(readFileSync(join(dir, aside), 'utf8')).toBe('these are not the bytes of a database');
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });

  it('moves a database with damaged pages aside', () => {
    const dir = tempDir();
    const path = join(dir, 'gufo.db');
    const { db } = openStore(path);
    const insert = db.prepare('INSERT INTO settings (key, value_json) VALUES (?, ?)');
    for (let i = 0; i < 2000; i++) insert.run(`k${i}`, JSON.stringify('x'.repeat(100)));
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    // Scribble over the middle of the file, past the header page.
    const bytes = readFileSync(path);
    bytes.fill(0xa5, 4096 * 3, 4096 * 8);
    writeFileSync(path, bytes);

    const reopened = openStore(path);
    expect(reopened.notices).toHaveLength(1);
    expect(reopened.notices[0]).toMatch(/integrity check|could not be read/);
    expect(readdirSync(dir).some((f) => f.startsWith('gufo.db.corrupt-'))).toBe(true);
    expect(reopened.db.prepare('SELECT count(*) FROM settings').pluck().get()).toBe(0);
    reopened.db.close();
  });

  it('refuses a database from a newer Gufo and leaves it untouched', () => {
    const path = join(tempDir(), 'gufo.db');
    const newer = new Database(path);
    newer.pragma(`user_version = ${SCHEMA_VERSION + 1}`);
    newer.close();
    const before = readFileSync(path);
    expect(() => openStore(path)).toThrow(StoreError);
    expect(() => openStore(path)).toThrow(/written by a newer Gufo \(database version \d+; this one knows up to \d+\)/);
    expect(readFileSync(path)).toEqual(before);
  });

  it('says the database is locked when another process holds it, without losing it', () => {
    const path = join(tempDir(), 'gufo.db');
    openStore(path).db.close();
    // Another connection holding an exclusive lock, as a second Gufo in the middle of a write.
    const other = new Database(path);
    other.pragma('locking_mode = EXCLUSIVE');
    other.exec('BEGIN EXCLUSIVE');
    try {
      const start = Date.now();
      expect(() => openStore(path, MIGRATIONS)).toThrow(/is locked by another process/);
      expect(Date.now() - start).toBeGreaterThanOrEqual(4000); // it waited for the lock first
    } finally {
      other.exec('COMMIT');
      other.close();
    }
    expect(existsSync(path)).toBe(true);
    expect(readdirSync(join(path, '..')).some((f) => f.includes('corrupt'))).toBe(false);
    const { db } = openStore(path);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    db.close();
  });
});

describe('messages full-text index', () => {
  it('indexes a message once it stops streaming, and follows edits and deletes', () => {
    const { db } = openStore(join(tempDir(), 'gufo.db'));
    db.prepare(
      "INSERT INTO chats (id, title, model_name, model_path, sampling_json, context_size) VALUES (1, 't', 'm', '/m', '{}', 512)",
    ).run();
    const search = (word: string) =>
      db.prepare('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?').pluck().all(word);
    db.prepare(
      "INSERT INTO messages (id, chat_id, role, content, status) VALUES (1, 1, 'assistant', '', 'streaming')",
    ).run();
    db.prepare("UPDATE messages SET content = content || 'giraffe ' WHERE id = 1").run();
    expect(search('giraffe')).toEqual([]);
    db.prepare("UPDATE messages SET content = content || 'zebra', status = 'done' WHERE id = 1").run();
    expect(search('giraffe')).toEqual([1]);
    db.prepare("UPDATE messages SET content = 'okapi' WHERE id = 1").run();
    expect(search('giraffe')).toEqual([]);
    expect(search('okapi')).toEqual([1]);
    db.prepare('DELETE FROM chats WHERE id = 1').run();
    expect(search('okapi')).toEqual([]);
    expect(db.prepare("INSERT INTO messages_fts(messages_fts) VALUES ('integrity-check')").run()).toBeTruthy();
    db.close();
  });
});
