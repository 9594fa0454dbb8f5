import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { GufoApi } from '../../../src-preload/api';
import { callApi } from './api-route';
import { streamEvents, type EventSource } from './event-stream';
import { hostAllowed, newToken, tokenPresented } from './guard';
import { resolveStaticFile, sendFile } from './static-files';

export interface ServerOptions {
  /** 0 picks any free port. */
  port: number;
  /** Loopback only: the API must never be reachable from the network. */
  host: '127.0.0.1';
  /** The built renderer (out/renderer). */
  rendererDir: string;
  api: GufoApi;
  events: EventSource;
}

export interface RunningServer {
  port: number;
  token: string;
  /** The address to open: carries the token, which the page sends back on every API call. */
  url: string;
  close(): Promise<void>;
}

/**
 * Browser mode: serves the renderer and binds GufoApi over HTTP on 127.0.0.1: `POST /api/<method>`
 * for calls, `GET /api/events` (Server-Sent Events) for what the back end pushes. Static files are
 * public; every API call must present the launch token.
 */
export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const { api, events } = options;
  const token = newToken();
  let port = options.port;

  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // The page URL holds the token: never send it anywhere as a referrer.
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    res.setHeader('Cache-Control', 'no-store');
    if (!hostAllowed(req, port)) return sendJson(res, 403, { error: 'unexpected Host header' });

    const { pathname, searchParams } = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (pathname === '/api/events' && req.method === 'GET') {
      if (!tokenPresented(req, token, searchParams.get('token'))) return sendJson(res, 401, { error: 'missing or wrong token' });
      return streamEvents(req, res, events);
    }
    if (pathname.startsWith('/api/')) {
      if (!tokenPresented(req, token)) return sendJson(res, 401, { error: 'missing or wrong x-gufo-token' });
      const reply = await callApi(api, req, pathname.slice('/api/'.length));
      // The rest of an oversized body was never read: the connection cannot carry another request.
      if (reply.status === 413) res.setHeader('Connection', 'close');
      return sendJson(res, reply.status, reply.body);
    }

    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'use GET' });
    const file = await resolveStaticFile(options.rendererDir, pathname);
    if (!file) return sendJson(res, 404, { error: 'not found' });
    await sendFile(res, file, req.method === 'HEAD');
  }

  const server = createServer((req, res) => {
    route(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  port = (server.address() as AddressInfo).port;

  return {
    port,
    token,
    url: `http://${options.host}:${port}/?token=${token}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Idle keep-alive connections would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}
