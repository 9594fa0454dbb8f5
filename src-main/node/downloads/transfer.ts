/**
 * One file over HTTP(S) into a partial file, resumable: bytes already in the partial file are
 * kept and the rest is asked for with a range request (`Range: bytes=<have>-`, `If-Range` with
 * the server's validator). Every request (the HEAD probe as much as the GETs) is retried with
 * back-off when its connection drops or stalls, a GET from where it stopped; a server that answers
 * with the whole file, or whose file changed (another ETag), starts it over.
 * The SHA-256 is computed as the bytes arrive (after the bytes kept from before are read back).
 *
 * Hugging Face's resolve URLs redirect to a CDN and publish the file's size and SHA-256 (its LFS
 * oid) on the redirect as X-Linked-Size and X-Linked-Etag: the probe reads them there.
 */
import { createHash, type Hash } from 'node:crypto';
import { constants } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { hashFile } from '../library/sha256-file';

export interface TransferStart {
  /** Bytes of the whole file; null when the server does not say. */
  total: number | null;
  /** What identifies this version of the file (X-Linked-Etag, else ETag); null when the server gives none. */
  etag: string | null;
  /** The SHA-256 the server publishes for the file (Hugging Face's LFS oid), when it does. */
  publishedSha256: string | null;
}

export interface TransferOptions {
  url: string;
  partPath: string;
  /** The `etag` the bytes already in partPath came with; another one now means they are stale. */
  etag: string | null;
  signal: AbortSignal;
  /** Called when the server has answered, before a byte is written; throwing stops the transfer. */
  onStart(start: TransferStart, have: number): void | Promise<void>;
  /** Bytes in the partial file now; when reading back kept bytes, how far that has got. */
  onProgress: (bytes: number, total: number | null) => void;
  /** Tries in a row of one request that get no byte before giving up (default 5). */
  attempts?: number;
  /** Wait before the first retry, doubled for each next one (default 1000 ms). */
  retryDelayMs?: number;
  /** A connection that sends nothing for this long is dropped and retried (default 30 s). */
  stallMs?: number;
}

export interface TransferResult {
  bytes: number;
  etag: string | null;
  sha256: string;
}

/** An HTTP answer that is not the file; 5xx, 408 and 429 are worth retrying, the rest are not. */
export class HttpStatusError extends Error {
  override readonly name = 'HttpStatusError';
  /** What the server answered, without the URL. */
  readonly answer: string;
  constructor(
    readonly url: string,
    readonly status: number,
    statusText: string,
  ) {
    const answer = `the server answered ${status}${statusText ? ` ${statusText}` : ''}`;
    super(`${url}: ${answer}`);
    this.answer = answer;
  }

  get retryable(): boolean {
    return this.status >= 500 || this.status === 408 || this.status === 429;
  }
}

const MAX_REDIRECTS = 10;

export async function transfer(options: TransferOptions): Promise<TransferResult> {
  const { url, partPath, signal } = options;
  const head = await withRetries(options, () => probe(url, signal));
  let have = await stat(partPath).then(
    (s) => s.size,
    () => 0,
  );
  const stale =
    (options.etag !== null && head.etag !== null && options.etag !== head.etag) ||
    (head.total !== null && have > head.total);
  if (stale) have = 0;
  await options.onStart({ total: head.total, etag: head.etag, publishedSha256: head.publishedSha256 }, have);

  // O_CREAT without O_TRUNC: the bytes kept stay; writes are positioned.
  const handle = await open(partPath, constants.O_WRONLY | constants.O_CREAT);
  try {
    if (stale) await handle.truncate(0);
    const state = { position: have, hash: createHash('sha256'), total: head.total };
    if (have > 0)
      await hashFile(partPath, state.hash, have, { signal, onProgress: (n) => options.onProgress(n, head.total) });
    let before = 0;
    await withRetries(
      options,
      async () => {
        before = state.position;
        // Not complete without an error: the file had to start over; ask again at once.
        while (!(await fetchRest(options, head, handle, state))) signal.throwIfAborted();
      },
      () => state.position > before,
    );
    await handle.datasync();
    return { bytes: state.position, etag: head.etag, sha256: state.hash.digest('hex') };
  } finally {
    await handle.close();
  }
}

