/**
 * A real HTTP server on 127.0.0.1 that serves files the way download servers do: HEAD, ranges
 * (206, If-Range, 416), ETags, and Hugging Face's resolve URLs (a 302 to a CDN path carrying
 * X-Linked-Etag = the file's SHA-256 and X-Linked-Size). It can misbehave on purpose: drop the
 * connection part way, hold a response until released, ignore ranges, lie about sizes.
 * Closed when the test finishes.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface ServedRequest {
  method: string;
  path: string;
  range: string | null;
}

export interface FileServerOptions {
  /** URL path → bytes. With `huggingFace`, keys are "org/repo/file" (served at /org/repo/resolve/<rev>/file). */
  files: Record<string, Buffer>;
  huggingFace?: boolean;
  /** The first `dropHeads` HEAD requests get no answer: the server closes the connection. */
  dropHeads?: number;
  /** The first `times` GETs of a file send `bytes` bytes of the body, then the server closes the connection. */
  dropAfter?: { bytes: number; times: number };
  /** GETs send `bytes` bytes then wait, holding the connection, until release() (or the client leaves). */
  holdAfter?: { bytes: number };
  /** Answer every GET with the whole file (200), as servers without range support do. */
  noRanges?: boolean;
  /** Content-Length (and X-Linked-Size) to claim, whatever the file's size. */
  claimSize?: number;
  /** ETag of a file (default: its SHA-256 prefix). */
  etag?: (path: string) => string;
}

export interface FileServer {
  url: string;
  requests: ServedRequest[];
  /** Lets held responses go on, and later ones are not held. */
  release(): void;
  close(): Promise<void>;
}

export const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

export async function startFileServer(options: FileServerOptions): Promise<FileServer> {
  const requests: ServedRequest[] = [];
  const drops = new Map<string, number>();
  let headsDropped = 0;
  let releaseHeld: () => void = () => {};
  const held = new Promise<void>((resolve) => (releaseHeld = resolve));
  let released = false;
  const byCdnPath = new Map(Object.values(options.files).map((bytes) => [`/cdn/${sha256Of(bytes)}`, bytes]));
  const etagOf = (path: string, bytes: Buffer) => `"${options.etag?.(path) ?? sha256Of(bytes).slice(0, 16)}"`;

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname);
    requests.push({ method: req.method ?? '', path, range: req.headers.range ?? null });
    if (req.method === 'HEAD' && headsDropped < (options.dropHeads ?? 0)) {
      headsDropped++;
      return req.socket.destroy();
    }
    if (options.huggingFace) {
      const resolve = /^\/([^/]+)\/([^/]+)\/resolve\/[^/]+\/(.+)$/.exec(path);
      if (resolve) {
        const bytes = options.files[`${resolve[1]}/${resolve[2]}/${resolve[3]}`];
        if (!bytes) return notFound(res);
        res.writeHead(302, {
          Location: `/cdn/${sha256Of(bytes)}`,
          'X-Linked-Etag': `"${sha256Of(bytes)}"`,
          'X-Linked-Size': String(options.claimSize ?? bytes.length),
          'X-Repo-Commit': 'a'.repeat(40),
        });
        return res.end();
      }
    }
    const bytes = options.huggingFace ? byCdnPath.get(path) : options.files[path.slice(1)];
    if (!bytes) return notFound(res);
    const etag = etagOf(path, bytes);
    const size = options.claimSize ?? bytes.length;
    const common = {
      ETag: etag,
      'Accept-Ranges': options.noRanges ? 'none' : 'bytes',
      'Content-Type': 'application/octet-stream',
    };
    if (req.method === 'HEAD') {
      res.writeHead(200, { ...common, 'Content-Length': String(size) });
      return res.end();
    }
    let start = 0;
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const ifRange = req.headers['if-range'];
    if (range && !options.noRanges && (ifRange === undefined || ifRange === etag)) {
      start = Number(range[1]);
      if (start >= bytes.length) {
        res.writeHead(416, { 'Content-Range': `bytes */${bytes.length}` });
        return res.end();
      }
      res.writeHead(206, {
        ...common,
        'Content-Length': String(size - start),
        'Content-Range': `bytes ${start}-${size - 1}/${size}`,
      });
    } else {
      res.writeHead(200, { ...common, 'Content-Length': String(size) });
    }
    void send(res, path, bytes.subarray(start));
  });

  async function send(res: ServerResponse, path: string, body: Buffer): Promise<void> {
    const dropped = drops.get(path) ?? 0;
    if (options.dropAfter && dropped < options.dropAfter.times) {
      drops.set(path, dropped + 1);
      // Closed (FIN) once the bytes are out: the client has them all, then the connection ends early.
      res.write(body.subarray(0, options.dropAfter.bytes), () => res.socket?.end());
      return;
    }
    if (options.holdAfter && !released && body.length > options.holdAfter.bytes) {
      res.write(body.subarray(0, options.holdAfter.bytes));
      await held;
      if (!res.destroyed) res.end(body.subarray(options.holdAfter.bytes));
      return;
    }
    res.end(body);
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () =>
    new Promise<void>((resolve) => {
      releaseHeld();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  onTestFinished(close);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    release() {
      released = true;
      releaseHeld();
    },
    close,
  };
}

function notFound(res: ServerResponse): void {
  res.writeHead(404, { 'Content-Type': 'text/plain' });
  res.end('not found');
}
