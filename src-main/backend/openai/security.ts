/**
 * Who may use the API. Programs on this machine (no Origin header) may; a web page may not, unless
 * it is the page Gufo itself serves on that address or its site is one the user allowed
 * (GUFO_ORIGINS, `gufo serve --origins`, the settings), since any site the user visits could
 * otherwise drive the local models. With an API key set, every request must bear it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostAllowed, originAllowed, originListed, tokenPresented } from '../../node/server/guard';
import { OpenAiError } from './errors';

export interface AccessRules {
  /** Check the Host header against this port (a loopback listener, against DNS rebinding); null when done already or not loopback. */
  hostPort: number | null;
  apiKey: string | null;
  /** Other sites whose pages may call the API (origin patterns; see originListed). */
  origins: readonly string[];
}

/**
 * Throws the OpenAI error (403, 401) for a request that may not use the API. A page of an allowed
 * origin gets CORS headers (on errors too, so that it can read them); its preflight (OPTIONS,
 * which carries no credentials) is answered here, and then this answers true.
 */
export function checkAccess(req: IncomingMessage, res: ServerResponse, rules: AccessRules): boolean {
  if (rules.hostPort !== null && !hostAllowed(req, rules.hostPort)) {
    throw new OpenAiError(
      403,
      'permission_error',
      'forbidden_host',
      `unexpected Host header ${JSON.stringify(req.headers.host ?? '')}: use 127.0.0.1 or localhost`,
    );
  }
  if (!originAllowed(req, rules.origins)) {
    throw new OpenAiError(
      403,
      'permission_error',
      'forbidden_origin',
      `requests from web pages are refused (Origin ${req.headers.origin}), so that a site cannot drive your local models; call the API from a program, or allow the site with GUFO_ORIGINS`,
    );
  }
  const origin = req.headers.origin;
  if (origin !== undefined && originListed(origin, rules.origins)) {
    res.setHeader('Access-Control-Allow-Origin', origin);
    res.setHeader('Vary', 'Origin');
    if (req.method === 'OPTIONS') return preflight(req, res);
  }
  if (rules.apiKey !== null && !tokenPresented(req, rules.apiKey, bearerToken(req))) {
    throw new OpenAiError(
      401,
      'invalid_request_error',
      'invalid_api_key',
      'missing or wrong API key: send it as "Authorization: Bearer <key>"',
    );
  }
  return false;
}

/** Answers a preflight: the methods the API takes, and the headers the page asked to send. */
function preflight(req: IncomingMessage, res: ServerResponse): true {
  res.setHeader('Access-Control-Allow-Methods', 'GET, HEAD, POST, DELETE, OPTIONS');
  const headers = req.headers['access-control-request-headers'];
  if (headers) res.setHeader('Access-Control-Allow-Headers', headers);
  // Chrome asks before a public site reaches a loopback address (Private Network Access).
  if (req.headers['access-control-request-private-network'] === 'true')
    res.setHeader('Access-Control-Allow-Private-Network', 'true');
  res.setHeader('Access-Control-Max-Age', '600');
  res.writeHead(204);
  res.end();
  return true;
}

function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
}
