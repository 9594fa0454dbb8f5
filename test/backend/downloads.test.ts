import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { DownloadStatus, DownloadView } from '../../src-preload/api';
import { testBackend, type TestBackend } from '../support/backend';
import { sha256Of, startFileServer } from '../support/http-file-server';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

/** stories260K with its own tail (ignored by GGUF readers): a real model whose bytes no other test has. */
const MODEL = Buffer.concat([readFileSync(STORIES_260K), Buffer.from('downloads test')]);
const OVER: DownloadStatus[] = ['paused', 'done', 'failed', 'cancelled'];

function downloads(b: TestBackend, id: number): DownloadView[] {
  return b.seen.flatMap((e) => (e.type === 'download' && e.download.id === id ? [e.download] : []));
}

/** Resolves with the download once it is in one of `statuses`. */
function until(b: TestBackend, id: number, statuses: DownloadStatus[] = OVER): Promise<DownloadView> {
  return new Promise((resolve, reject) => {
    const check = (view: DownloadView | undefined) => {
      if (view && statuses.includes(view.status)) {
        stop();
        clearTimeout(timer);
        resolve(view);
      }
    };
    const stop = b.events.subscribe((e) => {
      if (e.type === 'download' && e.download.id === id) check(e.download);
    });
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`download ${id} never got to ${statuses.join('/')}`));
    }, 20_000);
    void b.api.listDownloads().then((all) => check(all.find((d) => d.id === id)));
  });
}

const modelsIn = (b: TestBackend) => readdirSync(b.context.modelsDir).sort();

