/**
 * The models table: one row per model, and model_locations: every place its file is found. The
 * same bytes in Ollama's store, a folder and the Hugging Face cache are one model (merged once
 * their SHA-256 is known) with three locations; the model is read from `path`, its first location.
 */
import { basename } from 'node:path';
import type { ModelEntry, ModelLocation, ModelSource, TypeShareView } from '../../../src-preload/api';
import { whyNoGeneration, whyNotRunnable } from '../../core/runnable';
import type { Db } from './database';
import { parseJsonColumn } from './json-column';
import { modelName } from './model-name';

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
  parts: number;
  bytes: number;
  mtime_ms: number;
  sha256: string | null;
  summary_json: string | null;
  error: string | null;
  added_at: string;
}

interface LocationRow {
  path: string;
  model_id: number;
  source: ModelSource;
  label: string | null;
  file_name: string;
  bytes: number;
  mtime_ms: number;
}

export interface ModelFileRecord {
  path: string;
  name: string;
  source: ModelSource;
  /** All parts together. */
  bytes: number;
  mtimeMs: number;
  summary: StoredSummary | null;
  error: string | null;
  /** Default: the last segment of `path`. */
  fileName?: string;
  /** What the app keeping the file calls it (see ModelLocation.label). */
  label?: string | null;
  /** Files in a split set (default 1). */
  parts?: number;
  /** The SHA-256 a content-addressed store (Ollama) names the file by. */
  sha256?: string | null;
}

/** A location as the store records it: whose it is, and the size and time of the copy when last read. */
export interface KnownLocation extends ModelLocation {
  modelId: number;
  fileName: string;
  bytes: number;
  mtimeMs: number;
}

/** Sources a scan finds by itself; the others (added by hand, exported, downloaded) say more and are kept. */
const SCANNED: readonly ModelSource[] = ['ollama', 'lmstudio', 'huggingface', 'jan', 'gpt4all', 'folder'];

export function isScannedSource(source: ModelSource): boolean {
  return SCANNED.includes(source);
}

export class ModelStore {
  constructor(private readonly db: Db) {}

  list(): ModelEntry[] {
    const rows = this.db.prepare('SELECT * FROM models ORDER BY name COLLATE NOCASE, id').all() as ModelRow[];
    return this.#entries(rows);
  }

  get(id: number): ModelEntry | undefined {
    const row = this.db.prepare('SELECT * FROM models WHERE id = ?').get(id) as ModelRow | undefined;
    return row && this.#entries([row])[0];
  }

  /** The model found at `path` (any of its locations). */
  byPath(path: string): ModelEntry | undefined {
    const location = this.#location(path);
    return location && this.get(location.model_id);
  }

  /** Every location the library knows, of every model. */
  locations(): KnownLocation[] {
    const rows = this.db.prepare('SELECT * FROM model_locations ORDER BY path').all() as LocationRow[];
    return rows.map(toKnownLocation);
  }

  location(path: string): KnownLocation | undefined {
    const row = this.#location(path);
    return row && toKnownLocation(row);
  }

  /**
   * Inserts the file, or refreshes what is known of it (size, time, summary). A changed file loses
   * its stale hash, and leaves the model whose other copies did not change (it becomes a model of
   * its own). A source found by a scan gives way to one that says more ('added', 'exported',
   * 'downloaded'), which is kept. Answers the file's model.
   */
  upsert(record: ModelFileRecord): ModelEntry {
    return this.db.transaction(() => {
      const known = this.#location(record.path);
      if (known) {
        const changed = known.bytes !== record.bytes || known.mtime_ms !== record.mtimeMs;
        const copies = this.#locationsOf(known.model_id).length;
        if (!changed || copies === 1) return this.#refresh(known, record, changed);
        this.#detach(known);
      }
      return this.#insert(record);
    })();
  }

  setError(id: number, error: string | null): void {
    this.db.prepare('UPDATE models SET error = ? WHERE id = ?').run(error, id);
  }

  /** Records a hash computed for the file as it was at `mtimeMs` (ignored if it changed since). */
  setSha256(id: number, sha256: string, mtimeMs: number): void {
    this.db.prepare('UPDATE models SET sha256 = ? WHERE id = ? AND mtime_ms = ?').run(sha256, id, mtimeMs);
  }

