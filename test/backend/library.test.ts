import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  truncateSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { basename, join } from 'node:path';
import { gguf } from '@huggingface/gguf';
import { describe, expect, it } from 'vitest';
import type { JobState, ModelEntry } from '../../src-preload/api';
import { testBackend, type TestBackend } from '../support/backend';
import { MODELS, STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

/** A small random llama with F16 weights (general.file_type 1, llama.cpp's "F16"). */
const RANDOM_SHAPE = {
  nLayer: 2,
  nEmbd: 64,
  nFf: 128,
  nHead: 4,
  nHeadKv: 2,
  weightType: 'F16',
  contextLength: 512,
  name: 'tiny random',
} as const;

/**
 * A copy of stories260K with its own bytes (its name appended after the tensor data, which GGUF
 * readers ignore), so that copies in a test are different files; identical copies are one model.
 */
function copyStories(dir: string, name = 'stories.gguf'): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, Buffer.concat([readFileSync(STORIES_260K), Buffer.from(name)]));
  return path;
}

/** A GGUF cut off in the middle of its metadata. */
function writeTruncated(dir: string, name = 'truncated.gguf'): string {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, name);
  writeFileSync(path, readFileSync(STORIES_260K).subarray(0, 5000));
  return path;
}

function byFile(models: ModelEntry[], fileName: string): ModelEntry {
  const model = models.find((m) => m.fileName === fileName);
  if (!model) throw new Error(`${fileName} not in ${models.map((m) => m.fileName).join(', ')}`);
  return model;
}

const libraryChanges = (b: TestBackend) => b.seen.filter((e) => e.type === 'library-changed').length;

function hashJobs(b: TestBackend): JobState[] {
  return b.context.jobs.list().filter((j) => j.kind === 'hash');
}

/** Waits for the background hashing started by the last list/add to end. */
async function hashed(b: TestBackend): Promise<JobState> {
  const job = hashJobs(b)[0];
  if (!job) throw new Error('no hash job was started');
  return b.context.jobs.wait(job.id);
}

