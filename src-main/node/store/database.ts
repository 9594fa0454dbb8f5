/**
 * Opens Gufo's SQLite database: WAL, foreign keys, the schema brought up to date by migrations.
 *
 * Nothing is ever silently lost: a file that is not a database, or fails SQLite's quick check, is
 * renamed aside (`<name>.corrupt-<time>`, with its -wal/-shm) and a fresh database started, with a
 * notice for the user; a database from a newer Gufo, or one locked by another process, is left
 * untouched and opening fails with a message that says so.
 */
import { existsSync, readSync, openSync, closeSync, renameSync, statSync } from 'node:fs';
import Database from 'better-sqlite3';
import { MIGRATIONS, SCHEMA_VERSION, type Migration } from './schema';

export type Db = Database.Database;

export class StoreError extends Error {
  override readonly name = 'StoreError';
}

export interface OpenedStore {
  db: Db;
  /** What the user must be told (a corrupt file moved aside). */
  notices: string[];
}

/** How long a write waits for another connection's lock before failing. */
const BUSY_TIMEOUT_MS = 5000;

const SQLITE_HEADER = 'SQLite format 3\0';

export function openStore(path: string, migrations: readonly Migration[] = MIGRATIONS): OpenedStore {
  const notices: string[] = [];
  const latest = migrations.at(-1)?.version ?? 0;
  if (!hasSqliteHeader(path)) notices.push(moveAside(path, 'is not an SQLite database'));
  let db: Db;
  try {
    db = connect(path);
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') {
      db.close();
      notices.push(moveAside(path, `failed SQLite's integrity check (${String(check)})`));
      db = connect(path);
    }
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === 'SQLITE_NOTADB' || code === 'SQLITE_CORRUPT') {
      notices.push(moveAside(path, `could not be read (${(err as Error).message})`));
      db = connect(path);
    } else {
      throw explain(path, err);
    }
  }
  try {
    const version = db.pragma('user_version', { simple: true }) as number;
    if (version > latest) {
      throw new StoreError(
        `${path} was written by a newer Gufo (database version ${version}; this one knows up to ${latest}). ` +
          'Update Gufo, or move the file away to start a new database.',
      );
    }
    useWal(db);
    migrate(db, migrations, latest);
  } catch (err) {
    db.close();
    throw explain(path, err);
  }
  return { db, notices };
}

/** Applies every migration above the database's version, each in its own transaction. */
export function migrate(db: Db, migrations: readonly Migration[] = MIGRATIONS, target = SCHEMA_VERSION): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const migration of migrations) {
    if (migration.version <= current || migration.version > target) continue;
    // The pragma is a no-op inside a transaction: it is set around it.
    const foreignKeys = db.pragma('foreign_keys', { simple: true }) as number;
    if (migration.rebuildsTables) db.pragma('foreign_keys = OFF');
    try {
      db.transaction(() => {
        migration.up(db);
        if (migration.rebuildsTables) {
          const broken = db.pragma('foreign_key_check') as { table: string; rowid: number; parent: string }[];
          if (broken.length > 0) {
            const first = broken[0]!;
            throw new StoreError(
              `migration ${migration.version} left ${broken.length} broken references (${first.table} row ${first.rowid} → ${first.parent})`,
            );
          }
        }
        db.pragma(`user_version = ${migration.version}`);
      }).immediate();
    } finally {
      db.pragma(`foreign_keys = ${foreignKeys}`);
    }
  }
}

/** A connection; nothing written yet, so a database this version must not touch stays as it was. */
function connect(path: string): Db {
  const db = new Database(path, { timeout: BUSY_TIMEOUT_MS });
  db.pragma('foreign_keys = ON');
  return db;
}

function useWal(db: Db): void {
  db.pragma('journal_mode = WAL');
  // WAL + NORMAL: a committed transaction survives a crash or kill of the app (not power loss
  // before the next checkpoint), at a fraction of FULL's fsyncs; streamed tokens commit one by one.
  db.pragma('synchronous = NORMAL');
}

/** False for a file that exists, is not empty and does not start like an SQLite database. */
function hasSqliteHeader(path: string): boolean {
  if (!existsSync(path) || statSync(path).size === 0) return true;
  const fd = openSync(path, 'r');
  try {
    const header = Buffer.alloc(SQLITE_HEADER.length);
    const read = readSync(fd, header, 0, header.length, 0);
    return read === header.length && header.toString('latin1') === SQLITE_HEADER;
  } finally {
    closeSync(fd);
  }
}

/** Renames a bad database (and its WAL files) aside; answers the notice for the user. */
function moveAside(path: string, problem: string): string {
  const aside = `${path}.corrupt-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(path, aside);
  for (const suffix of ['-wal', '-shm']) {
    if (existsSync(path + suffix)) renameSync(path + suffix, aside + suffix);
  }
  return `${path} ${problem}; it was kept as ${aside} and a new database was started.`;
}

function explain(path: string, err: unknown): Error {
  if (err instanceof StoreError) return err;
  const code = (err as { code?: string }).code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new StoreError(
      `${path} is locked by another process (is another Gufo running?); try again once it has closed`,
    );
  }
  if (code === 'SQLITE_CANTOPEN' || code === 'SQLITE_READONLY' || code === 'SQLITE_PERM') {
    return new StoreError(`${path} cannot be opened for writing (${(err as Error).message})`);
  }
  return new StoreError(`${path}: ${(err as Error).message}`);
}
