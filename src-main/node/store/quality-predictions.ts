/**
 * The quality_predictions table: every file type's predicted quality for one model file (with one
 * importance matrix, or none), keyed by the files' SHA-256s, so any path holding those bytes (a
 * copy, a re-scan) finds it again; with the per-tensor measurements a custom recipe is predicted from.
 */
import type { PredictedQuality } from '../../../src-preload/api';
import type { PlanMeasurements } from '../quant-plan';
import type { Db } from './database';
import { parseJsonColumn } from './json-column';

export interface StoredPrediction {
  types: { fileType: string; predicted: PredictedQuality | null }[];
  tensors: PlanMeasurements;
  createdAt: string;
}

/** Which prediction: the model file's SHA-256 and the importance matrix file's (null: none). */
export interface PredictionKey {
  sha256: string;
  imatrixSha256: string | null;
}

export class QualityPredictionStore {
  constructor(private readonly db: Db) {}

  get({ sha256, imatrixSha256 }: PredictionKey): StoredPrediction | null {
    const row = this.db
      .prepare(
        'SELECT types_json, tensors_json, created_at FROM quality_predictions WHERE sha256 = ? AND imatrix_sha256 = ?',
      )
      .get(sha256, imatrixSha256 ?? '') as { types_json: string; tensors_json: string; created_at: string } | undefined;
    if (!row) return null;
    const id = `${sha256}${imatrixSha256 ? ` with imatrix ${imatrixSha256}` : ''}`;
    const types = parseJsonColumn<StoredPrediction['types']>(row.types_json, {
      table: 'quality_predictions',
      id,
      column: 'types_json',
    })!;
    const tensors = parseJsonColumn<PlanMeasurements>(row.tensors_json, {
      table: 'quality_predictions',
      id,
      column: 'tensors_json',
    })!;
    return { types, tensors, createdAt: row.created_at };
  }

  put(key: PredictionKey, types: StoredPrediction['types'], tensors: PlanMeasurements): StoredPrediction {
    this.db
      .prepare(
        'INSERT OR REPLACE INTO quality_predictions (sha256, imatrix_sha256, types_json, tensors_json) VALUES (?, ?, ?, ?)',
      )
      .run(key.sha256, key.imatrixSha256 ?? '', JSON.stringify(types), JSON.stringify(tensors));
    return this.get(key)!;
  }
}
