/** The models table: one row per GGUF file in the library. */
import type { ModelEntry, ModelSource, TypeShareView } from '../../../src-preload/api';
import type { Db } from './database';
import { parseJsonColumn } from './json-column';

/** What the library remembers of a file's metadata (models.summary_json). */
export interface StoredSummary {
  name: string | null;
  architecture: string | null;
  parameters: number;
  fileType: string | null;
  typeMix: TypeShareView[];
  contextLength: number | null;
}

export interface ModelRow {
  id: number;
  path: string;
  name: string;
  source: ModelSource;
  bytes: number;
  mtime_ms: number;
  sha256: string | null;
  summary_json: string | null;
  error: string | null;
  added_at: string;
}

export interface ModelFileRecord {
  path: string;
  name: string;
  source: ModelSource;
  bytes: number;
  mtimeMs: number;
  summary: StoredSummary | null;
  error: string | null;
}

export class ModelStore {
  constructor(private readonly db: Db) {}

  list(): ModelEntry[] {
    const rows = this.db.prepare('SELECT * FROM models ORDER BY name COLLATE NOCASE, id').all() as ModelRow[];
    return rows.map(toEntry);
  }

  get(id: number): ModelEntry | undefined {
    const row = this.db.prepare('SELECT * FROM models WHERE id = ?').get(id) as ModelRow | undefined;
    return row && toEntry(row);
  }

  byPath(path: string): ModelEntry | undefined {
    const row = this.db.prepare('SELECT * FROM models WHERE path = ?').get(path) as ModelRow | undefined;
    return row && toEntry(row);
  }

  /**
   * Inserts the file, or refreshes its row (size, mtime, summary). A changed file loses its stale
   * hash; its source only changes from 'folder' (a file later added by hand stays 'added').
   */
  upsert(record: ModelFileRecord): ModelEntry {
    const summary = record.summary === null ? null : JSON.stringify(record.summary);
    this.db
      .prepare(
        `INSERT INTO models (path, name, source, bytes, mtime_ms, summary_json, error)
         VALUES (@path, @name, @source, @bytes, @mtimeMs, @summary, @error)
         ON CONFLICT(path) DO UPDATE SET
           name = excluded.name,
           source = CASE WHEN models.source = 'folder' THEN excluded.source ELSE models.source END,
           sha256 = CASE WHEN models.bytes = excluded.bytes AND models.mtime_ms = excluded.mtime_ms THEN models.sha256 END,
           bytes = excluded.bytes,
           mtime_ms = excluded.mtime_ms,
           summary_json = excluded.summary_json,
           error = excluded.error`,
      )
      .run({ ...record, summary });
    return this.byPath(record.path)!;
  }

  setError(id: number, error: string | null): void {
    this.db.prepare('UPDATE models SET error = ? WHERE id = ?').run(error, id);
  }

  /** Records a hash computed for the file as it was at `mtimeMs` (ignored if it changed since). */
  setSha256(id: number, sha256: string, mtimeMs: number): void {
    this.db.prepare('UPDATE models SET sha256 = ? WHERE id = ? AND mtime_ms = ?').run(sha256, id, mtimeMs);
  }

  /** Readable files whose hash is not known yet, smallest first (so quick ones are done first). */
  needingHash(): ModelEntry[] {
    const rows = this.db.prepare('SELECT * FROM models WHERE sha256 IS NULL AND error IS NULL ORDER BY bytes, id').all() as ModelRow[];
    return rows.map(toEntry);
  }

  /** Forgets the file and keeps folder scans from bringing it back (until unexcluded). */
  remove(id: number, path: string): void {
    this.db.transaction(() => {
      this.exclude(path);
      this.delete(id);
    })();
  }

  delete(id: number): void {
    this.db.prepare('DELETE FROM models WHERE id = ?').run(id);
  }

  exclude(path: string): void {
    this.db.prepare('INSERT OR IGNORE INTO excluded_paths (path) VALUES (?)').run(path);
  }

  unexclude(path: string): void {
    this.db.prepare('DELETE FROM excluded_paths WHERE path = ?').run(path);
  }

  isExcluded(path: string): boolean {
    return this.db.prepare('SELECT 1 FROM excluded_paths WHERE path = ?').get(path) !== undefined;
  }
}

function toEntry(row: ModelRow): ModelEntry {
  const summary = parseJsonColumn<StoredSummary>(row.summary_json, { table: 'models', id: row.id, column: 'summary_json' });
  return {
    id: row.id,
    name: row.name,
    path: row.path,
    fileName: row.path.split(/[\\/]/).at(-1) ?? row.path,
    source: row.source,
    bytes: row.bytes,
    mtimeMs: row.mtime_ms,
    sha256: row.sha256,
    architecture: summary?.architecture ?? null,
    parameters: summary?.parameters ?? null,
    fileType: summary?.fileType ?? null,
    typeMix: summary?.typeMix ?? [],
    contextLength: summary?.contextLength ?? null,
    error: row.error,
    addedAt: row.added_at,
  };
}
