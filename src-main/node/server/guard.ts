import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** A fresh secret per launch; the page receives it in the URL it is opened with. */
export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/**
 * Whether the request was addressed to this server by name. A web page on another site can make
 * its own host name resolve to 127.0.0.1 (DNS rebinding); its requests then still carry that
 * other name in the Host header.
 */
export function hostAllowed(req: IncomingMessage, port: number): boolean {
  const host = req.headers.host?.toLowerCase();
  return host === `127.0.0.1:${port}` || host === `localhost:${port}`;
}

/**
 * Whether the request presents the launch token: in the `x-gufo-token` header, or as `given`
 * (the `token` query parameter of the event stream, since EventSource cannot set headers).
 */
export function tokenPresented(
  req: IncomingMessage,
  token: string,
  given: unknown = req.headers['x-gufo-token'],
): boolean {
  if (typeof given !== 'string') return false;
  const a = Buffer.from(given);
  const b = Buffer.from(token);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Whether the request comes from a program (no Origin header) or from the page this server itself
 * served (its Origin is this request's scheme and Host); any other site's page is refused.
 */
export function originAllowed(req: IncomingMessage): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host ?? ''}`;
}
