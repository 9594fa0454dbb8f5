import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { migrate, openStore, type Db } from '../../../src-main/node/store/database';
import { ModelStore, type ModelFileRecord } from '../../../src-main/node/store/models';
import { MIGRATIONS } from '../../../src-main/node/store/schema';
import { tempDir } from '../../support/temp';

function record(path: string, patch: Partial<ModelFileRecord> = {}): ModelFileRecord {
  return { path, name: 'm', source: 'folder', bytes: 100, mtimeMs: 1, summary: null, error: null, ...patch };
}

function store(): { db: Db; models: ModelStore } {
  const { db } = openStore(join(tempDir(), 'gufo.db'));
  return { db, models: new ModelStore(db) };
}

const benchRun = (db: Db, modelId: number) =>
  db
    .prepare(
      `INSERT INTO bench_runs (model_id, model_name, model_path, adapter, backend, prompt_tokens, gen_tokens, prefill_tok_s, decode_tok_s, ttft_ms, load_ms, app_version)
       VALUES (?, 'm', '/m', 'a', 'b', 1, 1, 1, 1, 1, 1, '0')`,
    )
    .run(modelId);

describe('migration 2', () => {
  it('keeps every model, its id and what refers to it; each becomes a model with one location', () => {
    const path = join(tempDir(), 'gufo.db');
    const old = new Database(path);
    old.pragma('foreign_keys = ON');
    migrate(old, MIGRATIONS, 1);
    old
      .prepare(
        "INSERT INTO models (id, path, name, source, bytes, mtime_ms, sha256) VALUES (7, '/m/a.gguf', 'a', 'added', 10, 5, 'abc')",
      )
      .run();
    old
      .prepare(
        "INSERT INTO chats (title, model_id, model_name, model_path, sampling_json, context_size) VALUES ('t', 7, 'a', '/m/a.gguf', '{}', 512)",
      )
      .run();
    benchRun(old, 7);
    old.close();

    const { db } = openStore(path);
    const models = new ModelStore(db);
    expect(models.get(7)).toMatchObject({
      path: '/m/a.gguf',
      name: 'a',
      source: 'added',
      sha256: 'abc',
      parts: 1,
      fileName: 'a.gguf',
    });
    expect(models.get(7)!.locations).toEqual([{ path: '/m/a.gguf', source: 'added', label: null }]);
    expect(db.prepare('SELECT model_id FROM chats').pluck().get()).toBe(7);
    expect(db.prepare('SELECT model_id FROM bench_runs').pluck().get()).toBe(7);
    expect(db.pragma('foreign_keys', { simple: true })).toBe(1);
    // The new sources are allowed now.
    expect(models.upsert(record('/o/blob', { source: 'ollama', label: 'tiny:latest' })).source).toBe('ollama');
    db.close();
  });
});

describe('ModelStore', () => {
  it('merges copies with the same SHA-256 and size into the oldest model, moving what referred to the others', () => {
    const { db, models } = store();
    const a = models.upsert(record('/a.gguf'));
    const b = models.upsert(record('/b.gguf', { source: 'lmstudio', label: 'p/r/b.gguf' }));
    const other = models.upsert(record('/c.gguf', { bytes: 101 }));
    benchRun(db, b.id);
    models.setSha256(a.id, 'same', 1);
    models.setSha256(b.id, 'same', 1);
    models.setSha256(other.id, 'same', 1);
    expect(models.mergeCopies().map((m) => m.id)).toEqual([a.id]);
    expect(models.list().map((m) => m.id)).toEqual([a.id, other.id]);
    expect(models.get(a.id)!.locations).toEqual([
      { path: '/a.gguf', source: 'folder', label: null },
      { path: '/b.gguf', source: 'lmstudio', label: 'p/r/b.gguf' },
    ]);
    expect(models.byPath('/b.gguf')!.id).toBe(a.id);
    expect(db.prepare('SELECT model_id FROM bench_runs').pluck().get()).toBe(a.id);
  });

  it('a copy that changes or goes leaves its model; the model reads from the next copy', () => {
    const { models } = store();
    const a = models.upsert(record('/a.gguf', { source: 'ollama', label: 'a:latest', name: 'a:latest' }));
    const b = models.upsert(record('/b.gguf', { name: 'general name' }));
    models.setSha256(a.id, 'x', 1);
    models.setSha256(b.id, 'x', 1);
    models.mergeCopies();

    // The model's own file is rewritten: it is another file now, the model stays with the copy.
    const changed = models.upsert(
      record('/a.gguf', { source: 'ollama', label: 'a:latest', bytes: 200, mtimeMs: 2, name: 'a:latest' }),
    );
    expect(changed.id).not.toBe(a.id);
    expect(changed).toMatchObject({ path: '/a.gguf', bytes: 200, sha256: null });
    expect(models.get(a.id)).toMatchObject({ path: '/b.gguf', source: 'folder', sha256: 'x', name: 'b' });
    expect(models.get(a.id)!.locations).toHaveLength(1);

    // Last copy gone: the model goes.
    expect(models.removeLocation('/b.gguf')).toBe(false);
    expect(models.get(a.id)).toBeUndefined();
  });

  it('keeps a source that says more than a scan, and a scanned source follows the scan', () => {
    const { models } = store();
    models.upsert(record('/x.gguf', { source: 'downloaded' }));
    expect(models.upsert(record('/x.gguf', { source: 'folder' })).source).toBe('downloaded');
    models.upsert(record('/y.gguf', { source: 'folder' }));
    expect(models.upsert(record('/y.gguf', { source: 'added' })).source).toBe('added');
    models.upsert(record('/z.gguf', { source: 'folder' }));
    expect(models.upsert(record('/z.gguf', { source: 'lmstudio', label: 'p/r/z.gguf' })).locations).toEqual([
      { path: '/z.gguf', source: 'lmstudio', label: 'p/r/z.gguf' },
    ]);
  });
});
