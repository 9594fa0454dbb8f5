/** The downloads table: every download until the user forgets it, so that it resumes after a restart. */
import type { DownloadStatus } from '../../../src-preload/api';
import type { Db } from './database';

export interface DownloadRecord {
  id: number;
  url: string;
  fileName: string;
  path: string;
  partPath: string;
  bytes: number;
  total: number | null;
  sha256: string | null;
  sha256Source: 'given' | 'published' | null;
  etag: string | null;
  status: DownloadStatus;
  error: string | null;
  ownerPid: number | null;
  modelId: number | null;
  createdAt: string;
  updatedAt: string;
}

type Patch = Partial<Omit<DownloadRecord, 'id' | 'createdAt' | 'updatedAt'>>;

const COLUMNS: Record<keyof Patch, string> = {
  url: 'url',
  fileName: 'file_name',
  path: 'path',
  partPath: 'part_path',
  bytes: 'bytes',
  total: 'total',
  sha256: 'sha256',
  sha256Source: 'sha256_source',
  etag: 'etag',
  status: 'status',
  error: 'error',
  ownerPid: 'owner_pid',
  modelId: 'model_id',
};

/** Downloads that are not over: their paths are taken. */
const UNFINISHED: readonly DownloadStatus[] = ['queued', 'running', 'paused', 'verifying', 'failed'];

export class DownloadStore {
  constructor(private readonly db: Db) {}

  create(
    record: Pick<
      DownloadRecord,
      'url' | 'fileName' | 'path' | 'partPath' | 'sha256' | 'sha256Source' | 'status' | 'ownerPid'
    >,
  ): DownloadRecord {
    const { id } = this.db
      .prepare(
        `INSERT INTO downloads (url, file_name, path, part_path, sha256, sha256_source, status, owner_pid)
         VALUES (@url, @fileName, @path, @partPath, @sha256, @sha256Source, @status, @ownerPid) RETURNING id`,
      )
      .get(record) as { id: number };
    return this.get(id)!;
  }

  get(id: number): DownloadRecord | undefined {
    const row = this.db.prepare(`SELECT ${SELECT} FROM downloads WHERE id = ?`).get(id) as DownloadRecord | undefined;
    return row;
  }

  /** Newest first. */
  list(): DownloadRecord[] {
    return this.db.prepare(`SELECT ${SELECT} FROM downloads ORDER BY id DESC`).all() as DownloadRecord[];
  }

  /** The download of `url` that is not over yet, if any. */
  unfinished(url: string): DownloadRecord | undefined {
    return this.list().find((d) => d.url === url && UNFINISHED.includes(d.status));
  }

  /** Paths that unfinished downloads will write (a new download must pick another name). */
  takenPaths(): Set<string> {
    return new Set(this.list().flatMap((d) => (UNFINISHED.includes(d.status) ? [d.path, d.partPath] : [])));
  }

  update(id: number, patch: Patch): DownloadRecord {
    const keys = Object.keys(patch) as (keyof Patch)[];
    if (keys.length > 0) {
      const sets = keys.map((key) => `${COLUMNS[key]} = @${key}`).join(', ');
      this.db
        .prepare(`UPDATE downloads SET ${sets}, updated_at = strftime('%Y-%m-%dT%H:%M:%fZ', 'now') WHERE id = @id`)
        .run({ ...patch, id });
    }
    return this.get(id)!;
  }

  delete(id: number): void {
    this.db.prepare('DELETE FROM downloads WHERE id = ?').run(id);
  }

  /**
   * Downloads a process left queued, running or verifying when it ended (closed, crashed, killed):
   * paused, to be resumed from their partial file. Those of a process still running are its own.
   */
  recover(isRunning: (pid: number) => boolean): void {
    for (const d of this.list()) {
      if (
        (d.status === 'queued' || d.status === 'running' || d.status === 'verifying') &&
        (d.ownerPid === null || !isRunning(d.ownerPid))
      ) {
        this.update(d.id, { status: 'paused', ownerPid: null });
      }
    }
  }
}

const SELECT = Object.entries({ id: 'id', ...COLUMNS, createdAt: 'created_at', updatedAt: 'updated_at' })
  .map(([key, column]) => `${column} AS ${key}`)
  .join(', ');
