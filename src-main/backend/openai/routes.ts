/**
 * The API's routes: `GET /v1/models` (and `/v1/models/<id>`), `POST /v1/chat/completions`,
 * `POST /v1/completions`, `POST /v1/responses`, `POST /v1/embeddings` and `GET /metrics`, Ollama's API at `/` and `/api/*`
 * (ollama/routes.ts) and llama.cpp's `/health`, `/completion`, `/tokenize`, `/detokenize` (llamacpp/routes.ts), each behind the access rules, every answer counted, every error in its
 * API's shape. A client that disconnects cancels its request.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { readJson } from '../../node/server/json-body';
import { sendJson } from '../../node/server/http-server';
import type { MountedRoutes } from '../../node/server/index';
import { isLlamaPath, llamaErrorBody, llamaRoute } from '../llamacpp/routes';
import { isOllamaPath, ollamaEndpoint, ollamaErrorBody, ollamaRoute } from '../ollama/routes';
import { CHAT_COMPLETIONS } from './chat-completions';
import { COMPLETIONS } from './completions';
import { serveOpenAiEmbeddings } from './embeddings';
import { OpenAiError, invalidParam, modelNotFound, toOpenAiError } from './errors';
import type { ServedModel } from './model-ids';
import { checkAccess } from './security';
import { serveResponses } from './responses';
import { serveGeneration } from './serve-generation';
import type { OpenAiService } from './service';

export interface RouteOptions {
  /** The port to check the Host header against (a loopback listener of its own); null when the server in front checks it. */
  hostPort(): number | null;
}

type Generating = (service: OpenAiService, body: unknown, res: ServerResponse, signal: AbortSignal) => Promise<number>;

const GENERATING: Record<string, Generating> = {
  '/v1/chat/completions': (service, body, res, signal) => serveGeneration(service, CHAT_COMPLETIONS, body, res, signal),
  '/v1/completions': (service, body, res, signal) => serveGeneration(service, COMPLETIONS, body, res, signal),
  '/v1/responses': serveResponses,
};

const EMBEDDINGS = '/v1/embeddings';

/** The metrics' name for a path (a fixed few, whatever clients ask for). */
function endpointOf(pathname: string): string {
  if (isOllamaPath(pathname)) return ollamaEndpoint(pathname);
  if (pathname.startsWith('/v1/models/')) return '/v1/models/{id}';
  if (pathname.startsWith('/v1/responses/')) return '/v1/responses/{id}';
  return Object.hasOwn(GENERATING, pathname) ||
    isLlamaPath(pathname) ||
    pathname === EMBEDDINGS ||
    pathname === '/v1/models' ||
    pathname === '/metrics'
    ? pathname
    : 'other';
}

/** The routes, for a server to mount (the UI's, in `gufo serve`) or to serve alone. */
export function openAiRoutes(service: OpenAiService, options: RouteOptions): MountedRoutes {
  return {
    // `/` on a server that also serves the app's page: the page for a browser, Ollama's "is running" for API clients.
    matches: (pathname, req) =>
      pathname === '/metrics' ||
      pathname === '/v1' ||
      pathname.startsWith('/v1/') ||
      isLlamaPath(pathname) ||
      (pathname === '/' ? !wantsPage(req) : isOllamaPath(pathname)),
    handle: async (req, res) => {
      const { pathname } = new URL(req.url ?? '/', 'http://127.0.0.1');
      const endpoint = endpointOf(pathname);
      res.setHeader('X-Content-Type-Options', 'nosniff');
      res.setHeader('Cache-Control', 'no-store');
      let status: number;
      try {
        const { apiKey, origins } = service.limits();
        status = checkAccess(req, res, { hostPort: options.hostPort(), apiKey, origins })
          ? 204
          : await route(service, req, res, pathname);
      } catch (err) {
        const error = toOpenAiError(err);
        if (error.status >= 500 && error.code === 'internal_error')
          console.error(`gufo: ${req.method} ${pathname} failed:`, err);
        if (res.headersSent) res.destroy();
        else sendJson(res, error.status, errorBody(pathname, error));
        status = error.status;
      }
      service.metrics.request(endpoint, status);
    },
  };
}

