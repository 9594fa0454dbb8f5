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
 * Whether the request comes from a program (no Origin header), from the page this server itself
 * served (its Origin is this request's scheme and Host), or from a page whose origin the user
 * allowed (`allowed`: origin patterns, see originListed); any other site's page is refused.
 */
export function originAllowed(req: IncomingMessage, allowed: readonly string[] = []): boolean {
  const origin = req.headers.origin;
  return origin === undefined || origin === `http://${req.headers.host ?? ''}` || originListed(origin, allowed);
}

/**
 * Whether `origin` matches one of `patterns`: an origin as a browser sends it
 * (`https://app.example.com`), where `*` stands for any run of characters (`chrome-extension://*`,
 * `http://localhost:*`), as OLLAMA_ORIGINS reads them; `*` alone allows every site.
 */
export function originListed(origin: string, patterns: readonly string[]): boolean {
  const lower = origin.toLowerCase();
  return patterns.some((pattern) => {
    const parts = pattern
      .toLowerCase()
      .split('*')
      .map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
    return new RegExp(`^${parts.join('.*')}$`).test(lower);
  });
}

/** What is wrong with an origin pattern, or null: `*`, or scheme://host[:port] (with `*` anywhere), no path. */
export function originPatternProblem(pattern: unknown): string | null {
  if (pattern === '*' || (typeof pattern === 'string' && /^[a-z*][a-z0-9+.*-]*:\/\/[^\s/,?#]+$/i.test(pattern)))
    return null;
  return `${JSON.stringify(pattern)} is not an origin (such as https://app.example.com, chrome-extension://* or http://localhost:*)`;
}
