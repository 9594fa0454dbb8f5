/** The bench_runs table: one row per finished benchmark, kept even when its model leaves the library. */
import type { BenchRun } from '../../../src-preload/api';
import type { Db } from './database';

export type NewBenchRun = Omit<BenchRun, 'id' | 'createdAt'>;

interface BenchRunRow {
  id: number;
  model_id: number | null;
  model_name: string;
  model_path: string;
  file_sha256: string | null;
  adapter: string;
  backend: string;
  prompt_tokens: number;
  gen_tokens: number;
  prefill_tok_s: number;
  decode_tok_s: number;
  ttft_ms: number;
  load_ms: number;
  roofline_fraction: number | null;
  app_version: string;
  created_at: string;
}

export class BenchRunStore {
  constructor(private readonly db: Db) {}

  add(run: NewBenchRun): BenchRun {
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO bench_runs (model_id, model_name, model_path, file_sha256, adapter, backend, prompt_tokens, gen_tokens,
                                 prefill_tok_s, decode_tok_s, ttft_ms, load_ms, roofline_fraction, app_version)
         VALUES (@modelId, @modelName, @modelPath, @fileSha256, @adapter, @backend, @promptTokens, @genTokens,
                 @prefillTokS, @decodeTokS, @ttftMs, @loadMs, @rooflineFraction, @appVersion)`,
      )
      .run(run);
    return this.get(Number(lastInsertRowid))!;
  }

  get(id: number): BenchRun | undefined {
    const row = this.db.prepare('SELECT * FROM bench_runs WHERE id = ?').get(id) as BenchRunRow | undefined;
    return row && toRun(row);
  }

  /** Newest first (ties, within the clock's resolution, by insertion order), optionally for one model. */
  list(modelId?: number): BenchRun[] {
    const rows = (
      modelId === undefined
        ? this.db.prepare('SELECT * FROM bench_runs ORDER BY created_at DESC, id DESC').all()
        : this.db.prepare('SELECT * FROM bench_runs WHERE model_id = ? ORDER BY created_at DESC, id DESC').all(modelId)
    ) as BenchRunRow[];
    return rows.map(toRun);
  }

  /** Whether there was such a run. */
  delete(id: number): boolean {
    return this.db.prepare('DELETE FROM bench_runs WHERE id = ?').run(id).changes > 0;
  }
}

function toRun(row: BenchRunRow): BenchRun {
  return {
    id: row.id,
    modelId: row.model_id,
    modelName: row.model_name,
    modelPath: row.model_path,
    fileSha256: row.file_sha256,
    adapter: row.adapter,
    backend: row.backend,
    promptTokens: row.prompt_tokens,
    genTokens: row.gen_tokens,
    prefillTokS: row.prefill_tok_s,
    decodeTokS: row.decode_tok_s,
    ttftMs: row.ttft_ms,
    loadMs: row.load_ms,
    rooflineFraction: row.roofline_fraction,
    appVersion: row.app_version,
    createdAt: row.created_at,
  };
}
