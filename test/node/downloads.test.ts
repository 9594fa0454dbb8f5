import { randomBytes } from 'node:crypto';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RateMeter } from '../../src-main/node/downloads/rate';
import { resolveDownloadUrl } from '../../src-main/node/downloads/source-url';
import { transfer, type TransferOptions, type TransferStart } from '../../src-main/node/downloads/transfer';
import { sha256Of, startFileServer } from '../support/http-file-server';
import { tempDir } from '../support/temp';

const FILE = randomBytes(300_000);

function options(url: string, partPath: string, patch: Partial<TransferOptions> = {}) {
  const starts: { start: TransferStart; have: number }[] = [];
  const progress: number[] = [];
  const opts: TransferOptions = {
    url,
    partPath,
    etag: null,
    signal: new AbortController().signal,
    onStart: (start, have) => void starts.push({ start, have }),
    onProgress: (bytes) => void progress.push(bytes),
    retryDelayMs: 10,
    ...patch,
  };
  return { opts, starts, progress };
}

describe('transfer', () => {
  it('resumes with range requests after the connection drops mid-file, and hashes every byte', async () => {
    const server = await startFileServer({ files: { 'model.gguf': FILE }, dropAfter: { bytes: 100_000, times: 2 } });
    const part = join(tempDir(), 'model.gguf.part');
    const { opts, starts, progress } = options(`${server.url}/model.gguf`, part);
    const result = await transfer(opts);
    expect(result.bytes).toBe(FILE.length);
    expect(result.sha256).toBe(sha256Of(FILE));
    expect(readFileSync(part).equals(FILE)).toBe(true);
    expect(starts).toEqual([
      { start: { total: FILE.length, etag: sha256Of(FILE).slice(0, 16), publishedSha256: null }, have: 0 },
    ]);
    // Each retry asks for the rest, from the bytes it has (fetch may lose the last unread chunks of a dropped stream).
    expect(server.requests.map((r) => r.method)).toEqual(['HEAD', 'GET', 'GET', 'GET']);
    const starts2 = server.requests.slice(2).map((r) => Number(/^bytes=(\d+)-$/.exec(r.range ?? '')?.[1]));
    expect(starts2[0]).toBeGreaterThan(0);
    expect(starts2[0]).toBeLessThanOrEqual(100_000);
    expect(starts2[1]).toBeGreaterThan(starts2[0]!);
    expect(starts2[1]).toBeLessThanOrEqual(starts2[0]! + 100_000);
    expect(progress.at(-1)).toBe(FILE.length);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
  });

  it('keeps the bytes of an earlier run: asks only for the rest, and hashes the kept part too', async () => {
    const server = await startFileServer({ files: { 'model.gguf': FILE } });
    const part = join(tempDir(), 'model.gguf.part');
    writeFileSync(part, FILE.subarray(0, 123_456));
    const { opts, starts } = options(`${server.url}/model.gguf`, part, { etag: sha256Of(FILE).slice(0, 16) });
    const result = await transfer(opts);
    expect(result.sha256).toBe(sha256Of(FILE));
    expect(starts[0]!.have).toBe(123_456);
    expect(server.requests.filter((r) => r.method === 'GET').map((r) => r.range)).toEqual(['bytes=123456-']);
    expect(readFileSync(part).equals(FILE)).toBe(true);
  });

  it('starts over when the file changed on the server (another ETag), or the server ignores ranges', async () => {
    const changed = await startFileServer({ files: { 'm.gguf': FILE } });
    const part = join(tempDir(), 'm.gguf.part');
    writeFileSync(part, randomBytes(50_000));
    const first = options(`${changed.url}/m.gguf`, part, { etag: 'an-older-version' });
    expect((await transfer(first.opts)).sha256).toBe(sha256Of(FILE));
    expect(first.starts[0]!.have).toBe(0);
    expect(changed.requests.filter((r) => r.method === 'GET').map((r) => r.range)).toEqual([null]);

    const noRanges = await startFileServer({ files: { 'm.gguf': FILE }, noRanges: true });
    const other = join(tempDir(), 'm.gguf.part');
    writeFileSync(other, randomBytes(50_000));
    const second = options(`${noRanges.url}/m.gguf`, other);
    expect((await transfer(second.opts)).sha256).toBe(sha256Of(FILE));
    expect(statSync(other).size).toBe(FILE.length);
  });

  it('reads the size and SHA-256 Hugging Face publishes on its redirect', async () => {
    const server = await startFileServer({ files: { 'org/repo/m.gguf': FILE }, huggingFace: true });
    const part = join(tempDir(), 'm.gguf.part');
    const { opts, starts } = options(`${server.url}/org/repo/resolve/main/m.gguf`, part);
    await transfer(opts);
    expect(starts[0]!.start).toEqual({ total: FILE.length, etag: sha256Of(FILE), publishedSha256: sha256Of(FILE) });
    expect(server.requests.map((r) => [r.method, r.path])).toEqual([
      ['HEAD', '/org/repo/resolve/main/m.gguf'],
      ['HEAD', `/cdn/${sha256Of(FILE)}`],
      ['GET', '/org/repo/resolve/main/m.gguf'],
      ['GET', `/cdn/${sha256Of(FILE)}`],
    ]);
  });

  it('gives up after tries without progress, names the URL, and stops at once when aborted', async () => {
    const server = await startFileServer({ files: { 'm.gguf': FILE }, dropAfter: { bytes: 0, times: 100 } });
    const { opts } = options(`${server.url}/m.gguf`, join(tempDir(), 'm.part'), { attempts: 3 });
    await expect(transfer(opts)).rejects.toThrow(`${server.url}/m.gguf: the connection dropped`);
    expect(server.requests.filter((r) => r.method === 'GET')).toHaveLength(3);

    await expect(transfer(options(`${server.url}/missing.gguf`, join(tempDir(), 'x.part')).opts)).rejects.toThrow(
      `${server.url}/missing.gguf: the server answered 404 Not Found`,
    );

    const held = await startFileServer({ files: { 'm.gguf': FILE }, holdAfter: { bytes: 1000 } });
    const controller = new AbortController();
    const { opts: abortable } = options(`${held.url}/m.gguf`, join(tempDir(), 'held.part'), {
      signal: controller.signal,
      onProgress: () => controller.abort(new Error('paused')),
    });
    await expect(transfer(abortable)).rejects.toThrow('paused');
  });

  it('retries the first request (the HEAD probe) too when its connection drops', async () => {
    const server = await startFileServer({ files: { 'm.gguf': FILE }, dropHeads: 2 });
    const part = join(tempDir(), 'm.part');
    const { opts, starts } = options(`${server.url}/m.gguf`, part);
    expect((await transfer(opts)).sha256).toBe(sha256Of(FILE));
    expect(starts[0]!.start.total).toBe(FILE.length);
    expect(server.requests.map((r) => r.method)).toEqual(['HEAD', 'HEAD', 'HEAD', 'GET']);
  });

  it('names the URL and the cause when every try of a request drops', async () => {
    const server = await startFileServer({ files: { 'm.gguf': FILE }, dropHeads: 100 });
    const { opts } = options(`${server.url}/m.gguf`, join(tempDir(), 'm.part'), { attempts: 3 });
    await expect(transfer(opts)).rejects.toThrow(
      `${server.url}/m.gguf: fetch failed: other side closed (UND_ERR_SOCKET) (gave up after 3 tries without progress)`,
    );
    expect(server.requests.map((r) => r.method)).toEqual(['HEAD', 'HEAD', 'HEAD']);
  });

  it('drops a connection that stalls and goes on from where it was', async () => {
    // Every answer sends 70,000 bytes, then holds the connection open with nothing more.
    const server = await startFileServer({ files: { 'm.gguf': FILE }, holdAfter: { bytes: 70_000 } });
    const part = join(tempDir(), 'm.part');
    // A stall is time without data: long enough that a busy machine's pause between a request and
    // its bytes is not taken for one (timers run before the socket is read when the process wakes).
    const result = await transfer(options(`${server.url}/m.gguf`, part, { stallMs: 1000 }).opts);
    expect(result.sha256).toBe(sha256Of(FILE));
    expect(server.requests.filter((r) => r.method === 'GET').map((r) => r.range)).toEqual([
      null,
      'bytes=70000-',
      'bytes=140000-',
      'bytes=210000-',
      'bytes=280000-',
    ]);
  });
});