  /**
   * Models with the same SHA-256 and size become one: the oldest keeps its id and takes the
   * others' locations, and what referred to them (chats, benchmarks, exports) refers to it.
   * Answers the models that took copies in.
   */
  mergeCopies(): ModelEntry[] {
    const groups = this.db
      .prepare(
        'SELECT sha256, bytes, group_concat(id) AS ids FROM models WHERE sha256 IS NOT NULL GROUP BY sha256, bytes, parts HAVING count(*) > 1',
      )
      .all() as { ids: string }[];
    return groups.map(({ ids }) => {
      const [keep, ...others] = ids
        .split(',')
        .map(Number)
        .sort((a, b) => a - b) as [number, ...number[]];
      this.db.transaction(() => {
        for (const other of others) this.#mergeInto(keep, other);
      })();
      return this.get(keep)!;
    });
  }

  /** Readable files whose hash is not known yet, smallest first (so quick ones are done first). */
  needingHash(): ModelEntry[] {
    const rows = this.db
      .prepare('SELECT * FROM models WHERE sha256 IS NULL AND error IS NULL ORDER BY bytes, id')
      .all() as ModelRow[];
    return this.#entries(rows);
  }

  /** Forgets the model and keeps scans from bringing any of its files back (until unexcluded). */
  remove(id: number): void {
    this.db.transaction(() => {
      for (const location of this.#locationsOf(id)) this.exclude(location.path);
      this.delete(id);
    })();
  }

  delete(id: number): void {
    this.db.prepare('DELETE FROM models WHERE id = ?').run(id);
  }

  /**
   * Forgets one location; the model goes with its last one, and reads from another copy when this
   * one was its `path`. Answers whether the model is still there.
   */
  removeLocation(path: string): boolean {
    return this.db.transaction(() => {
      const location = this.#location(path);
      if (!location) return false;
      if (this.#locationsOf(location.model_id).length === 1) {
        this.delete(location.model_id);
        return false;
      }
      this.#detach(location);
      return true;
    })();
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

  #location(path: string): LocationRow | undefined {
    return this.db.prepare('SELECT * FROM model_locations WHERE path = ?').get(path) as LocationRow | undefined;
  }

  #locationsOf(modelId: number): LocationRow[] {
    return this.db
      .prepare('SELECT * FROM model_locations WHERE model_id = ? ORDER BY path')
      .all(modelId) as LocationRow[];
  }

  #insert(record: ModelFileRecord): ModelEntry {
    const { id } = this.db
      .prepare(
        `INSERT INTO models (path, name, source, parts, bytes, mtime_ms, sha256, summary_json, error)
         VALUES (@path, @name, @source, @parts, @bytes, @mtimeMs, @sha256, @summary, @error) RETURNING id`,
      )
      .get(modelParams(record)) as { id: number };
    this.db
      .prepare(
        `INSERT INTO model_locations (path, model_id, source, label, file_name, bytes, mtime_ms)
         VALUES (@path, @id, @source, @label, @fileName, @bytes, @mtimeMs)`,
      )
      .run(locationParams(record, id));
    return this.get(id)!;
  }

  /** Updates a known location (and its model when the model is read from it). */
  #refresh(known: LocationRow, record: ModelFileRecord, changed: boolean): ModelEntry {
    const source = isScannedSource(known.source) ? record.source : known.source;
    this.db
      .prepare(
        `UPDATE model_locations SET source = @source, label = @label, file_name = @fileName, bytes = @bytes, mtime_ms = @mtimeMs
         WHERE path = @path`,
      )
      .run({ ...locationParams(record, known.model_id), source });
    this.db
      .prepare(
        `UPDATE models SET
           name = @name,
           source = @source,
           parts = @parts,
           sha256 = CASE WHEN @changed THEN @sha256 ELSE coalesce(sha256, @sha256) END,
           bytes = @bytes,
           mtime_ms = @mtimeMs,
           summary_json = @summary,
           error = @error
         WHERE id = @id AND path = @path`,
      )
      .run({ ...modelParams(record), source, changed: changed ? 1 : 0, id: known.model_id });
    return this.get(known.model_id)!;
  }

  /** Takes a location off its model (which keeps others); a model read from it reads from the next. */
  #detach(location: LocationRow): void {
    this.db.prepare('DELETE FROM model_locations WHERE path = ?').run(location.path);
    const model = this.db.prepare('SELECT * FROM models WHERE id = ?').get(location.model_id) as ModelRow;
    if (model.path !== location.path) return;
    const next = this.#locationsOf(model.id)[0]!;
    this.db
      .prepare('UPDATE models SET path = ?, source = ?, name = ?, mtime_ms = ? WHERE id = ?')
      .run(next.path, next.source, modelName(next), next.mtime_ms, model.id);
  }

  #mergeInto(keep: number, other: number): void {
    this.db.prepare('UPDATE model_locations SET model_id = ? WHERE model_id = ?').run(keep, other);
    // Every column that refers to a model, whichever feature's table holds it.
    const tables = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
    for (const table of tables) {
      const keys = this.db
        .prepare('SELECT "from" FROM pragma_foreign_key_list(?) WHERE "table" = ?')
        .pluck()
        .all(table, 'models') as string[];
      for (const column of keys)
        this.db.prepare(`UPDATE "${table}" SET "${column}" = ? WHERE "${column}" = ?`).run(keep, other);
    }
    this.delete(other);
  }

  /** ModelEntries with their locations, `path` first. */
  #entries(rows: ModelRow[]): ModelEntry[] {
    if (rows.length === 0) return [];
    const byModel = new Map<number, LocationRow[]>();
    const all =
      rows.length === 1
        ? this.#locationsOf(rows[0]!.id)
        : (this.db.prepare('SELECT * FROM model_locations ORDER BY path').all() as LocationRow[]);
    for (const location of all) byModel.set(location.model_id, [...(byModel.get(location.model_id) ?? []), location]);
    return rows.map((row) => toEntry(row, byModel.get(row.id) ?? []));
  }
}

