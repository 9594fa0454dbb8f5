/**
 * What the library calls a model and whether Gufo can run it: the name comes from where the file
 * is (general.name is a second line), and files the engine cannot run are listed with the reason.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import { ARCHITECTURE_NAMES } from '../../src-main/core/architectures';
import { migrate, openStore } from '../../src-main/node/store/database';
import { ModelStore } from '../../src-main/node/store/models';
import { MIGRATIONS } from '../../src-main/node/store/schema';
import { testBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

const VOCAB_BAICHUAN = join(STORIES_260K, '..', 'vocab', 'ggml-vocab-baichuan.gguf');
const VOCAB_LLAMA = join(STORIES_260K, '..', 'vocab', 'ggml-vocab-llama-spm.gguf');

function byFile(models: ModelEntry[], fileName: string): ModelEntry {
  const model = models.find((m) => m.fileName === fileName);
  if (!model) throw new Error(`${fileName} not in ${models.map((m) => m.fileName).join(', ')}`);
  return model;
}

describe('model identity in the library', () => {
  it('names a model by its file name, with general.name beside it, and says which models cannot run and why', async () => {
    const dir = tempDir();
    copyFileSync(STORIES_260K, join(dir, 'stories260K.gguf'));
    writeFileSync(join(dir, 'stories260K-Q8_0.gguf'), Buffer.concat([readFileSync(STORIES_260K), Buffer.from('copy')]));
    copyFileSync(VOCAB_BAICHUAN, join(dir, 'ggml-vocab-baichuan.gguf'));
    copyFileSync(VOCAB_LLAMA, join(dir, 'ggml-vocab-llama-spm.gguf'));
    await writeRandomModel(join(dir, 'falcon-tiny.gguf'), { arch: 'falcon', nLayer: 1, nEmbd: 32, nFf: 64, nHead: 4 });
    // A split set whose second part is missing.
    mkdirSync(join(dir, 'split'));
    copyFileSync(STORIES_260K, join(dir, 'split', 'big-00001-of-00002.gguf'));

    const models = await testBackend({ modelDirs: [dir] }).api.listModels();

    const stories = byFile(models, 'stories260K.gguf');
    expect(stories).toMatchObject({ name: 'stories260K', generalName: 'llama', notRunnable: null });
    expect(byFile(models, 'stories260K-Q8_0.gguf')).toMatchObject({
      name: 'stories260K-Q8_0',
      generalName: 'llama',
      notRunnable: null,
    });

    expect(byFile(models, 'ggml-vocab-baichuan.gguf')).toMatchObject({
      name: 'ggml-vocab-baichuan',
      error: null,
      notRunnable: expect.stringMatching(/^vocabulary only/) as string,
    });
    // Vocabulary-only comes first even for an architecture the engine runs.
    expect(byFile(models, 'ggml-vocab-llama-spm.gguf').notRunnable).toMatch(/^vocabulary only/);
    expect(byFile(models, 'falcon-tiny.gguf')).toMatchObject({
      name: 'falcon-tiny',
      error: null,
      notRunnable: `architecture "falcon" is not supported; supported: ${ARCHITECTURE_NAMES.join(', ')}`,
    });
    const split = byFile(models, 'big-00001-of-00002.gguf');
    expect(split.name).toBe('big');
    expect(split.notRunnable).toMatch(/part 2 of 2 of a split GGUF set is missing/);
  });

  it('renames models stored under general.name when the database is upgraded', () => {
    const path = join(tempDir(), 'gufo.db');
    const old = new Database(path);
    migrate(old, MIGRATIONS, 3);
    const insert = (id: number, file: string, name: string, source: string, label: string | null) => {
      old
        .prepare('INSERT INTO models (id, path, name, source, bytes, mtime_ms) VALUES (?, ?, ?, ?, 1, 1)')
        .run(id, `/m/${file}`, name, source);
      old
        .prepare(
          'INSERT INTO model_locations (path, model_id, source, label, file_name, bytes, mtime_ms) VALUES (?, ?, ?, ?, ?, 1, 1)',
        )
        .run(`/m/${file}`, id, source, label, file);
    };
    insert(1, 'stories260K.gguf', 'llama', 'folder', null);
    insert(2, 'sha256-abc', 'tiny:latest', 'ollama', 'tiny:latest');
    insert(3, 'blob', 'llama', 'huggingface', 'org/repo/tiny-Q4_K_M.gguf');
    insert(4, 'Qwen3-00001-of-00003.gguf', 'Qwen3', 'folder', null);
    old.close();

    const { db } = openStore(path);
    const names = new ModelStore(db).list().map((m) => [m.id, m.name]);
    expect(names).toEqual([
      [3, 'org/repo/tiny-Q4_K_M'],
      [4, 'Qwen3'],
      [1, 'stories260K'],
      [2, 'tiny:latest'],
    ]);
    db.close();
  });
});
