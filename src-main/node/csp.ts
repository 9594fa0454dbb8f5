/**
 * The renderer's Content Security Policy, one definition for every way the UI is delivered:
 * a `<meta>` tag in the built index.html (Electron loads it from file://, where response headers
 * cannot be set) and a response header from the browser-mode server.
 *
 * Everything comes from the app's own origin; no inline code, no eval, no remote hosts.
 */
const DIRECTIVES = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
];

/** For the `<meta>` tag, where browsers ignore (and warn about) `frame-ancestors`. */
export const CSP_META = DIRECTIVES.join('; ');

/** For the HTTP header, which can also forbid framing the page. */
export const CSP_HEADER = [...DIRECTIVES, "frame-ancestors 'none'"].join('; ');
