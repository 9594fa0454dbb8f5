/** The exports table: one row per export, from its start ('running') to how it ended. */
import type { ExportRecord, ExportStatus } from '../../../src-preload/api';
import type { Db } from './database';

export interface NewExport {
  sourceModelId: number;
  sourceName: string;
  sourcePath: string;
  outputPath: string;
  fileType: string;
}

export type ExportEnd =
  | { status: 'done'; bytesOut: number; seconds: number; outputModelId: number }
  | { status: 'failed' | 'cancelled'; seconds: number; error: string | null };

interface ExportRow {
  id: number;
  source_model_id: number | null;
  source_name: string;
  source_path: string;
  output_path: string;
  file_type: string;
  status: ExportStatus;
  bytes_out: number | null;
  seconds: number | null;
  error: string | null;
  output_model_id: number | null;
  job_id: string | null;
  started_at: string;
  ended_at: string | null;
}

const NOW = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";

export class ExportStore {
  constructor(private readonly db: Db) {}

  start(e: NewExport): ExportRecord {
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO exports (source_model_id, source_name, source_path, output_path, file_type, status)
         VALUES (@sourceModelId, @sourceName, @sourcePath, @outputPath, @fileType, 'running')`,
      )
      .run(e);
    return this.get(Number(lastInsertRowid))!;
  }

  setJob(id: number, jobId: string): void {
    this.db.prepare('UPDATE exports SET job_id = ? WHERE id = ?').run(jobId, id);
  }

  finish(id: number, end: ExportEnd): ExportRecord {
    const done = end.status === 'done';
    this.db
      .prepare(
        `UPDATE exports SET status = @status, bytes_out = @bytesOut, seconds = @seconds, error = @error,
                            output_model_id = @outputModelId, ended_at = ${NOW}
         WHERE id = @id`,
      )
      .run({
        id,
        status: end.status,
        seconds: end.seconds,
        bytesOut: done ? end.bytesOut : null,
        outputModelId: done ? end.outputModelId : null,
        error: done ? null : end.error,
      });
    return this.get(id)!;
  }

  /**
   * Rows still 'running' from an app that stopped mid-export (killed, crashed) become 'failed':
   * their job is gone, and the atomic write never renamed a partial file into place. Answers
   * the output paths those exports were writing.
   */
  markInterrupted(): string[] {
    const rows = this.db
      .prepare(
        `UPDATE exports SET status = 'failed', ended_at = ${NOW},
                error = 'interrupted: Gufo stopped before the export finished; ' || output_path || ' was not written'
         WHERE status = 'running' RETURNING output_path`,
      )
      .all() as { output_path: string }[];
    return rows.map((row) => row.output_path);
  }

  get(id: number): ExportRecord | undefined {
    const row = this.db.prepare('SELECT * FROM exports WHERE id = ?').get(id) as ExportRow | undefined;
    return row && toRecord(row);
  }

  /** Newest first. */
  list(): ExportRecord[] {
    const rows = this.db.prepare('SELECT * FROM exports ORDER BY started_at DESC, id DESC').all() as ExportRow[];
    return rows.map(toRecord);
  }
}

function toRecord(row: ExportRow): ExportRecord {
  return {
    id: row.id,
    sourceModelId: row.source_model_id,
    sourceName: row.source_name,
    sourcePath: row.source_path,
    outputPath: row.output_path,
    fileType: row.file_type,
    status: row.status,
    bytesOut: row.bytes_out,
    seconds: row.seconds,
    error: row.error,
    outputModelId: row.output_model_id,
    jobId: row.job_id,
    startedAt: row.started_at,
    endedAt: row.ended_at,
  };
}
