/**
 * Who may use the API. Programs on this machine (no Origin header) may; a web page may not, unless
 * it is the page Gufo itself serves on that address, since any site the user visits could
 * otherwise drive the local models. With an API key set, every request must bear it.
 */
import type { IncomingMessage } from 'node:http';
import { hostAllowed, originAllowed, tokenPresented } from '../../node/server/guard';
import { OpenAiError } from './errors';

export interface AccessRules {
  /** Check the Host header against this port (a loopback listener, against DNS rebinding); null when done already or not loopback. */
  hostPort: number | null;
  apiKey: string | null;
}

/** Throws the OpenAI error (403, 401) for a request that may not use the API. */
export function checkAccess(req: IncomingMessage, rules: AccessRules): void {
  if (rules.hostPort !== null && !hostAllowed(req, rules.hostPort)) {
    throw new OpenAiError(
      403,
      'permission_error',
      'forbidden_host',
      `unexpected Host header ${JSON.stringify(req.headers.host ?? '')}: use 127.0.0.1 or localhost`,
    );
  }
  if (!originAllowed(req)) {
    throw new OpenAiError(
      403,
      'permission_error',
      'forbidden_origin',
      `requests from web pages are refused (Origin ${req.headers.origin}), so that a site cannot drive your local models; call the API from a program`,
    );
  }
  if (rules.apiKey !== null && !tokenPresented(req, rules.apiKey, bearerToken(req))) {
    throw new OpenAiError(
      401,
      'invalid_request_error',
      'invalid_api_key',
      'missing or wrong API key: send it as "Authorization: Bearer <key>"',
    );
  }
}

function bearerToken(req: IncomingMessage): string | undefined {
  return /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
}