async function route(
  service: OpenAiService,
  req: IncomingMessage,
  res: ServerResponse,
  pathname: string,
): Promise<number> {
  if (isLlamaPath(pathname))
    return llamaRoute(service, req, res, pathname, () => readBody(service, req, res), clientGone(res));
  if (isOllamaPath(pathname))
    return ollamaRoute(service, req, res, pathname, () => readBody(service, req, res), clientGone(res));
  if (Object.hasOwn(GENERATING, pathname)) {
    expectMethod(req, 'POST');
    return GENERATING[pathname]!(service, await readBody(service, req, res), res, clientGone(res));
  }
  if (pathname === EMBEDDINGS) {
    expectMethod(req, 'POST');
    return serveOpenAiEmbeddings(service, await readBody(service, req, res), res);
  }
  if (pathname === '/v1/models') {
    expectMethod(req, 'GET');
    sendJson(res, 200, { object: 'list', data: (await service.models()).map(modelObject) });
    return 200;
  }
  if (pathname.startsWith('/v1/models/')) {
    expectMethod(req, 'GET');
    const id = decodedOrNull(pathname.slice('/v1/models/'.length));
    if (id === null) throw modelNotFound(pathname.slice('/v1/models/'.length));
    sendJson(res, 200, modelObject(await service.resolve(id)));
    return 200;
  }
  if (pathname.startsWith('/v1/responses/')) {
    // Retrieving, cancelling or deleting a response, or listing its input items: nothing was kept.
    throw new OpenAiError(
      404,
      'not_found_error',
      'response_not_found',
      "Gufo keeps no responses (its Responses API is stateless, as Ollama's): a response can be read only from the request that made it",
    );
  }
  if (pathname === '/metrics') {
    expectMethod(req, 'GET');
    const text = service.metrics.render();
    res.writeHead(200, {
      'Content-Type': 'text/plain; version=0.0.4; charset=utf-8',
      'Content-Length': Buffer.byteLength(text),
    });
    res.end(text);
    return 200;
  }
  throw new OpenAiError(404, 'invalid_request_error', 'unknown_url', `no such route: ${req.method} ${pathname}`);
}

/** An error in the shape of the API the path belongs to. */
function errorBody(pathname: string, error: OpenAiError): object {
  if (isOllamaPath(pathname)) return ollamaErrorBody(error);
  if (isLlamaPath(pathname)) return llamaErrorBody(error);
  return error.body;
}

/** The request's JSON body: 413 over the limit, 400 when not JSON. */
async function readBody(service: OpenAiService, req: IncomingMessage, res: ServerResponse): Promise<unknown> {
  const body = await readJson(req, service.limits().maxBodyBytes);
  if (body === undefined) {
    // The rest of the body was never read: the connection cannot carry another request.
    res.setHeader('Connection', 'close');
    throw new OpenAiError(
      413,
      'invalid_request_error',
      'request_too_large',
      `the request body is over ${service.limits().maxBodyBytes} bytes`,
    );
  }
  if (body === null) throw invalidParam('body', 'the request body is not valid JSON', 'invalid_json');
  return body;
}

/** A browser navigating to the page (it asks for HTML); API clients and Ollama's heartbeat do not. */
function wantsPage(req: IncomingMessage): boolean {
  return req.headers.accept?.includes('text/html') ?? false;
}

function expectMethod(req: IncomingMessage, method: 'GET' | 'POST'): void {
  if (req.method !== method)
    throw new OpenAiError(405, 'invalid_request_error', 'method_not_allowed', `use ${method} for this route`);
}

/** Aborts when the client goes away before its answer is complete. */
function clientGone(res: ServerResponse): AbortSignal {
  const left = new AbortController();
  res.on('close', () => {
    if (!res.writableFinished) left.abort();
  });
  return left.signal;
}

/** A path segment decoded (ids hold ":" and such), null when its escapes are malformed. */
function decodedOrNull(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}

function modelObject({ id, entry }: ServedModel) {
  return { id, object: 'model', created: Math.floor(entry.mtimeMs / 1000), owned_by: 'gufo' };
}