/**
 * The one retry policy of a transfer's requests: a try that fails for a reason worth retrying is
 * tried again after a back-off (retryDelayMs, doubled each time), up to `attempts` tries in a row
 * without progress; then the error names the URL and the cause chain.
 */
async function withRetries<T>(
  options: TransferOptions,
  request: () => Promise<T>,
  progressed: () => boolean = () => false,
): Promise<T> {
  const attempts = options.attempts ?? 5;
  const retryDelayMs = options.retryDelayMs ?? 1000;
  for (let failures = 0; ;) {
    options.signal.throwIfAborted();
    try {
      return await request();
    } catch (err) {
      if (options.signal.aborted || !worthRetrying(err)) throw err;
      failures = progressed() ? 1 : failures + 1;
      if (failures >= attempts)
        throw new Error(`${options.url}: ${describe(err)} (gave up after ${attempts} tries without progress)`, {
          cause: err,
        });
      await sleep(retryDelayMs * 2 ** (failures - 1), undefined, { signal: options.signal });
    }
  }
}

/** Errors that say `retryable: false` (an HTTP 404, a redirect loop) would fail the same way again. */
function worthRetrying(err: unknown): boolean {
  return !(err instanceof Error && 'retryable' in err && err.retryable === false);
}

interface Probe extends TransferStart {
  /** The final server's strong ETag, for If-Range. */
  rangeEtag: string | null;
}

/** HEAD, following redirects by hand so that headers on the way (Hugging Face's X-Linked-*) are seen. */
async function probe(url: string, signal: AbortSignal): Promise<Probe> {
  let linkedEtag: string | null = null;
  let linkedSize: number | null = null;
  let current = url;
  for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
    const response = await fetch(current, { method: 'HEAD', redirect: 'manual', signal });
    linkedEtag ??= unquote(response.headers.get('x-linked-etag'));
    linkedSize ??= sizeHeader(response.headers.get('x-linked-size'));
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      current = new URL(location, current).href;
      continue;
    }
    // A server without HEAD: the GET will say what it has to say.
    const answered = response.ok && response.status !== 405 && response.status !== 501;
    if (!response.ok && response.status !== 405 && response.status !== 501)
      throw new HttpStatusError(url, response.status, response.statusText);
    const etag = answered ? response.headers.get('etag') : null;
    return {
      total: linkedSize ?? (answered ? sizeHeader(response.headers.get('content-length')) : null),
      etag: linkedEtag ?? unquote(etag),
      publishedSha256: linkedEtag !== null && /^[0-9a-f]{64}$/.test(linkedEtag) ? linkedEtag : null,
      rangeEtag: etag !== null && !etag.startsWith('W/') ? etag : null,
    };
  }
  throw Object.assign(new Error(`${url}: more than ${MAX_REDIRECTS} redirects`), { retryable: false });
}

/**
 * One GET of what is missing; answers true when the file is complete. Throws when the connection
 * drops or stalls (the bytes received so far are kept).
 */