describe('downloads', () => {
  it('pulls hf:// from HF_ENDPOINT, checks the published SHA-256 and the header, and adds the model to the library', async () => {
    const server = await startFileServer({
      files: { 'org/tiny-GGUF/stories.gguf': MODEL },
      huggingFace: true,
      dropAfter: { bytes: 400_000, times: 1 },
    });
    const b = testBackend({ env: { HF_ENDPOINT: server.url } });
    const started = await b.api.startDownload({ url: 'hf://org/tiny-GGUF/stories.gguf' });
    expect(started).toMatchObject({
      url: 'hf://org/tiny-GGUF/stories.gguf',
      fileName: 'stories.gguf',
      path: join(b.context.modelsDir, 'stories.gguf'),
    });
    const done = await until(b, started.id);
    expect(done).toMatchObject({
      status: 'done',
      bytes: MODEL.length,
      total: MODEL.length,
      sha256: sha256Of(MODEL),
      sha256Source: 'published',
      error: null,
    });
    expect(readFileSync(done.path).equals(MODEL)).toBe(true);
    expect(modelsIn(b)).toEqual(['stories.gguf']);
    const model = await b.api.getModel(done.modelId!);
    expect(model).toMatchObject({
      path: done.path,
      source: 'downloaded',
      sha256: sha256Of(MODEL),
      architecture: 'llama',
      error: null,
    });
    // It resumed after the dropped connection, and said how it went.
    expect(
      server.requests
        .filter((r) => r.method === 'GET' && r.path.startsWith('/cdn/'))
        .map((r) => r.range?.startsWith('bytes=') ?? false),
    ).toEqual([false, true]);
    expect(downloads(b, started.id).map((d) => d.status)).toEqual(
      expect.arrayContaining(['queued', 'running', 'verifying', 'done']),
    );
    // Each view is later than the last, so a UI that gets the answer after the end's event keeps the event's.
    const revisions = [...downloads(b, started.id), ...(await b.api.listDownloads())].map((d) => d.revision);
    expect(revisions).toEqual([...revisions].sort((x, y) => x - y));
    expect(new Set(revisions).size).toBe(revisions.length);
    expect(done.revision).toBeGreaterThan(started.revision);
    expect(b.seen.some((e) => e.type === 'library-changed')).toBe(true);
    // The list lasts until forgotten; the model stays.
    expect((await b.api.listDownloads()).map((d) => d.id)).toEqual([started.id]);
    await b.api.removeDownload(started.id);
    expect(await b.api.listDownloads()).toEqual([]);
    await expect(b.api.getModel(done.modelId!)).resolves.toMatchObject({ path: done.path });
  });

  it('deletes a file whose SHA-256 is not the one given, or that is not a GGUF file, and says why', async () => {
    const server = await startFileServer({
      files: { 'model.gguf': MODEL, 'page.gguf': Buffer.from('<html>sign in</html>'.repeat(100)) },
    });
    const b = testBackend();
    const wrong = 'ab'.repeat(32);
    const mismatch = await until(
      b,
      (await b.api.startDownload({ url: `${server.url}/model.gguf`, sha256: wrong.toUpperCase() })).id,
    );
    expect(mismatch.status).toBe('failed');
    expect(mismatch.error).toBe(
      `${server.url}/model.gguf: the file's SHA-256 is ${sha256Of(MODEL)}, not the given ${wrong}; the download was deleted`,
    );
    const notGguf = await until(b, (await b.api.startDownload({ url: `${server.url}/page.gguf` })).id);
    expect(notGguf.status).toBe('failed');
    expect(notGguf.error).toMatch(
      new RegExp(`^${server.url}/page.gguf is not a GGUF file \\(.*magic: not a GGUF file`),
    );
    expect(modelsIn(b)).toEqual([]);
    expect(await b.api.listModels()).toEqual([]);

    await expect(b.api.startDownload({ url: `${server.url}/model.gguf`, sha256: 'abc' })).rejects.toThrow(
      '"abc" is not a SHA-256 (64 hexadecimal digits)',
    );
    await expect(b.api.startDownload({ url: 'ftp://x/y.gguf' })).rejects.toThrow('only http(s):// and hf:// URLs');
  });

  it('checks the free disk space before writing a byte', async () => {
    const server = await startFileServer({ files: { 'huge.gguf': MODEL }, claimSize: 1e15 });
    const b = testBackend();
    const failed = await until(b, (await b.api.startDownload({ url: `${server.url}/huge.gguf` })).id);
    expect(failed.status).toBe('failed');
    expect(failed.error).toMatch(
      new RegExp(
        `^not enough free space in ${b.context.modelsDir} for huge.gguf: 1000000.0 GB more needed, [\\d.]+ GB free$`,
      ),
    );
    expect(server.requests.map((r) => r.method)).toEqual(['HEAD']);
    expect(modelsIn(b)).toEqual([]);
  });

  it('pauses, and resumes from the partial file after Gufo restarts', async () => {
    const server = await startFileServer({ files: { 'model.gguf': MODEL }, holdAfter: { bytes: 300_000 } });
    const dataDir = join(tempDir(), 'home');
    const first = testBackend({ dataDir });
    const { id } = await first.api.startDownload({ url: `${server.url}/model.gguf` });
    await until(first, id, ['running']);
    await new Promise<void>((resolve) => {
      const stop = first.events.subscribe((e) => {
        if (e.type === 'download' && e.download.bytes >= 300_000) {
          stop();
          resolve();
        }
      });
    });
    const paused = await first.api.pauseDownload(id);
    expect(paused).toMatchObject({ status: 'paused', bytes: 300_000, bytesPerSecond: null });
    const part = join(first.context.modelsDir, 'model.gguf.part');
    expect(statSync(part).size).toBe(300_000);
    await first.close();

    server.release();
    const second = testBackend({ dataDir });
    const [listed] = await second.api.listDownloads();
    expect(listed).toMatchObject({ id, status: 'paused', bytes: 300_000, total: MODEL.length });
    // The same URL again resumes the same download.
    expect((await second.api.startDownload({ url: `${server.url}/model.gguf` })).id).toBe(id);
    const done = await until(second, id);
    expect(done.status).toBe('done');
    expect(readFileSync(done.path).equals(MODEL)).toBe(true);
    expect(existsSync(part)).toBe(false);
    expect(server.requests.filter((r) => r.method === 'GET').map((r) => r.range)).toEqual([null, 'bytes=300000-']);
  });

  it('a download left running by a killed Gufo is paused at the next start, and resumes', async () => {
    const server = await startFileServer({ files: { 'model.gguf': MODEL } });
    const dataDir = join(tempDir(), 'home');
    const first = testBackend({ dataDir });
    const { id } = await first.api.startDownload({ url: `${server.url}/model.gguf` });
    await until(first, id);
    await first.api.removeDownload(id);
    // As a killed process leaves it: running, owned by a process that is gone, half its bytes on disk.
    const dead = spawnSync(process.execPath, ['-e', '0']).pid;
    const part = join(first.context.modelsDir, 'again.gguf.part');
    writeFileSync(part, MODEL.subarray(0, 500_000));
    first.context.db
      .prepare(
        `INSERT INTO downloads (url, file_name, path, part_path, bytes, total, status, owner_pid)
         VALUES (?, 'again.gguf', ?, ?, 400000, ?, 'running', ?)`,
      )
      .run(`${server.url}/model.gguf?again`, join(first.context.modelsDir, 'again.gguf'), part, MODEL.length, dead);
    await first.close();

    const second = testBackend({ dataDir });
    const [left] = await second.api.listDownloads();
    expect(left).toMatchObject({ status: 'paused', fileName: 'again.gguf' });
    await second.api.resumeDownload(left!.id);
    const done = await until(second, left!.id);
    expect(done.status).toBe('done');
    expect(readFileSync(done.path).equals(MODEL)).toBe(true);
    expect(server.requests.at(-1)).toMatchObject({ method: 'GET', range: 'bytes=500000-' });
  });

  it('runs two at a time, queues the rest, and cancels (deleting the partial file)', async () => {
    const files = Object.fromEntries(['a', 'b', 'c'].map((n) => [`${n}.gguf`, Buffer.concat([MODEL, Buffer.from(n)])]));
    const server = await startFileServer({ files, holdAfter: { bytes: 100_000 } });
    const b = testBackend();
    const [a, bb, c] = await Promise.all(
      ['a', 'b', 'c'].map((n) => b.api.startDownload({ url: `${server.url}/${n}.gguf` })),
    );
    await until(b, a!.id, ['running']);
    await until(b, bb!.id, ['running']);
    expect((await b.api.listDownloads()).find((d) => d.id === c!.id)?.status).toBe('queued');

    const cancelled = await b.api.cancelDownload(a!.id);
    expect(cancelled).toMatchObject({ status: 'cancelled', bytes: 0 });
    expect(existsSync(join(b.context.modelsDir, 'a.gguf.part'))).toBe(false);
    // Its slot goes to the one waiting.
    await until(b, c!.id, ['running']);
    server.release();
    expect((await until(b, bb!.id)).status).toBe('done');
    expect((await until(b, c!.id)).status).toBe('done');
    expect(modelsIn(b)).toEqual(['b.gguf', 'c.gguf']);
    await expect(b.api.resumeDownload(cancelled.id)).rejects.toThrow('a.gguf is cancelled: nothing to resume');
    await expect(b.api.removeDownload(9999)).rejects.toThrow('no download with id 9999');
  });

  it('never overwrites a file: a taken name gets a number', async () => {
    const server = await startFileServer({ files: { 'stories.gguf': MODEL } });
    const b = testBackend();
    const first = await until(b, (await b.api.startDownload({ url: `${server.url}/stories.gguf` })).id);
    await b.api.removeDownload(first.id);
    const second = await until(b, (await b.api.startDownload({ url: `${server.url}/stories.gguf` })).id);
    expect(second.path).toBe(join(b.context.modelsDir, 'stories-2.gguf'));
    // The same bytes twice are one model with two locations.
    expect(second.modelId).toBe(first.modelId);
    const model = await b.api.getModel(first.modelId!);
    expect(model.locations.map((l) => [l.path, l.source])).toEqual([
      [first.path, 'downloaded'],
      [second.path, 'downloaded'],
    ]);
  });
});
