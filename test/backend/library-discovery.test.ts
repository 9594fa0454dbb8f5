import { readFileSync, realpathSync, rmSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import { isolatedEnv, testBackend, type TestBackend } from '../support/backend';
import { writeFileAt, writeHuggingFaceRepo, writeOllamaStore } from '../support/app-stores';
import { writeStoriesSplit } from '../support/gguf-variants';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const STORIES = readFileSync(STORIES_260K);
const variant = (tag: string) => Buffer.concat([STORIES, Buffer.from(tag)]);

/** A back end whose home holds the stores the test writes. */
function backendAt(home: string, modelDirs: string[] = []): TestBackend {
  return testBackend({ modelDirs, env: isolatedEnv(home) });
}

async function hashedAll(b: TestBackend): Promise<void> {
  for (const job of b.context.jobs.list().filter((j) => j.kind === 'hash')) await b.context.jobs.wait(job.id);
}

/**
 * Resolves once `ready()` holds, checked after each 'library-changed' the back end sends by itself
 * (its watches; the hashing sends some too); rejects after a while.
 */
function until(b: TestBackend, ready: () => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error('the library did not change as expected within 10 s'));
    }, 10_000);
    const stop = b.events.subscribe((e) => {
      if (e.type === 'library-changed' && ready()) {
        clearTimeout(timer);
        stop();
        resolve();
      }
    });
  });
}

const byName = (models: ModelEntry[], name: string) => models.find((m) => m.name === name);

describe('models of other apps', () => {
  it('finds Ollama, LM Studio, Hugging Face, Jan and GPT4All models in place; the same bytes everywhere are one model', async () => {
    const home = tempDir();
    const shared = variant('shared');
    const [ollamaBlob] = writeOllamaStore(join(home, '.ollama', 'models'), [
      { name: ['registry.ollama.ai', 'library', 'tiny', 'latest'], gguf: shared },
      { name: ['registry.ollama.ai', 'library', 'other', 'q8'], gguf: variant('ollama only') },
    ]);
    const lmstudio = writeFileAt(join(home, '.lmstudio', 'models'), 'Publisher/Tiny-GGUF/tiny.gguf', shared);
    const [hfBlob] = writeHuggingFaceRepo(join(home, '.cache', 'huggingface', 'hub'), 'org/Tiny-GGUF', 'abc123', {
      'tiny-Q8_0.gguf': shared,
    });
    const jan = writeFileAt(join(home, 'jan', 'models'), 'tiny-jan/model.gguf', variant('jan'));
    const gpt4all = writeFileAt(
      join(home, '.local', 'share', 'nomic.ai', 'GPT4All'),
      'gpt4all-tiny.gguf',
      variant('gpt4all'),
    );

    const b = backendAt(home);
    await b.api.listModels();
    await hashedAll(b);
    const models = await b.api.listModels();
    // Ollama's models show as Ollama names them; the others by their file name, without .gguf.
    expect(models.map((m) => [m.name, m.source]).sort()).toEqual([
      ['gpt4all-tiny', 'gpt4all'],
      ['other:q8', 'ollama'],
      ['tiny-jan/model', 'jan'],
      ['tiny:latest', 'ollama'],
    ]);
    const tiny = byName(models, 'tiny:latest')!;
    expect(tiny).toMatchObject({
      path: realpathSync(ollamaBlob!),
      fileName: ollamaBlob!.split('/').at(-1),
      parts: 1,
      bytes: shared.length,
      architecture: 'llama',
      error: null,
    });
    expect(tiny.sha256).toBe(ollamaBlob!.split('sha256-')[1]);
    // The model reads from its first copy (Ollama's, found first); the others follow by path.
    const copies = [
      { path: realpathSync(lmstudio), source: 'lmstudio', label: 'Publisher/Tiny-GGUF/tiny.gguf' },
      { path: realpathSync(hfBlob!), source: 'huggingface', label: 'org/Tiny-GGUF/tiny-Q8_0.gguf' },
    ].sort((x, y) => (x.path < y.path ? -1 : 1));
    expect(tiny.locations).toEqual([
      { path: realpathSync(ollamaBlob!), source: 'ollama', label: 'tiny:latest' },
      ...copies,
    ]);
    expect(models.find((m) => m.source === 'jan')!.locations).toEqual([
      { path: jan, source: 'jan', label: 'tiny-jan/model.gguf' },
    ]);
    expect(models.find((m) => m.source === 'gpt4all')!.path).toBe(gpt4all);

    // Other apps' files are never deleted from here; forgetting the model forgets every copy.
    await expect(b.api.removeModel(tiny.id, { deleteFile: true })).rejects.toThrow(
      `not deleting ${realpathSync(ollamaBlob!)}: it belongs to Ollama (ollama rm); delete the model there`,
    );
    await b.api.removeModel(tiny.id, { deleteFile: false });
    expect(statSync(lmstudio).size).toBe(shared.length);
    expect((await b.api.rescanLibrary()).map((m) => m.name).sort()).toEqual([
      'gpt4all-tiny',
      'other:q8',
      'tiny-jan/model',
    ]);
  });

  it('a copy that is deleted leaves its model, which reads from another copy', async () => {
    const home = tempDir();
    const shared = variant('copies');
    const lmstudio = writeFileAt(join(home, '.lmstudio', 'models'), 'p/r/tiny.gguf', shared);
    const folder = tempDir();
    const mine = writeFileAt(folder, 'mine.gguf', shared);
    const b = backendAt(home, [folder]);
    await b.api.listModels();
    await hashedAll(b);
    const [one] = await b.api.listModels();
    expect(one!.locations.map((l) => l.path).sort()).toEqual([lmstudio, mine].sort());
    unlinkSync(one!.path);
    const [after] = await b.api.listModels();
    expect(after).toMatchObject({ id: one!.id, error: null, sha256: one!.sha256 });
    expect(after!.locations).toHaveLength(1);
    expect(after!.path).not.toBe(one!.path);
  });
});

