/**
 * Downloads into the models folder: a few at a time (the rest wait, queued), with progress,
 * speed and time left as 'download' events, pause (the bytes so far are kept), resume (an HTTP
 * range request, also after a restart) and cancel (the partial file is deleted). A finished file
 * is checked before it joins the library: its SHA-256 against the one given or published, its
 * header as GGUF. Only then is `<name>.part` renamed to `<name>.gguf`.
 */
import { existsSync } from 'node:fs';
import { rename, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { DownloadRequest, DownloadsApi, DownloadView } from '../../src-preload/api';
import { ensureFreeSpace } from '../node/downloads/disk-space';
import { RateMeter } from '../node/downloads/rate';
import { resolveDownloadUrl } from '../node/downloads/source-url';
import { transfer } from '../node/downloads/transfer';
import { openGguf } from '../node/gguf-io';
import { reasonOf } from '../node/library/find-gguf-files';
import { DownloadStore, type DownloadRecord } from '../node/store/downloads';
import type { BackendContext } from './context';
import { isAbort } from './jobs';
import { libraryOf } from './library';
import { isProcessRunning } from '../node/data-dir-lock';
import { promised } from './promised';

/** Downloads at once; more wait in the queue. */
const PARALLEL_DOWNLOADS = 2;
/** Progress events at most this often per download (the database is written less often). */
const EVENT_EVERY_MS = 200;
const SAVE_EVERY_MS = 2000;

/** Why a running download was stopped. */
type StopReason = 'pause' | 'cancel' | 'close';

interface Active {
  controller: AbortController;
  stopping: StopReason | null;
  rate: RateMeter;
  done: Promise<void>;
}

export function createDownloadsApi(ctx: BackendContext): DownloadsApi {
  const store = new DownloadStore(ctx.db);
  store.recover(isProcessRunning);
  const active = new Map<number, Active>();
  let closed = false;
  // Starts from the clock so views made after a restart still come out later.
  let revision = Date.now() * 1000;

  const view = (record: DownloadRecord): DownloadView => {
    const rate = active.get(record.id)?.rate;
    const running = record.status === 'running';
    return {
      id: record.id,
      url: record.url,
      fileName: record.fileName,
      path: record.path,
      status: record.status,
      bytes: record.bytes,
      total: record.total,
      bytesPerSecond: running ? (rate?.bytesPerSecond ?? null) : null,
      etaSeconds: running ? (rate?.etaSeconds(record.bytes, record.total) ?? null) : null,
      sha256: record.sha256,
      sha256Source: record.sha256Source,
      error: record.error,
      modelId: record.modelId,
      createdAt: record.createdAt,
      updatedAt: record.updatedAt,
      revision: ++revision,
    };
  };

  const emit = (record: DownloadRecord) => ctx.events.emit({ type: 'download', download: view(record) });
  const update = (id: number, patch: Parameters<DownloadStore['update']>[1]) => {
    const record = store.update(id, patch);
    emit(record);
    return record;
  };

  function downloadOf(id: number): DownloadRecord {
    const record = typeof id === 'number' ? store.get(id) : undefined;
    if (!record) throw new Error(`no download with id ${String(id)}`);
    return record;
  }

  /** Starts queued downloads of this process while slots are free. */
  function pump(): void {
    if (closed) return;
    const queued = store
      .list()
      .reverse()
      .filter((d) => d.status === 'queued' && d.ownerPid === process.pid);
    for (const record of queued) {
      if (active.size >= PARALLEL_DOWNLOADS) return;
      run(record);
    }
  }

  function run(record: DownloadRecord): void {
    const entry: Active = {
      controller: new AbortController(),
      stopping: null,
      rate: new RateMeter(),
      done: Promise.resolve(),
    };
    active.set(record.id, entry);
    update(record.id, { status: 'running', error: null, ownerPid: process.pid });
    entry.done = download(record, entry)
      .catch((err: unknown) => finishStopped(record, entry, err))
      .finally(() => {
        active.delete(record.id);
        pump();
      });
  }

  async function download(record: DownloadRecord, entry: Active): Promise<void> {
    const { url } = resolveDownloadUrl(record.url, ctx.env);
    let lastEvent = 0;
    let lastSave = Date.now();
    let current = record;
    // Progress the throttle holds back is sent a little later, so a transfer that stalls still shows where it is.
    let pending: ReturnType<typeof setTimeout> | undefined;
    const flush = () => {
      pending = undefined;
      lastEvent = Date.now();
      if (active.get(record.id) === entry && store.get(record.id)?.status === 'running') emit(current);
    };
    const result = await transfer({
      url,
      partPath: record.partPath,
      etag: record.etag,
      signal: entry.controller.signal,
      onStart: async (start, have) => {
        if (start.total !== null) await ensureFreeSpace(ctx.modelsDir, start.total - have, record.fileName);
        const published = current.sha256Source !== 'given' && start.publishedSha256 !== null;
        current = update(record.id, {
          bytes: have,
          total: start.total,
          etag: start.etag,
          ...(published ? { sha256: start.publishedSha256, sha256Source: 'published' as const } : {}),
        });
      },
      onProgress: (bytes, total) => {
        entry.rate.sample(bytes);
        current = { ...current, bytes, total };
        const now = Date.now();
        if (now - lastSave >= SAVE_EVERY_MS) {
          lastSave = now;
          store.update(record.id, { bytes, total });
        }
        if (now - lastEvent >= EVENT_EVERY_MS) {
          clearTimeout(pending);
          flush();
        } else {
          pending ??= setTimeout(flush, EVENT_EVERY_MS - (now - lastEvent));
        }
      },
    }).finally(() => clearTimeout(pending));
    current = update(record.id, { status: 'verifying', bytes: result.bytes, total: result.bytes });
    if (current.sha256 !== null && current.sha256 !== result.sha256) {
      await discard(
        record,
        `${record.url}: the file's SHA-256 is ${result.sha256}, not the ${current.sha256Source} ${current.sha256}; the download was deleted`,
      );
      return;
    }
    const problem = ggufProblem(record.partPath);
    if (problem !== null) {
      await discard(record, `${record.url} is not a GGUF file (${problem}); the download was deleted`);
      return;
    }
    // The name may have been taken meanwhile (a file copied in): never overwrite it.
    const path = existsSync(record.path) ? freePath(record.fileName) : record.path;
    await rename(record.partPath, path);
    let modelId: number | null = null;
    try {
      const { added } = await libraryOf(ctx).addFiles([path], 'downloaded', { sha256: result.sha256 });
      modelId = added[0]?.id ?? ctx.models.byPath(path)?.id ?? null;
    } catch {
      // Gufo is closing: the file is in place and verified, and the next scan of the models folder adds it.
    }
    update(record.id, { status: 'done', path, modelId, ownerPid: null, sha256: result.sha256 });
  }

  /** A download that threw: stopped on purpose (paused, cancelled, closing), or failed. */
  async function finishStopped(record: DownloadRecord, entry: Active, err: unknown): Promise<void> {
    const bytes = await partSize(record.partPath);
    if (entry.stopping === 'cancel') {
      await unlink(record.partPath).catch(() => {});
      update(record.id, { status: 'cancelled', bytes: 0, ownerPid: null });
    } else if (entry.stopping !== null || isAbort(err, entry.controller.signal)) {
      update(record.id, { status: 'paused', bytes, ownerPid: null });
    } else {
      update(record.id, {
        status: 'failed',
        bytes,
        error: err instanceof Error ? err.message : String(err),
        ownerPid: null,
      });
    }
  }

  async function discard(record: DownloadRecord, error: string): Promise<void> {
    await unlink(record.partPath).catch(() => {});
    update(record.id, { status: 'failed', bytes: 0, error, ownerPid: null, etag: null });
  }

  /** `<name>.gguf` in the models folder, or `<name>-2.gguf`, … : one no file and no other download has. */
  function freePath(fileName: string): string {
    const taken = store.takenPaths();
    const stem = fileName.replace(/\.gguf$/i, '');
    for (let n = 1; ; n++) {
      const path = join(ctx.modelsDir, `${stem}${n === 1 ? '' : `-${n}`}.gguf`);
      if (!taken.has(path) && !existsSync(path) && !existsSync(`${path}.part`)) return path;
    }
  }

  function stop(id: number, reason: StopReason): Promise<void> {
    const entry = active.get(id);
    if (!entry) return Promise.resolve();
    entry.stopping = reason;
    entry.controller.abort(new Error(`download ${reason}d`));
    return entry.done;
  }

  function resumeDownload(id: number): DownloadView {
    const record = downloadOf(id);
    if (record.status === 'running' || record.status === 'verifying' || record.status === 'queued') {
      if (record.ownerPid !== process.pid)
        throw new Error(`${record.fileName} is being downloaded by another Gufo (process ${record.ownerPid})`);
      return view(record);
    }
    if (record.status !== 'paused' && record.status !== 'failed')
      throw new Error(`${record.fileName} is ${record.status}: nothing to resume`);
    update(id, { status: 'queued', error: null, ownerPid: process.pid });
    pump();
    return view(downloadOf(id));
  }

  ctx.onClose(async () => {
    closed = true;
    await Promise.all([...active.keys()].map((id) => stop(id, 'close')));
    // Queued ones are this process's no longer: paused, for whoever opens Gufo next (unless the
    // database is gone already, as after a crash: the next start pauses them).
    if (ctx.db.open) store.recover((pid) => pid !== process.pid && isProcessRunning(pid));
  });

  return promised<DownloadsApi>({
    startDownload(request: DownloadRequest) {
      if (typeof request?.url !== 'string' || request.url.trim() === '') throw new Error('startDownload needs a URL');
      const sha256 = request.sha256?.trim().toLowerCase() || null;
      if (sha256 !== null && !/^[0-9a-f]{64}$/.test(sha256))
        throw new Error(`"${request.sha256}" is not a SHA-256 (64 hexadecimal digits)`);
      const url = request.url.trim();
      const { fileName } = resolveDownloadUrl(url, ctx.env);
      const earlier = store.unfinished(url);
      if (earlier) {
        if (sha256 !== null) store.update(earlier.id, { sha256, sha256Source: 'given' });
        return resumeDownload(earlier.id);
      }
      const path = freePath(fileName);
      const record = store.create({
        url,
        fileName,
        path,
        partPath: `${path}.part`,
        sha256,
        sha256Source: sha256 === null ? null : 'given',
        status: 'queued',
        ownerPid: process.pid,
      });
      emit(record);
      pump();
      return view(store.get(record.id)!);
    },

    listDownloads() {
      return store.list().map(view);
    },

    async pauseDownload(id) {
      const record = downloadOf(id);
      if (active.has(id)) await stop(id, 'pause');
      else if (record.status === 'queued') update(id, { status: 'paused', ownerPid: null });
      return view(downloadOf(id));
    },

    resumeDownload,

    async cancelDownload(id) {
      const record = downloadOf(id);
      if (active.has(id)) await stop(id, 'cancel');
      else if (record.status !== 'done' && record.status !== 'cancelled') {
        await unlink(record.partPath).catch(() => {});
        update(id, { status: 'cancelled', bytes: 0, ownerPid: null });
      }
      return view(downloadOf(id));
    },

    async removeDownload(id) {
      const record = downloadOf(id);
      if (record.status !== 'done' && record.status !== 'failed' && record.status !== 'cancelled') {
        throw new Error(`${record.fileName} is ${record.status}: cancel it first`);
      }
      await unlink(record.partPath).catch(() => {});
      store.delete(id);
    },
  });
}

/** Why the file is not a readable GGUF, or null when it is. */
function ggufProblem(path: string): string | null {
  try {
    openGguf(path).file.close();
    return null;
  } catch (err) {
    return reasonOf(err);
  }
}

async function partSize(path: string): Promise<number> {
  return stat(path).then(
    (s) => s.size,
    () => 0,
  );
}

/** Whether a process with this id is running (signal 0 only checks). */
