import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { version } from '../../package.json';
import { createBackend } from '../../src-main/backend/index';
import { testBackend } from '../support/backend';
import { tempDir } from '../support/temp';

describe('appInfo', () => {
  it('says who answers and where its data is', async () => {
    const envDirs = [tempDir(), tempDir()];
    const { api, context } = testBackend({ modelDirs: envDirs });
    expect(await api.appInfo()).toEqual({
      name: 'Gufo',
      version,
      mode: 'browser',
      platform: process.platform,
      node: process.versions.node,
      dataDir: context.dataDir,
      modelsDir: join(context.dataDir, 'models'),
      envModelDirs: envDirs,
      notices: [],
    });
    expect(existsSync(join(context.dataDir, 'models'))).toBe(true);
  });

  it('tells the user about a corrupt database kept aside', async () => {
    const dataDir = join(tempDir(), 'home');
    mkdirSync(dataDir);
    const garbage = 'this was never a database\n'.repeat(100);
    writeFileSync(join(dataDir, 'gufo.db'), garbage);
    const { notices } = await testBackend({ dataDir }).api.appInfo();
    expect(notices).toHaveLength(1);
    const aside = /kept as (\S+) and a new database was started/.exec(notices[0]!)?.[1];
    expect(aside, notices[0]).toBeDefined();
    expect(readFileSync(aside!, 'utf8')).toBe(garbage);
  });
});

describe('settings', () => {
  it('saves a change, announces it, and keeps it across restarts', async () => {
    const dataDir = join(tempDir(), 'home');
    const first = testBackend({ dataDir });
    expect(await first.api.getSettings()).toEqual({
      theme: 'system',
      modelDirs: [],
      defaultContext: 2048,
      exportDir: null,
      gpuMemoryBudgetGiB: null,
      kvCacheTypes: { k: 'f16', v: 'f16' },
    });
    const saved = await first.api.updateSettings({ theme: 'dark', defaultContext: 8192 });
    expect(saved).toMatchObject({ theme: 'dark', defaultContext: 8192 });
    expect(first.seen).toContainEqual({ type: 'settings-changed', settings: saved });
    await first.close();
    expect(await testBackend({ dataDir }).api.getSettings()).toEqual(saved);
  });

  it('refuses bad values with the field named, saving nothing and announcing nothing', async () => {
    const backend = testBackend();
    await expect(backend.api.updateSettings({ theme: 'blue' as never })).rejects.toThrow(/setting "theme"/);
    await expect(backend.api.updateSettings({ defaultContext: 3.5 })).rejects.toThrow(/setting "defaultContext"/);
    await expect(backend.api.updateSettings({ gpuMemoryBudgetGiB: 0 })).rejects.toThrow(
      /setting "gpuMemoryBudgetGiB" must be a number of GiB above 0/,
    );
    await expect(backend.api.updateSettings({ kvCacheTypes: { k: 'q5_0', v: 'f16' } as never })).rejects.toThrow(
      /setting "kvCacheTypes" must be \{ k, v \}, each one of f16, q8_0, q4_0, f32/,
    );
    expect(backend.seen.filter((e) => e.type === 'settings-changed')).toEqual([]);
    expect((await backend.api.getSettings()).theme).toBe('system');
  });

  it("is the KV cache default of chats that pick none, unless gufo serve's --cache-type-k/-v names one", async () => {
    const app = testBackend();
    expect(await app.api.kvCacheDefault()).toEqual({ k: 'f16', v: 'f16' });
    await app.api.updateSettings({ kvCacheTypes: { k: 'q8_0', v: 'q4_0' } });
    expect(await app.api.kvCacheDefault()).toEqual({ k: 'q8_0', v: 'q4_0' });
    expect(app.context.engines.defaultKvTypes).toEqual({ k: 'q8_0', v: 'q4_0' });

    const served = testBackend({ kvTypes: { k: 'f32', v: 'f32' } });
    await served.api.updateSettings({ kvCacheTypes: { k: 'q8_0', v: 'q8_0' } });
    expect(await served.api.kvCacheDefault()).toEqual({ k: 'f32', v: 'f32' });
  });

  it('stores model folders resolved, each once, and only existing ones', async () => {
    const { api } = testBackend();
    const dir = tempDir();
    const file = join(dir, 'model.gguf');
    writeFileSync(file, 'x');
    expect((await api.updateSettings({ modelDirs: [dir, `${dir}/./`, dir] })).modelDirs).toEqual([dir]);
    await expect(api.updateSettings({ modelDirs: [dir, 'relative/models'] })).rejects.toThrow(
      'setting "modelDirs": relative/models is not an absolute path',
    );
    await expect(api.updateSettings({ modelDirs: [join(dir, 'gone')] })).rejects.toThrow(
      `setting "modelDirs": ${join(dir, 'gone')} does not exist`,
    );
    await expect(api.updateSettings({ modelDirs: [file] })).rejects.toThrow(
      `setting "modelDirs": ${file} is not a folder`,
    );
    expect((await api.getSettings()).modelDirs).toEqual([dir]);
  });

  it('keeps a saved model folder that has gone missing (an unplugged drive) when others are added', async () => {
    const { api } = testBackend();
    const drive = join(tempDir(), 'drive');
    mkdirSync(drive);
    await api.updateSettings({ modelDirs: [drive] });
    rmSync(drive, { recursive: true });
    const other = tempDir();
    expect((await api.updateSettings({ modelDirs: [drive, other] })).modelDirs).toEqual([drive, other]);
  });

  it('takes an existing export folder, or null for the default', async () => {
    const { api } = testBackend();
    const dir = tempDir();
    expect((await api.updateSettings({ exportDir: dir })).exportDir).toBe(dir);
    await expect(api.updateSettings({ exportDir: join(dir, 'missing') })).rejects.toThrow(
      /setting "exportDir": .*missing does not exist/,
    );
    expect((await api.updateSettings({ exportDir: null })).exportDir).toBeNull();
  });

  it('refuses an export folder Gufo cannot write to', async () => {
    const { api } = testBackend();
    // Root may write to any folder of a writable file system; only the kernel's own refuse it (CI runs as root).
    const asRoot = process.getuid?.() === 0;
    const dir = asRoot ? '/proc/sys' : tempDir();
    if (!asRoot) chmodSync(dir, 0o500);
    await expect(api.updateSettings({ exportDir: dir })).rejects.toThrow(`setting "exportDir": ${dir} is not writable`);
    if (!asRoot) chmodSync(dir, 0o700);
  });
});

