/**
 * The quality_predictions table: every file type's predicted quality for one model file, keyed by
 * the file's SHA-256, so any path holding those bytes (a copy, a re-scan) finds it again.
 */
import type { PredictedQuality } from '../../../src-preload/api';
import type { Db } from './database';
import { parseJsonColumn } from './json-column';

export interface StoredPrediction {
  types: { fileType: string; predicted: PredictedQuality | null }[];
  createdAt: string;
}

export class QualityPredictionStore {
  constructor(private readonly db: Db) {}

  get(sha256: string): StoredPrediction | null {
    const row = this.db.prepare('SELECT types_json, created_at FROM quality_predictions WHERE sha256 = ?').get(sha256) as
      | { types_json: string; created_at: string }
      | undefined;
    if (!row) return null;
    const types = parseJsonColumn<StoredPrediction['types']>(row.types_json, { table: 'quality_predictions', id: sha256, column: 'types_json' })!;
    return { types, createdAt: row.created_at };
  }

  put(sha256: string, types: StoredPrediction['types']): StoredPrediction {
    this.db.prepare('INSERT OR REPLACE INTO quality_predictions (sha256, types_json) VALUES (?, ?)').run(sha256, JSON.stringify(types));
    return this.get(sha256)!;
  }
}