function modelParams(record: ModelFileRecord) {
  return {
    path: record.path,
    name: record.name,
    source: record.source,
    parts: record.parts ?? 1,
    bytes: record.bytes,
    mtimeMs: record.mtimeMs,
    sha256: record.sha256 ?? null,
    summary: record.summary === null ? null : JSON.stringify(record.summary),
    error: record.error,
  };
}

function locationParams(record: ModelFileRecord, id: number) {
  return {
    path: record.path,
    id,
    source: record.source,
    label: record.label ?? null,
    fileName: record.fileName ?? basename(record.path),
    bytes: record.bytes,
    mtimeMs: record.mtimeMs,
  };
}

function parseSummary(row: ModelRow): StoredSummary | null {
  return parseJsonColumn<StoredSummary>(row.summary_json, { table: 'models', id: row.id, column: 'summary_json' });
}

function toLocation(row: LocationRow): ModelLocation {
  return { path: row.path, source: row.source, label: row.label };
}

function toKnownLocation(row: LocationRow): KnownLocation {
  return {
    ...toLocation(row),
    modelId: row.model_id,
    fileName: row.file_name,
    bytes: row.bytes,
    mtimeMs: row.mtime_ms,
  };
}

function toEntry(row: ModelRow, locations: LocationRow[]): ModelEntry {
  const summary = parseSummary(row);
  const weighs = summary !== null && summary.parameters !== 0;
  const primary = locations.find((l) => l.path === row.path);
  const ordered = primary ? [primary, ...locations.filter((l) => l !== primary)] : locations;
  return {
    id: row.id,
    name: row.name,
    generalName: summary?.name ?? null,
    path: row.path,
    fileName: primary?.file_name ?? basename(row.path),
    source: row.source,
    locations: ordered.map(toLocation),
    parts: row.parts,
    bytes: row.bytes,
    mtimeMs: row.mtime_ms,
    sha256: row.sha256,
    architecture: summary?.architecture ?? null,
    // A vocabulary-only file has no weights: no parameters, quantization or context to show.
    parameters: weighs ? summary.parameters : null,
    fileType: weighs ? summary.fileType : null,
    typeMix: weighs ? summary.typeMix : [],
    contextLength: weighs ? summary.contextLength : null,
    error: row.error,
    notRunnable: row.error ?? (summary ? whyNotRunnable(summary) : 'the file has not been read'),
    noGeneration: whyNoGeneration(summary?.architecture ?? null),
    addedAt: row.added_at,
  };
}
