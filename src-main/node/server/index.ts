import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GufoApi } from '../../../src-preload/api';
import { UI_API_PREFIX, UI_EVENTS_PATH } from '../../../src-preload/api/http-paths';
import { callApi } from './api-route';
import { streamEvents, type EventSource } from './event-stream';
import { hostAllowed, newToken, originAllowed, tokenPresented } from './guard';
import { listen, sendJson, type RequestHandler } from './http-server';
import { resolveStaticFile, sendFile } from './static-files';

/** Routes answered by another handler with its own security (the OpenAI-compatible and Ollama APIs). */
export interface MountedRoutes {
  /** `req` tells a browser asking for the page at `/` from an API client asking whether the server runs. */
  matches(pathname: string, req: IncomingMessage): boolean;
  /** Called after the Host check (DNS rebinding); everything else is up to it. */
  handle: RequestHandler;
}

export interface ServerOptions {
  /** 0 picks any free port. */
  port: number;
  /** Loopback only: the API must never be reachable from the network. */
  host: '127.0.0.1';
  /** The built renderer (out/renderer). */
  rendererDir: string;
  api: GufoApi;
  events: EventSource;
  /** Served on the same port, without the launch token (`/v1/*`, `/metrics`, Ollama's `/api/*`). */
  mounted?: MountedRoutes;
}

export interface RunningServer {
  port: number;
  token: string;
  /** The address to open: carries the token, which the page sends back on every API call. */
  url: string;
  close(): Promise<void>;
}

/**
 * Browser mode: serves the renderer and binds GufoApi over HTTP on 127.0.0.1: `POST /gufo/api/<method>`
 * for calls, `GET /gufo/api/events` (Server-Sent Events) for what the back end pushes. Static files are
 * public; every API call must present the launch token and come from a program or this server's
 * own page. `mounted` routes (the OpenAI-compatible and Ollama APIs) share the port and the Host
 * check, and bring their own security.
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
    if (options.mounted?.matches(pathname, req)) return options.mounted.handle(req, res);
    if (pathname.startsWith(UI_API_PREFIX) && !originAllowed(req))
      return sendJson(res, 403, { error: "requests from other sites' pages are refused" });
    if (pathname === UI_EVENTS_PATH && req.method === 'GET') {
      // The header as on every API call, or the query parameter, since EventSource cannot set headers.
      if (!tokenPresented(req, token) && !tokenPresented(req, token, searchParams.get('token')))
        return sendJson(res, 401, { error: 'missing or wrong token' });
      return streamEvents(req, res, events);
    }
    if (pathname.startsWith(UI_API_PREFIX)) {
      if (!tokenPresented(req, token)) return sendJson(res, 401, { error: 'missing or wrong x-gufo-token' });
      const reply = await callApi(api, req, pathname.slice(UI_API_PREFIX.length));
      // The rest of an oversized body was never read: the connection cannot carry another request.
      if (reply.status === 413) res.setHeader('Connection', 'close');
      return sendJson(res, reply.status, reply.body);
    }

    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'use GET' });
    const file = await resolveStaticFile(options.rendererDir, pathname);
    if (!file) return sendJson(res, 404, { error: 'not found' });
    await sendFile(res, file, req.method === 'HEAD');
  }

  const listening = await listen(route, options.port, options.host);
  port = listening.port;

  return {
    port,
    token,
    url: `http://${options.host}:${port}/?token=${token}`,
    close: () => listening.close(),
  };
}