describe('download URLs', () => {
  it('reads hf:// URLs from HF_ENDPOINT, with an optional revision, and file pages copied from the browser', () => {
    expect(resolveDownloadUrl('hf://Qwen/Qwen3-0.6B-GGUF/Qwen3-0.6B-Q8_0.gguf', {})).toEqual({
      url: 'https://huggingface.co/Qwen/Qwen3-0.6B-GGUF/resolve/main/Qwen3-0.6B-Q8_0.gguf',
      fileName: 'Qwen3-0.6B-Q8_0.gguf',
    });
    expect(
      resolveDownloadUrl('hf://org/repo@v1.0/sub dir/m.gguf', { HF_ENDPOINT: 'http://127.0.0.1:9/mirror/' }),
    ).toEqual({
      url: 'http://127.0.0.1:9/mirror/org/repo/resolve/v1.0/sub%20dir/m.gguf',
      fileName: 'm.gguf',
    });
    expect(resolveDownloadUrl('https://huggingface.co/org/repo/blob/main/m.gguf', {}).url).toBe(
      'https://huggingface.co/org/repo/resolve/main/m.gguf',
    );
    expect(resolveDownloadUrl('http://host/files/weights.bin?x=1', {})).toEqual({
      url: 'http://host/files/weights.bin?x=1',
      fileName: 'weights.bin.gguf',
    });
  });

  it('saves under a name without bidi controls or other format characters', () => {
    // U+202E shows what follows mirrored: "evil\u202Efug.gguf" reads as "evilfugg.guf".
    expect(resolveDownloadUrl('https://host/files/evil%E2%80%AEfug.gguf', {}).fileName).toBe('evilfug.gguf');
    expect(resolveDownloadUrl('hf://org/repo/a\u2066b\u2069c\u202Ad\u200Be\uFEFF.gguf', {}).fileName).toBe(
      'abcde.gguf',
    );
    expect(() => resolveDownloadUrl('https://host/%E2%80%AE%E2%81%A6', {})).toThrow('the URL does not name a file');
  });

  it('refuses what it cannot download, saying why', () => {
    expect(() => resolveDownloadUrl('hf://org/m.gguf', {})).toThrow(
      'hf://org/m.gguf: an hf:// URL names a file in a repository',
    );
    expect(() => resolveDownloadUrl('hf://org/repo/../m.gguf', {})).toThrow('an hf:// URL names a file');
    expect(() => resolveDownloadUrl('ftp://host/m.gguf', {})).toThrow(
      'ftp://host/m.gguf: only http(s):// and hf:// URLs can be downloaded',
    );
    expect(() => resolveDownloadUrl('model.gguf', {})).toThrow('"model.gguf" is not a URL');
    expect(() => resolveDownloadUrl('https://host/', {})).toThrow('https://host/: the URL does not name a file');
  });
});

describe('RateMeter', () => {
  it('follows the recent speed and says the time left at it', () => {
    const meter = new RateMeter();
    expect(meter.bytesPerSecond).toBeNull();
    meter.sample(0, 0);
    meter.sample(1000, 100); // too soon after the last sample: ignored
    expect(meter.bytesPerSecond).toBeNull();
    meter.sample(10_000, 1000);
    expect(meter.bytesPerSecond).toBe(10_000);
    expect(meter.etaSeconds(10_000, 110_000)).toBe(10);
    // Twice as fast for a long while: the average comes close to the new speed.
    for (let t = 2000, bytes = 10_000; t <= 60_000; t += 1000) meter.sample((bytes += 20_000), t);
    expect(meter.bytesPerSecond).toBeGreaterThan(19_900);
    expect(meter.bytesPerSecond).toBeLessThan(20_000);
    expect(meter.etaSeconds(0, null)).toBeNull();
  });
});
