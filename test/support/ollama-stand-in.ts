/**
 * A stand-in for an Ollama server on 127.0.0.1, answering the calls Gufo makes the way Ollama's
 * server does (server/routes.go, server/create.go): GET /api/version; HEAD /api/blobs/:digest
 * (400 for a malformed digest, 404 when absent); POST /api/blobs/:digest, which hashes what it
 * receives and refuses it with 400 "digest mismatch" when it is not the digest named; POST
 * /api/create, which checks the name and that every file's blob was uploaded and is a GGUF file,
 * then streams JSON status lines ending with "success". What it received is kept for the test.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { onTestFinished } from 'vitest';

export interface CreatedModel {
  model: string;
  files: Record<string, string>;
  template?: string;
  system?: string;
  parameters?: Record<string, unknown>;
  stream?: boolean;
}

export interface OllamaStandIn {
  url: string;
  /** Blobs by digest ("sha256:<hex>"). */
  blobs: Map<string, Buffer>;
  created: CreatedModel[];
  /** "METHOD /path" of every request. */
  requests: string[];
  close(): Promise<void>;
}

const DIGEST = /^sha256[:-][0-9a-f]{64}$/;
const NAME = /^(?:[A-Za-z0-9][A-Za-z0-9._-]*\/){0,2}[A-Za-z0-9][A-Za-z0-9._-]*(?::[A-Za-z0-9_][A-Za-z0-9._-]{0,79})?$/;

export async function startOllamaStandIn(version = '0.6.2'): Promise<OllamaStandIn> {
  const blobs = new Map<string, Buffer>();
  const created: CreatedModel[] = [];
  const requests: string[] = [];

  const server = createServer((req, res) => {
    void handle(req, res).catch((err: unknown) => json(res, 500, { error: String(err) }));
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    requests.push(`${req.method} ${path}`);
    const body = await readBody(req);
    if (req.method === 'GET' && path === '/api/version') return json(res, 200, { version });
    const blob = /^\/api\/blobs\/(.+)$/.exec(path);
    if (blob) {
      const digest = decodeURIComponent(blob[1]!).replace(/^sha256-/, 'sha256:');
      if (!DIGEST.test(digest)) return json(res, 400, { error: 'invalid digest format' });
      if (req.method === 'HEAD') return json(res, blobs.has(digest) ? 200 : 404, {});
      if (req.method === 'POST') {
        if (blobs.has(digest)) return json(res, 200, {});
        const actual = `sha256:${createHash('sha256').update(body).digest('hex')}`;
        if (actual !== digest)
          return json(res, 400, { error: `digest mismatch, expected "${digest}", got "${actual}"` });
        blobs.set(digest, body);
        return json(res, 201, {});
      }
    }
    if (req.method === 'POST' && path === '/api/create')
      return create(JSON.parse(body.toString('utf8')) as CreatedModel, res);
    json(res, 404, { error: `${req.method} ${path} not found` });
  }

  function create(request: CreatedModel, res: ServerResponse): void {
    if (typeof request.model !== 'string' || !NAME.test(request.model))
      return json(res, 400, { error: 'invalid model name' });
    if (!request.files || Object.keys(request.files).length === 0)
      return json(res, 400, { error: "neither 'from' or 'files' was specified" });
    for (const [file, digest] of Object.entries(request.files)) {
      if (file.includes('..') || file.startsWith('/')) return json(res, 400, { error: 'file path must be relative' });
      if (!blobs.has(digest))
        return json(res, 400, { error: `open blobs/${digest.replace(':', '-')}: no such file or directory` });
    }
    res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
    const line = (value: unknown) => res.write(`${JSON.stringify(value)}\n`);
    line({ status: 'parsing GGUF' });
    for (const digest of Object.values(request.files)) {
      if (blobs.get(digest)!.subarray(0, 4).toString('latin1') !== 'GGUF') {
        line({ error: 'supplied file was not in GGUF format', status: 400 });
        return void res.end();
      }
      line({ status: `using existing layer ${digest}` });
    }
    for (const field of ['template', 'system', 'parameters'] as const) {
      if (request[field] !== undefined)
        line({
          status: `creating new layer sha256:${createHash('sha256').update(JSON.stringify(request[field])).digest('hex')}`,
        });
    }
    line({ status: 'writing manifest' });
    created.push(request);
    line({ status: 'success' });
    res.end();
  }

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  onTestFinished(close);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, blobs, created, requests, close };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}
