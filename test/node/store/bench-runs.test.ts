import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openStore } from '../../../src-main/node/store/database';
import { BenchRunStore, type NewBenchRun } from '../../../src-main/node/store/bench-runs';
import { ModelStore } from '../../../src-main/node/store/models';
import { tempDir } from '../../support/temp';

function store() {
  const path = join(tempDir(), 'gufo.db');
  const { db } = openStore(path);
  return { db, path, runs: new BenchRunStore(db), models: new ModelStore(db) };
}

const model = (path: string) => ({
  path,
  name: 'm',
  source: 'added' as const,
  bytes: 10,
  mtimeMs: 1,
  summary: null,
  error: null,
});

function run(modelId: number | null, decodeTokS: number): NewBenchRun {
  return {
    modelId,
    modelName: 'stories',
    modelPath: '/models/stories.gguf',
    fileSha256: 'ab'.repeat(32),
    adapter: 'SwiftShader Device (Subzero)',
    backend: 'vulkan',
    promptTokens: 32,
    genTokens: 16,
    prefillTokS: 50.5,
    decodeTokS,
    ttftMs: 633.6,
    loadMs: 120.25,
    rooflineFraction: 0.006,
    appVersion: '0.1.0',
  };
}

describe('BenchRunStore', () => {
  it('stores every field and reads them back', () => {
    const { runs, models, db } = store();
    const m = models.upsert(model('/models/stories.gguf'));
    const added = runs.add(run(m.id, 12.5));
    expect(added).toEqual({ id: added.id, ...run(m.id, 12.5), createdAt: added.createdAt });
    expect(added.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(runs.get(added.id)).toEqual(added);
    db.close();
  });

  it('lists newest first, optionally for one model; deletes', () => {
    const { runs, models, db } = store();
    const a = models.upsert(model('/a.gguf'));
    const b = models.upsert(model('/b.gguf'));
    const first = runs.add(run(a.id, 1));
    const second = runs.add(run(b.id, 2));
    const third = runs.add(run(a.id, 3));
    // Same-millisecond rows keep insertion order; an older timestamp sorts after.
    db.prepare("UPDATE bench_runs SET created_at = '2001-01-01T00:00:00.000Z' WHERE id = ?").run(second.id);
    expect(runs.list().map((r) => r.decodeTokS)).toEqual([3, 1, 2]);
    expect(runs.list(a.id).map((r) => r.id)).toEqual([third.id, first.id]);
    expect(runs.delete(first.id)).toBe(true);
    expect(runs.delete(first.id)).toBe(false);
    expect(runs.list(a.id).map((r) => r.id)).toEqual([third.id]);
    db.close();
  });

  it('keeps a run when its model leaves the library, without the link', () => {
    const { runs, models, db } = store();
    const m = models.upsert(model('/a.gguf'));
    const r = runs.add(run(m.id, 1));
    models.delete(m.id);
    expect(runs.get(r.id)).toMatchObject({ modelId: null, modelName: 'stories', modelPath: '/models/stories.gguf' });
    db.close();
  });

  it('keeps a null roofline as null', () => {
    const { runs, db } = store();
    expect(runs.add({ ...run(null, 1), rooflineFraction: null }).rooflineFraction).toBeNull();
    db.close();
  });
});
