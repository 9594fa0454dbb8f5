/**
 * The quality_reports table: one row per KL-divergence measurement of a quantized model against
 * its base, kept even when the models leave the library (names, paths and hashes say which files).
 */
import type { QualityReport, QualityReportQuery } from '../../../src-preload/api';
import type { Db } from './database';

export type NewQualityReport = Omit<QualityReport, 'id' | 'createdAt'>;

interface QualityReportRow {
  id: number;
  base_model_id: number | null;
  base_name: string;
  base_path: string;
  base_sha256: string | null;
  quant_model_id: number | null;
  quant_name: string;
  quant_path: string;
  quant_sha256: string | null;
  export_id: number | null;
  text_source: QualityReport['textSource'];
  text_label: string;
  ctx: number;
  tokens: number;
  positions: number;
  mean_kl: number;
  p99_kl: number;
  max_kl: number;
  top1: number;
  mean_delta_p: number;
  mean_delta_p_next: number;
  ppl_base: number;
  ppl_quant: number;
  adapter: string;
  app_version: string;
  created_at: string;
}

export class QualityReportStore {
  constructor(private readonly db: Db) {}

  add(report: NewQualityReport): QualityReport {
    const { lastInsertRowid } = this.db
      .prepare(
        `INSERT INTO quality_reports (base_model_id, base_name, base_path, base_sha256, quant_model_id, quant_name, quant_path, quant_sha256,
                                      export_id, text_source, text_label, ctx, tokens, positions, mean_kl, p99_kl, max_kl, top1,
                                      mean_delta_p, mean_delta_p_next, ppl_base, ppl_quant, adapter, app_version)
         VALUES (@baseModelId, @baseName, @basePath, @baseSha256, @quantModelId, @quantName, @quantPath, @quantSha256,
                 @exportId, @textSource, @textLabel, @ctx, @tokens, @positions, @meanKl, @p99Kl, @maxKl, @top1,
                 @meanDeltaP, @meanDeltaPNext, @pplBase, @pplQuant, @adapter, @appVersion)`,
      )
      .run(report);
    return this.get(Number(lastInsertRowid))!;
  }

  get(id: number): QualityReport | undefined {
    const row = this.db.prepare('SELECT * FROM quality_reports WHERE id = ?').get(id) as QualityReportRow | undefined;
    return row && toReport(row);
  }

  /** Newest first (ties by insertion order); optionally those of one model (base or quantized) or one export. */
  list(query: QualityReportQuery = {}): QualityReport[] {
    const where: string[] = [];
    if (query.modelId !== undefined) where.push('(base_model_id = @modelId OR quant_model_id = @modelId)');
    if (query.exportId !== undefined) where.push('export_id = @exportId');
    const rows = this.db
      .prepare(
        `SELECT * FROM quality_reports ${where.length > 0 ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC`,
      )
      .all({ modelId: query.modelId, exportId: query.exportId }) as QualityReportRow[];
    return rows.map(toReport);
  }
}

function toReport(row: QualityReportRow): QualityReport {
  return {
    id: row.id,
    exportId: row.export_id,
    baseModelId: row.base_model_id,
    baseName: row.base_name,
    basePath: row.base_path,
    baseSha256: row.base_sha256,
    quantModelId: row.quant_model_id,
    quantName: row.quant_name,
    quantPath: row.quant_path,
    quantSha256: row.quant_sha256,
    textSource: row.text_source,
    textLabel: row.text_label,
    ctx: row.ctx,
    tokens: row.tokens,
    positions: row.positions,
    meanKl: row.mean_kl,
    p99Kl: row.p99_kl,
    maxKl: row.max_kl,
    top1: row.top1,
    meanDeltaP: row.mean_delta_p,
    meanDeltaPNext: row.mean_delta_p_next,
    pplBase: row.ppl_base,
    pplQuant: row.ppl_quant,
    adapter: row.adapter,
    appVersion: row.app_version,
    createdAt: row.created_at,
  };
}
