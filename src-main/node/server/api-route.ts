import type { IncomingMessage } from 'node:http';
import { isApiMethod, type GufoApi } from '../../../src-preload/api';

/** Requests carry a few JSON arguments; anything larger is a mistake or an attack. */
const MAX_BODY_BYTES = 1 << 20;

export interface ApiReply {
  status: number;
  body: unknown;
}

/**
 * `POST /api/<method>` with a JSON array of arguments: calls that GufoApi method and answers
 * `{ result }`, or `{ error }` when the method threw — with status 200, as JSON-RPC does: the call
 * itself worked, and a refused request (a bad setting, a missing model) is not a failed page load
 * in the browser's console. Requests that are themselves wrong get a 4xx status and `{ error }`.
 * The caller has already checked the token.
 */
export async function callApi(api: GufoApi, req: IncomingMessage, name: string): Promise<ApiReply> {
  if (req.method !== 'POST') return { status: 405, body: { error: 'use POST' } };
  if (!isApiMethod(name)) return { status: 404, body: { error: `no API method "${name}"` } };
  const args = await readJson(req);
  if (args === undefined) return { status: 413, body: { error: `body over ${MAX_BODY_BYTES} bytes` } };
  if (!Array.isArray(args)) return { status: 400, body: { error: 'body must be a JSON array of arguments' } };
  try {
    const method = api[name] as (...a: unknown[]) => Promise<unknown>;
    return { status: 200, body: { result: (await method.apply(api, args)) ?? null } };
  } catch (err) {
    return { status: 200, body: { error: err instanceof Error ? err.message : String(err) } };
  }
}

/**
 * The parsed body (an empty body is no arguments), null when not JSON, undefined when over
 * `maxBytes`: announced so in Content-Length (refused before a byte of it is read), or found so
 * while reading a chunked one. The caller answers 413 and closes the connection.
 */
export async function readJson(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  // Node's parser has already refused a malformed Content-Length; absent, the body is chunked.
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return [];
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}
