import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openStore } from '../../../src-main/node/store/database';
import { ExportStore } from '../../../src-main/node/store/exports';
import { ModelStore } from '../../../src-main/node/store/models';
import { QualityReportStore, type NewQualityReport } from '../../../src-main/node/store/quality-reports';
import { MIGRATIONS, SCHEMA_VERSION } from '../../../src-main/node/store/schema';
import { tempDir } from '../../support/temp';

function store() {
  const { db } = openStore(join(tempDir(), 'gufo.db'));
  return { db, reports: new QualityReportStore(db), models: new ModelStore(db), exports: new ExportStore(db) };
}

const model = (path: string) => ({
  path,
  name: path.slice(1, -5),
  source: 'added' as const,
  bytes: 10,
  mtimeMs: 1,
  summary: null,
  error: null,
});

function report(
  baseModelId: number | null,
  quantModelId: number | null,
  meanKl: number,
  exportId: number | null = null,
): NewQualityReport {
  return {
    exportId,
    baseModelId,
    baseName: 'stories',
    basePath: '/models/stories.gguf',
    baseSha256: 'ab'.repeat(32),
    quantModelId,
    quantName: 'stories-Q8_0',
    quantPath: '/models/stories-Q8_0.gguf',
    quantSha256: 'cd'.repeat(32),
    textSource: 'builtin',
    textLabel: 'built-in text v1',
    ctx: 512,
    tokens: 718,
    positions: 255,
    meanKl,
    p99Kl: 2.7e-3,
    maxKl: 4.1e-3,
    top1: 0.996,
    meanDeltaP: -1.5e-4,
    meanDeltaPNext: 2e-5,
    pplBase: 11.629,
    pplQuant: 11.641,
    adapter: 'SwiftShader Device (Subzero)',
    appVersion: '0.1.0',
  };
}

describe('QualityReportStore', () => {
  it('stores every field and reads them back', () => {
    const { reports, models, db } = store();
    const base = models.upsert(model('/stories.gguf'));
    const quant = models.upsert(model('/stories-Q8_0.gguf'));
    const added = reports.add(report(base.id, quant.id, 3.5e-4));
    expect(added).toEqual({ id: added.id, ...report(base.id, quant.id, 3.5e-4), createdAt: added.createdAt });
    expect(added.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(reports.get(added.id)).toEqual(added);
    expect(reports.get(added.id + 1)).toBeUndefined();
    db.close();
  });

  it('lists newest first, for a model on either side or for an export', () => {
    const { reports, models, exports, db } = store();
    const [a, b, c] = ['/a.gguf', '/b.gguf', '/c.gguf'].map((p) => models.upsert(model(p)));
    const e = exports.start({
      sourceModelId: a!.id,
      sourceName: 'a',
      sourcePath: '/a.gguf',
      outputPath: '/b.gguf',
      fileType: 'Q8_0',
    });
    const first = reports.add(report(a!.id, b!.id, 1, e.id));
    const second = reports.add(report(a!.id, c!.id, 2));
    const third = reports.add(report(c!.id, b!.id, 3));
    db.prepare("UPDATE quality_reports SET created_at = '2001-01-01T00:00:00.000Z' WHERE id = ?").run(second.id);
    expect(reports.list().map((r) => r.meanKl)).toEqual([3, 1, 2]);
    expect(reports.list({ modelId: b!.id }).map((r) => r.id)).toEqual([third.id, first.id]);
    expect(reports.list({ modelId: c!.id }).map((r) => r.id)).toEqual([third.id, second.id]);
    expect(reports.list({ exportId: e.id }).map((r) => r.id)).toEqual([first.id]);
    expect(reports.list({ modelId: c!.id, exportId: e.id })).toEqual([]);
    db.close();
  });

  it('keeps reports when their models and export leave, and follows models merged as copies', () => {
    const { reports, models, exports, db } = store();
    const [a, b] = ['/a.gguf', '/b.gguf'].map((p) => models.upsert(model(p)));
    const e = exports.start({
      sourceModelId: a!.id,
      sourceName: 'a',
      sourcePath: '/a.gguf',
      outputPath: '/b.gguf',
      fileType: 'Q8_0',
    });
    const kept = reports.add(report(a!.id, b!.id, 1, e.id));
    // A copy of b's bytes elsewhere, older in the library: b merges into it.
    const copy = models.upsert(model('/copy.gguf'));
    for (const m of [b!, copy]) models.setSha256(m.id, 'ef'.repeat(32), 1);
    models.mergeCopies();
    expect(reports.get(kept.id)).toMatchObject({ quantModelId: b!.id < copy.id ? b!.id : copy.id });
    models.delete(a!.id);
    db.prepare('DELETE FROM exports WHERE id = ?').run(e.id);
    expect(reports.get(kept.id)).toMatchObject({
      baseModelId: null,
      exportId: null,
      baseName: 'stories',
      basePath: '/models/stories.gguf',
    });
    db.close();
  });

  it('refuses a text source it does not know', () => {
    const { reports, db } = store();
    expect(() => reports.add({ ...report(null, null, 1), textSource: 'web' as never })).toThrow(
      /CHECK constraint failed/,
    );
    db.close();
  });
});

describe('schema version 3', () => {
  it('adds quality_reports to a version 2 database, keeping its rows', () => {
    const path = join(tempDir(), 'gufo.db');
    const old = new Database(path);
    migrate(old, MIGRATIONS, 2);
    old
      .prepare("INSERT INTO models (path, name, source, bytes, mtime_ms) VALUES ('/a.gguf', 'a', 'added', 1, 1)")
      .run();
    old.close();
    const { db } = openStore(path);
    expect(db.pragma('user_version', { simple: true })).toBe(SCHEMA_VERSION);
    const reports = new QualityReportStore(db);
    const added = reports.add(report(1, null, 0.5));
    expect(reports.list({ modelId: 1 })).toEqual([added]);
    db.close();
  });
});