const sha256Of = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('library scan', () => {
  it('finds models under GUFO_MODELS_DIRS, the settings folders and the data dir, recursively, with their summary', async () => {
    const root = tempDir();
    const envDir = join(root, 'env');
    const stories = copyStories(join(envDir, 'a', 'b'));
    copyStories(join(envDir, '.cache'), 'hidden.gguf');
    writeFileSync(join(envDir, 'notes.txt'), 'not a model');
    const settingsDir = join(root, 'from-settings');
    mkdirSync(settingsDir);
    const random = join(settingsDir, 'random.gguf');
    await writeRandomModel(random, RANDOM_SHAPE);

    const b = testBackend({ modelDirs: [envDir] });
    const exported = copyStories(b.context.modelsDir, 'in-data-dir.gguf');
    expect((await b.api.listModels()).map((m) => m.path).sort()).toEqual([exported, stories].sort());
    expect(libraryChanges(b)).toBe(1);

    await b.api.updateSettings({ modelDirs: [settingsDir] });
    const models = await b.api.listModels();
    expect(models.map((m) => m.fileName).sort()).toEqual(['in-data-dir.gguf', 'random.gguf', 'stories.gguf']);
    for (const model of models) {
      const reference = await gguf(model.path, { allowLocalFile: true });
      const elements = reference.tensorInfos.reduce((sum, t) => sum + t.shape.reduce((n, d) => n * Number(d), 1), 0);
      expect(model.parameters, model.fileName).toBe(elements);
      expect(model.architecture).toBe('llama');
      expect(model.contextLength).toBe(Number((reference.metadata as Record<string, unknown>)['llama.context_length']));
      expect(model.bytes).toBe(statSync(model.path).size);
      expect(model.source).toBe('folder');
      expect(model.error).toBeNull();
      // The type mix covers every tensor, largest share of bytes first.
      expect(model.typeMix.reduce((n, t) => n + t.tensors, 0)).toBe(reference.tensorInfos.length);
      expect(model.typeMix.map((t) => t.bytes)).toEqual(model.typeMix.map((t) => t.bytes).sort((x, y) => y - x));
    }
    const tiny = byFile(models, 'random.gguf');
    expect(tiny).toMatchObject({ name: 'random', generalName: 'tiny random' });
    expect(tiny.fileType).toBe('F16');
    expect(tiny.typeMix.map((t) => t.type)).toEqual(['F16', 'F32']);
    expect(byFile(models, 'stories.gguf').fileType).toBeNull();

    // The settings folder leaves the settings: its models leave the library.
    await b.api.updateSettings({ modelDirs: [] });
    expect((await b.api.listModels()).map((m) => m.fileName).sort()).toEqual(['in-data-dir.gguf', 'stories.gguf']);

    const folders = await b.api.libraryFolders();
    expect(folders.slice(0, 2)).toEqual([
      { path: b.context.modelsDir, origin: 'data', problem: null },
      { path: envDir, origin: 'env', problem: null },
    ]);
    // Then the other apps' stores, which do not exist in the test's empty home.
    expect(new Set(folders.slice(2).map((f) => f.origin))).toEqual(
      new Set(['ollama', 'lmstudio', 'huggingface', 'jan', 'gpt4all']),
    );
    expect(folders.slice(2).every((f) => f.problem === 'not found')).toBe(true);
  });

  it('reads a known file again only when its size or time changed, and keeps bad files visible with their error', async () => {
    const dir = tempDir();
    const path = copyStories(dir);
    // A whole second, so setting it again later gives exactly the same time.
    utimesSync(path, 1_700_000_000, 1_700_000_000);
    const bad = writeTruncated(dir);
    const b = testBackend({ modelDirs: [dir] });
    const first = await b.api.listModels();
    const broken = byFile(first, 'truncated.gguf');
    // The row shows the path beside it: the error says what is wrong only.
    expect(broken.error).not.toContain(bad);
    expect(broken.error).toContain('truncated');
    expect(broken.parameters).toBeNull();
    await hashed(b);

    // Unchanged files are not read again: a list changes nothing and announces nothing.
    const changes = libraryChanges(b);
    expect(await b.api.listModels()).toEqual(
      first.map((m) => (m.path === path ? { ...m, sha256: sha256Of(path) } : m)),
    );
    expect(libraryChanges(b)).toBe(changes);

    // Same size and time, other bytes: a list trusts the size and time, a rescan reads the header.
    const original = readFileSync(path);
    writeFileSync(path, Buffer.concat([Buffer.from('XXXX'), original.subarray(4)]));
    utimesSync(path, 1_700_000_000, 1_700_000_000);
    expect(byFile(await b.api.listModels(), 'stories.gguf').error).toBeNull();
    // The row shows the path: the error does not repeat it.
    expect(byFile(await b.api.rescanLibrary(), 'stories.gguf').error).toBe(
      'magic: not a GGUF file (starts with 0x58585858, expected "GGUF")',
    );
    writeFileSync(path, original);

    // The file is replaced by another model: its summary follows and the old hash is gone.
    await writeRandomModel(path, RANDOM_SHAPE);
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    const changed = byFile(await b.api.listModels(), 'stories.gguf');
    expect(changed.id).toBe(byFile(first, 'stories.gguf').id);
    expect(changed.generalName).toBe('tiny random');
    expect(changed.bytes).toBe(statSync(path).size);
    expect(changed.sha256).toBeNull();
    expect(libraryChanges(b)).toBeGreaterThan(changes);
    await hashed(b);
    expect((await b.api.getModel(changed.id)).sha256).toBe(sha256Of(path));
  });

  it('lists a file reached through symlinks once, and does not loop on a link to a parent folder', async () => {
    const root = tempDir();
    const real = copyStories(join(root, 'real'));
    const other = join(root, 'other');
    mkdirSync(other);
    symlinkSync(real, join(other, 'link.gguf'));
    symlinkSync(join(root, 'real'), join(other, 'linked-folder'));
    symlinkSync(root, join(root, 'real', 'loop'));
    symlinkSync(join(root, 'missing.gguf'), join(other, 'dangling.gguf'));

    const b = testBackend({ modelDirs: [join(root, 'real'), other] });
    const models = await b.api.listModels();
    expect(models.map((m) => m.path)).toEqual([real]);

    const result = await b.api.addModels([join(other, 'link.gguf')]);
    expect(result.added).toEqual([]);
    expect(result.skipped).toEqual([{ path: real, reason: `already in the library: ${real}` }]);
  });

  it('answers two lists at once without duplicating or losing rows', async () => {
    const dir = tempDir();
    copyStories(dir, 'one.gguf');
    copyStories(dir, 'two.gguf');
    const b = testBackend({ modelDirs: [dir] });
    const [a, c] = await Promise.all([b.api.listModels(), b.api.rescanLibrary()]);
    expect(a.map((m) => m.fileName)).toEqual(['one.gguf', 'two.gguf']);
    // (the hashing that starts meanwhile may have filled in a sha256)
    expect(c.map((m) => [m.id, m.path])).toEqual(a.map((m) => [m.id, m.path]));
    expect(b.context.db.prepare('SELECT COUNT(*) AS n FROM models').get()).toEqual({ n: 2 });
  });
});