describe('split GGUF sets', () => {
  it('are one model: every part’s tensors and bytes, read from the first; a missing part is named', async () => {
    const dir = tempDir();
    const parts = await writeStoriesSplit(dir, 'stories', 3);
    const b = testBackend({ modelDirs: [dir] });
    const [model] = await b.api.listModels();
    const whole = (await testBackend({ modelDirs: [] }).api.addModels([STORIES_260K])).added[0]!;
    expect(model).toMatchObject({
      path: parts[0],
      fileName: 'stories-00001-of-00003.gguf',
      parts: 3,
      bytes: parts.reduce((n, p) => n + statSync(p).size, 0),
      parameters: whole.parameters,
      architecture: 'llama',
      error: null,
    });
    expect(model!.typeMix).toEqual(whole.typeMix);

    rmSync(parts[2]!);
    const [broken] = await b.api.listModels();
    expect(broken!.error).toBe(`${parts[2]}: part 3 of 3 of a split GGUF set is missing`);
    // Adding a part by hand adds its set, once it is whole.
    const other = testBackend();
    expect((await other.api.addModels([parts[1]!])).skipped).toEqual([
      { path: parts[0], reason: `${parts[2]}: part 3 of 3 of a split GGUF set is missing` },
    ]);
    await writeStoriesSplit(dir, 'stories', 3);
    const { added } = await other.api.addModels([parts[1]!]);
    expect(added.map((m) => [m.path, m.parts, m.source, m.parameters])).toEqual([
      [parts[0], 3, 'added', whole.parameters],
    ]);
  });
});

describe('watching the folders', () => {
  it('rescans when a model appears or goes, in a folder or an app store, without being asked', async () => {
    const home = tempDir();
    const folder = tempDir();
    const ollama = join(home, '.ollama', 'models');
    writeOllamaStore(ollama, [{ name: ['registry.ollama.ai', 'library', 'first', 'latest'], gguf: variant('first') }]);
    const b = backendAt(home, [folder]);
    expect((await b.api.listModels()).map((m) => m.name)).toEqual(['first:latest']);

    const paths = () => b.context.models.list().map((m) => m.path);
    const path = writeFileAt(folder, 'dropped.gguf', variant('dropped'));
    await until(b, () => paths().includes(path));

    writeOllamaStore(ollama, [
      { name: ['registry.ollama.ai', 'library', 'second', 'latest'], gguf: variant('second') },
    ]);
    await until(b, () => b.context.models.list().some((m) => m.name === 'second:latest'));

    unlinkSync(path);
    await until(b, () => !paths().includes(path));
  });
});