async function fetchRest(
  options: TransferOptions,
  head: Probe,
  handle: FileHandle,
  state: { position: number; hash: Hash; total: number | null },
): Promise<boolean> {
  const { url, signal } = options;
  const attempt = new AbortController();
  const stop = () => attempt.abort(signal.reason);
  signal.addEventListener('abort', stop, { once: true });
  let stall: ReturnType<typeof setTimeout> | undefined;
  const watchStall = () => {
    clearTimeout(stall);
    stall = setTimeout(
      () => attempt.abort(new Error(`no data for ${(options.stallMs ?? 30_000) / 1000} s`)),
      options.stallMs ?? 30_000,
    );
  };
  try {
    const headers: Record<string, string> = {};
    if (state.position > 0) {
      headers.Range = `bytes=${state.position}-`;
      if (head.rangeEtag) headers['If-Range'] = head.rangeEtag;
    }
    watchStall();
    const response = await fetch(url, { headers, signal: attempt.signal });
    if (response.status === 416) {
      // Nothing after `position`: complete if that is the file's size, else start over.
      await response.body?.cancel();
      if (rangeTotal(response.headers.get('content-range')) === state.position) return true;
      await restart(handle, state);
      return false;
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new HttpStatusError(url, response.status, response.statusText);
    }
    if (response.status === 206) {
      const start = /^bytes (\d+)-/.exec(response.headers.get('content-range') ?? '')?.[1];
      if (Number(start) !== state.position) {
        await response.body?.cancel();
        throw new Error(
          `asked for bytes from ${state.position}, the server sent ${response.headers.get('content-range') ?? 'no Content-Range'}`,
        );
      }
      state.total ??= rangeTotal(response.headers.get('content-range'));
    } else {
      // 200: the whole file (the server ignores ranges, or the file changed): start over.
      if (state.position > 0) await restart(handle, state);
      state.total ??= sizeHeader(response.headers.get('content-length'));
    }
    if (!response.body) throw new Error('the server sent no body');
    const reader = response.body.getReader();
    for (;;) {
      const { done, value: chunk } = await reader.read();
      if (done) break;
      watchStall();
      for (let written = 0; written < chunk.byteLength;) {
        const { bytesWritten } = await handle.write(
          chunk,
          written,
          chunk.byteLength - written,
          state.position + written,
        );
        written += bytesWritten;
      }
      state.hash.update(chunk);
      state.position += chunk.byteLength;
      options.onProgress(state.position, state.total);
    }
    if (state.total !== null && state.position < state.total)
      throw new Error(`the connection closed at byte ${state.position} of ${state.total}`);
    return true;
  } catch (err) {
    // The stall timer's reason, rather than fetch's generic "This operation was aborted".
    if (attempt.signal.aborted && !signal.aborted) throw attempt.signal.reason;
    throw err;
  } finally {
    clearTimeout(stall);
    signal.removeEventListener('abort', stop);
  }
}

async function restart(handle: FileHandle, state: { position: number; hash: Hash }): Promise<void> {
  await handle.truncate(0);
  state.position = 0;
  state.hash = createHash('sha256');
}

function sizeHeader(value: string | null): number | null {
  return value !== null && /^\d+$/.test(value.trim()) ? Number(value) : null;
}

/** The total N of `Content-Range: bytes a-b/N` (or of an unsatisfiable range, `bytes *\/N`). */
function rangeTotal(value: string | null): number | null {
  const total = /\/(\d+)\s*$/.exec(value ?? '')?.[1];
  return total === undefined ? null : Number(total);
}

function unquote(etag: string | null): string | null {
  return etag === null ? null : etag.replace(/^W\//, '').replace(/^"(.*)"$/, '$1');
}

/**
 * An error and its causes, each with its code: undici says only "fetch failed" (or "terminated"
 * for a connection dropped mid-body) and puts the reason in `cause` ("other side closed",
 * "read ECONNRESET").
 */
function describe(err: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && parts.length < 5; e = e instanceof Error ? e.cause : undefined) {
    if (!(e instanceof Error)) {
      // Whatever was thrown or given as the cause, as text.
      // eslint-disable-next-line @typescript-eslint/no-base-to-string
      parts.push(String(e));
      break;
    }
    const code = (e as NodeJS.ErrnoException).code;
    let text =
      e instanceof HttpStatusError ? e.answer : e.message === 'terminated' ? 'the connection dropped' : e.message;
    // Connecting to every address of a host fails as one AggregateError without a message.
    if (text === '' && e instanceof AggregateError)
      text = e.errors.map((one) => (one instanceof Error ? one.message : String(one))).join('; ');
    if (typeof code === 'string' && !text.includes(code)) text += ` (${code})`;
    parts.push(text);
  }
  return parts.join(': ');
}
