import type { IncomingMessage } from 'node:http';
import { isApiMethod, type GufoApi } from '../../../src-preload/api';
import { readJson } from './json-body';

/** Requests carry a few JSON arguments; anything larger is a mistake or an attack. */
const MAX_BODY_BYTES = 1 << 20;

export interface ApiReply {
  status: number;
  body: unknown;
}

/**
 * `POST /gufo/api/<method>` with a JSON array of arguments: calls that GufoApi method and answers
 * `{ result }`, or `{ error }` when the method threw — with status 200, as JSON-RPC does: the call
 * itself worked, and a refused request (a bad setting, a missing model) is not a failed page load
 * in the browser's console. Requests that are themselves wrong get a 4xx status and `{ error }`.
 * The caller has already checked the token.
 */
export async function callApi(api: GufoApi, req: IncomingMessage, name: string): Promise<ApiReply> {
  if (req.method !== 'POST') return { status: 405, body: { error: 'use POST' } };
  if (!isApiMethod(name)) return { status: 404, body: { error: `no API method "${name}"` } };
  const args = await readJson(req, MAX_BODY_BYTES);
  if (args === undefined) return { status: 413, body: { error: `body over ${MAX_BODY_BYTES} bytes` } };
  if (!Array.isArray(args)) return { status: 400, body: { error: 'body must be a JSON array of arguments' } };
  try {
    return {
      status: 200,
      body: { result: (await (api[name] as (...a: unknown[]) => Promise<unknown>).apply(api, args)) ?? null },
    };
  } catch (err) {
    return { status: 200, body: { error: err instanceof Error ? err.message : String(err) } };
  }
}