describe('library hashing', () => {
  it('computes every readable model’s SHA-256 in a background job with byte progress', async () => {
    const dir = tempDir();
    const stories = copyStories(dir);
    const random = join(dir, 'random.gguf');
    await writeRandomModel(random, RANDOM_SHAPE);
    writeTruncated(dir);
    const b = testBackend({ modelDirs: [dir] });
    const listed = await b.api.listModels();
    expect(listed.every((m) => m.sha256 === null)).toBe(true);

    const before = libraryChanges(b);
    const job = await hashed(b);
    expect(job.status).toBe('done');
    expect(job.unit).toBe('bytes');
    const bytes = statSync(stories).size + statSync(random).size;
    expect(job.done).toBe(bytes);
    expect(job.total).toBe(bytes);
    expect(job.result).toEqual({ hashed: 2, skipped: [] });
    // One 'library-changed' per hashed file.
    expect(libraryChanges(b) - before).toBe(2);

    const models = await b.api.listModels();
    expect(byFile(models, 'stories.gguf').sha256).toBe(sha256Of(stories));
    expect(byFile(models, 'random.gguf').sha256).toBe(sha256Of(random));
    expect(byFile(models, 'truncated.gguf').sha256).toBeNull();
    // Nothing left to hash: no new job.
    expect(hashJobs(b)).toHaveLength(1);
  });

  it('stops when the back end closes, and starts again on the next list', async () => {
    const dataDir = join(tempDir(), 'home');
    const modelDir = tempDir();
    const big = copyStories(modelDir, 'big.gguf');
    // Zeros after the tensor data: still a readable GGUF, and large enough to still be hashing.
    truncateSync(big, 256 << 20);

    const first = testBackend({ dataDir, modelDirs: [modelDir] });
    await first.api.listModels();
    const [running] = hashJobs(first);
    expect(running?.status).toBe('running');
    await first.close();
    expect(first.context.jobs.get(running!.id)?.status).toBe('cancelled');
    await expect(first.api.listModels()).rejects.toThrow(/closed/);

    const second = testBackend({ dataDir, modelDirs: [modelDir] });
    const [model] = await second.api.listModels();
    expect(model?.sha256).toBeNull();
    expect((await hashed(second)).status).toBe('done');
    expect((await second.api.getModel(model!.id)).sha256).toBe(sha256Of(big));
  });

  it('leaves the models whose hashing was cancelled to the next rescan, and still hashes new ones', async () => {
    const modelDir = tempDir();
    const big = copyStories(modelDir, 'big.gguf');
    truncateSync(big, 256 << 20);
    const b = testBackend({ modelDirs: [modelDir] });
    await b.api.listModels();
    const [running] = hashJobs(b);
    expect(running?.status).toBe('running');
    b.context.jobs.cancel(running!.id);
    expect((await b.context.jobs.wait(running!.id)).status).toBe('cancelled');

    // A later scan (the page listing the library again, a watched folder's change) leaves it cancelled.
    await b.api.listModels();
    expect(hashJobs(b)).toHaveLength(1);

    // A model that arrives afterwards is hashed, the cancelled one left as it was.
    const small = copyStories(modelDir, 'small.gguf');
    await b.api.listModels();
    const second = hashJobs(b).find((j) => j.id !== running!.id);
    expect(second, 'a job for the new model').toBeDefined();
    expect(await b.context.jobs.wait(second!.id)).toMatchObject({ status: 'done', result: { hashed: 1, skipped: [] } });
    let models = await b.api.listModels();
    expect(byFile(models, 'small.gguf').sha256).toBe(sha256Of(small));
    expect(byFile(models, 'big.gguf').sha256).toBeNull();

    // A rescan hashes it.
    await b.api.rescanLibrary();
    const third = hashJobs(b).find((j) => j.id !== running!.id && j.id !== second!.id);
    expect(third, 'a job after the rescan').toBeDefined();
    expect((await b.context.jobs.wait(third!.id)).status).toBe('done');
    models = await b.api.listModels();
    expect(byFile(models, 'big.gguf').sha256).toBe(sha256Of(big));
  });
});