describe('listDir', () => {
  it('lists folders, then hidden folders (~/.ollama), then .gguf files, with sizes; hides dotfiles and other files', async () => {
    const { api } = testBackend();
    const dir = tempDir();
    mkdirSync(join(dir, 'b-folder'));
    mkdirSync(join(dir, 'A-folder'));
    mkdirSync(join(dir, '.hidden'));
    writeFileSync(join(dir, 'z.gguf'), Buffer.alloc(10));
    writeFileSync(join(dir, 'a.GGUF'), Buffer.alloc(3));
    writeFileSync(join(dir, 'notes.txt'), 'x');
    writeFileSync(join(dir, '.hidden.gguf'), Buffer.alloc(1));
    const listing = await api.listDir(dir);
    expect(listing.path).toBe(dir);
    expect(listing.parent).toBe(dirname(dir));
    expect(listing.entries).toEqual([
      { name: 'A-folder', path: join(dir, 'A-folder'), kind: 'dir', bytes: null },
      { name: 'b-folder', path: join(dir, 'b-folder'), kind: 'dir', bytes: null },
      { name: '.hidden', path: join(dir, '.hidden'), kind: 'dir', bytes: null },
      { name: 'a.GGUF', path: join(dir, 'a.GGUF'), kind: 'file', bytes: 3 },
      { name: 'z.gguf', path: join(dir, 'z.gguf'), kind: 'file', bytes: 10 },
    ]);
  });

  it('has no parent at the root, and names a folder it cannot list', async () => {
    const { api } = testBackend();
    expect((await api.listDir('/')).parent).toBeNull();
    const missing = join(tempDir(), 'nope');
    await expect(api.listDir(missing)).rejects.toThrow(`cannot list ${missing}`);
  });
});

describe('pickPaths', () => {
  it('is null in browser mode, where the UI browses with listDir', async () => {
    expect(await testBackend().api.pickPaths('files')).toBeNull();
  });

  it("answers the native dialog's choice where there is one", async () => {
    const asked: string[] = [];
    const backend = createBackend({
      mode: 'electron',
      dataDir: tempDir(),
      pickPaths: (kind) => {
        asked.push(kind);
        return Promise.resolve(kind === 'folder' ? ['/models'] : []);
      },
    });
    try {
      expect(await backend.api.pickPaths('folder')).toEqual(['/models']);
      expect(await backend.api.pickPaths('files')).toEqual([]);
      expect(asked).toEqual(['folder', 'files']);
    } finally {
      await backend.close();
    }
  });
});