describe('adding models', () => {
  it('adds files and folders, and says why each skipped path was not added', async () => {
    const root = tempDir();
    const single = copyStories(join(root, 'single'));
    const folder = join(root, 'folder');
    const nested = copyStories(join(folder, 'deep', 'er'), 'nested.gguf');
    const truncated = writeTruncated(folder);
    const notGguf = join(folder, 'fake.gguf');
    writeFileSync(notGguf, 'this is not a model');
    const empty = join(root, 'empty');
    mkdirSync(empty);
    const missing = join(root, 'missing.gguf');

    const b = testBackend();
    const result = await b.api.addModels([single, folder, empty, missing, single]);
    const added = new Map(b.context.models.list().map((m) => [m.path, m]));
    expect(result.added.map((m) => m.path).sort()).toEqual([nested, single].sort());
    expect(result.added.every((m) => m.error === null)).toBe(true);
    // A file found in an added folder is the folder's: the folder is a model folder now.
    expect(Object.fromEntries(result.added.map((m) => [m.path, m.source]))).toEqual({
      [single]: 'added',
      [nested]: 'folder',
    });
    expect(result.folders).toEqual([folder, empty]);
    expect((await b.api.getSettings()).modelDirs).toEqual([folder, empty]);
    const reasons = Object.fromEntries(result.skipped.map((s) => [s.path, s.reason]));
    expect(Object.keys(reasons).sort()).toEqual([empty, missing, notGguf, single, truncated].sort());
    expect(reasons[truncated]).toMatch(/truncated/);
    expect(reasons[truncated]).toContain(truncated);
    expect(reasons[notGguf]).toContain(`${notGguf}: magic: not a GGUF file`);
    expect(reasons[empty]).toBe(`no .gguf files in ${empty}`);
    expect(reasons[missing]).toBe(`cannot read ${missing}: not found`);
    expect(reasons[single]).toBe(`already in the library: ${single}`);

    // The file added by hand is under no scanned folder, yet a list keeps it; the added folder is
    // a model folder now, whose bad files are listed with their error, as in any model folder.
    const listed = await b.api.listModels();
    expect(listed.map((m) => m.path).sort()).toEqual([nested, notGguf, single, truncated].sort());
    expect(byFile(listed, 'truncated.gguf').error).toMatch(/^metadata .*: file is truncated/);
    // Listed by the add itself, not only by the next scan, and the same after a rescan.
    const atOnce = added.get(notGguf)!;
    expect(atOnce).toMatchObject({ error: expect.stringMatching(/^magic: not a GGUF file/) as string });
    expect(atOnce.notRunnable).toBe(atOnce.error);
    const rescanned = byFile(await b.api.rescanLibrary(), 'fake.gguf');
    expect({ error: rescanned.error, notRunnable: rescanned.notRunnable }).toEqual({
      error: atOnce.error,
      notRunnable: atOnce.notRunnable,
    });

    // Calls come as JSON from outside (HTTP, IPC): nonsense is a clear error.
    await expect(b.api.addModels('/models' as unknown as string[])).rejects.toThrow(
      'addModels needs a list of file or folder paths',
    );
    await expect(b.api.addModels([''])).rejects.toThrow('addModels needs a list of file or folder paths');
  });

  it('lists a broken file added on its own as a file in an added folder is listed: with its reason, not as a model', async () => {
    const root = tempDir();
    const truncated = writeTruncated(root);
    const text = join(root, 'notes.gguf');
    writeFileSync(text, 'this is not a model');
    // GGUF version 1's header, cut off after the version.
    const v1 = join(root, 'old-v1.gguf');
    writeFileSync(v1, Buffer.from([0x47, 0x47, 0x55, 0x46, 1, 0, 0, 0, 0, 0]));
    const b = testBackend();

    for (const [path, reason] of [
      [truncated, /^metadata .*: file is truncated/],
      [text, /^magic: not a GGUF file/],
      [v1, /truncated/],
    ] as const) {
      const result = await b.api.addModels([path]);
      // Not counted as a model; the skipped line names the file once.
      expect(result.added).toEqual([]);
      expect(result.skipped).toHaveLength(1);
      expect(result.skipped[0]!.path).toBe(path);
      expect(result.skipped[0]!.reason.split(path)).toHaveLength(2);
      // Listed at once, with the reason and no path in it (the row shows the path beside it).
      const listed = b.context.models.byPath(path)!;
      expect(listed).toMatchObject({ source: 'added', parameters: null, fileType: null });
      expect(listed.error).toMatch(reason);
      expect(listed.error).not.toContain(root);
      expect(listed.notRunnable).toBe(listed.error);
      // The same after a rescan.
      const rescanned = byFile(await b.api.rescanLibrary(), basename(path));
      expect({ error: rescanned.error, notRunnable: rescanned.notRunnable }).toEqual({
        error: listed.error,
        notRunnable: listed.notRunnable,
      });
    }
    expect((await b.api.listModels()).map((m) => m.path).sort()).toEqual([truncated, text, v1].sort());
  });

  it('makes an added folder a model folder: listed in Settings, and a file copied in later joins on rescan', async () => {
    const root = tempDir();
    const folder = join(root, 'my models');
    const first = copyStories(folder, 'first.gguf');
    const dataDir = join(tempDir(), 'home');
    const b = testBackend({ dataDir });
    const seenSettings = () => b.seen.filter((e) => e.type === 'settings-changed');

    const result = await b.api.addModels([folder]);
    expect(result.added.map((m) => [m.path, m.source])).toEqual([[first, 'folder']]);
    expect(result.folders).toEqual([folder]);
    // One list: Settings › Model folders and the library's folders both name it.
    expect((await b.api.getSettings()).modelDirs).toEqual([folder]);
    expect(seenSettings()).toHaveLength(1);
    expect(await b.api.libraryFolders()).toContainEqual({ path: folder, origin: 'settings', problem: null });

    // A file copied in later joins at the next rescan, as a folder file (and leaves with its folder).
    const later = copyStories(folder, 'later.gguf');
    const rescanned = await b.api.rescanLibrary();
    expect(rescanned.map((m) => [m.fileName, m.source])).toEqual([
      ['first.gguf', 'folder'],
      ['later.gguf', 'folder'],
    ]);
    expect(byFile(rescanned, 'later.gguf').path).toBe(later);

    // Adding it again, or a folder inside it, changes no settings.
    mkdirSync(join(folder, 'inner'));
    expect((await b.api.addModels([folder, join(folder, 'inner')])).folders).toEqual([]);
    expect((await b.api.getSettings()).modelDirs).toEqual([folder]);
    expect(seenSettings()).toHaveLength(1);
    await b.close();

    // Stored in the database: a back end opened later on the same data folder scans it.
    const again = testBackend({ dataDir });
    expect((await again.api.getSettings()).modelDirs).toEqual([folder]);
    expect((await again.api.listModels()).map((m) => m.fileName)).toEqual(['first.gguf', 'later.gguf']);

    // Removed in Settings: its models leave the library.
    await again.api.updateSettings({ modelDirs: [] });
    expect(await again.api.listModels()).toEqual([]);
  });

  it('watches an added folder: a file copied in later joins without a rescan', async () => {
    const folder = tempDir();
    const b = testBackend();
    expect((await b.api.addModels([folder])).folders).toEqual([folder]);
    const path = copyStories(folder, 'dropped.gguf');
    const deadline = Date.now() + 20_000;
    while (!b.context.models.list().some((m) => m.path === path)) {
      if (Date.now() > deadline) throw new Error(`${path} did not join the library`);
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(b.context.models.byPath(path)?.source).toBe('folder');
  });

  it('keeps an added file that disappeared, with an error, and a folder file that disappeared leaves', async () => {
    const root = tempDir();
    const added = copyStories(join(root, 'added'));
    const scanned = copyStories(join(root, 'scanned'), 'scanned.gguf');
    const b = testBackend({ modelDirs: [join(root, 'scanned')] });
    await b.api.addModels([added]);
    expect(await b.api.listModels()).toHaveLength(2);
    await hashed(b);

    // Moved away (rename keeps its time), and the scanned one deleted.
    const moved = `${added}.moved`;
    renameSync(added, moved);
    unlinkSync(scanned);
    const changes = libraryChanges(b);
    const models = await b.api.listModels();
    expect(models).toHaveLength(1);
    expect(models[0]).toMatchObject({ path: added, source: 'added', error: `file not found: ${added}` });
    expect(libraryChanges(b)).toBe(changes + 1);
    await expect(b.api.getModel(models[0]!.id)).resolves.toMatchObject({ error: `file not found: ${added}` });

    // The file is back as it was: the error goes, the hash stays.
    renameSync(moved, added);
    const [back] = await b.api.listModels();
    expect(back).toMatchObject({ path: added, error: null, sha256: sha256Of(added) });
  });
});

describe('removing models', () => {
  it('removes from the library without touching the file, keeps it out of scans, and lets it be added again', async () => {
    const dir = tempDir();
    const path = copyStories(dir);
    const b = testBackend({ modelDirs: [dir] });
    const [model] = await b.api.listModels();
    // A benchmark of the model keeps its row when the model goes.
    b.context.db
      .prepare(
        `INSERT INTO bench_runs (model_id, model_name, model_path, adapter, backend, prompt_tokens, gen_tokens, prefill_tok_s, decode_tok_s, ttft_ms, load_ms, app_version)
         VALUES (?, 'stories', ?, 'test', 'vulkan', 1, 1, 1, 1, 1, 1, '0')`,
      )
      .run(model!.id, path);

    const changes = libraryChanges(b);
    await b.api.removeModel(model!.id, { deleteFile: false });
    expect(libraryChanges(b)).toBe(changes + 1);
    expect(existsSync(path)).toBe(true);
    expect(await b.api.listModels()).toEqual([]);
    expect(await b.api.rescanLibrary()).toEqual([]);
    await expect(b.api.getModel(model!.id)).rejects.toThrow(`no model with id ${model!.id}`);
    expect(b.context.db.prepare('SELECT model_id, model_path FROM bench_runs').all()).toEqual([
      { model_id: null, model_path: path },
    ]);

    const { added, folders } = await b.api.addModels([dir]);
    expect(added.map((m) => [m.path, m.source])).toEqual([[path, 'folder']]);
    // It was a model folder already (GUFO_MODELS_DIRS): the settings do not list it again.
    expect(folders).toEqual([]);
    expect((await b.api.getSettings()).modelDirs).toEqual([]);
    expect((await b.api.listModels()).map((m) => m.path)).toEqual([path]);
  });

  it('deletes the file from disk only when asked, and only a .gguf file', async () => {
    const dir = tempDir();
    const path = copyStories(dir);
    const other = copyStories(dir, 'other.gguf');
    const b = testBackend({ modelDirs: [dir] });
    const models = await b.api.listModels();
    await b.api.removeModel(byFile(models, 'stories.gguf').id, { deleteFile: true });
    expect(existsSync(path)).toBe(false);
    expect(existsSync(other)).toBe(true);
    expect((await b.api.listModels()).map((m) => m.path)).toEqual([other]);

    // A GGUF added under another name is never deleted from disk; the library keeps it.
    const renamed = join(tempDir(), 'model.bin');
    copyFileSync(STORIES_260K, renamed);
    const [odd] = (await b.api.addModels([renamed])).added;
    await expect(b.api.removeModel(odd!.id, { deleteFile: true })).rejects.toThrow(
      `not deleting ${renamed}: Gufo only deletes .gguf files from disk`,
    );
    expect(existsSync(renamed)).toBe(true);
    await expect(b.api.getModel(odd!.id)).resolves.toMatchObject({ path: renamed });

    await expect(b.api.removeModel(9999, { deleteFile: true })).rejects.toThrow('no model with id 9999');
  });

  it('names the file when it cannot be deleted, and keeps the model', async () => {
    const path = copyStories(tempDir());
    const b = testBackend();
    const [model] = (await b.api.addModels([path])).added;
    // Replaced by a folder of the same name: unlink fails (even for root, unlike permissions).
    unlinkSync(path);
    mkdirSync(path);
    await expect(b.api.removeModel(model!.id, { deleteFile: true })).rejects.toThrow(`cannot delete ${path}: `);
    expect(existsSync(path)).toBe(true);
    await expect(b.api.getModel(model!.id)).resolves.toMatchObject({ path });
  });

  it('shows no parameters, quantization or context for a vocabulary-only file, which has none', async () => {
    const dir = tempDir();
    copyFileSync(join(MODELS, 'vocab', 'ggml-vocab-baichuan.gguf'), join(dir, 'vocab.gguf'));
    const b = testBackend({ modelDirs: [dir] });
    const vocab = byFile(await b.api.listModels(), 'vocab.gguf');
    expect(vocab).toMatchObject({ parameters: null, fileType: null, typeMix: [], contextLength: null, error: null });
    expect(vocab.notRunnable).toMatch(/^vocabulary only/);
  });
});
