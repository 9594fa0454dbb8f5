import { createReadStream } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { extname, join, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ServerResponse } from 'node:http';
import { CSP_HEADER } from '../csp';

const CONTENT_TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.wasm': 'application/wasm',
  '.map': 'application/json; charset=utf-8',
};

/**
 * The file under `rootDir` that a URL path names (a directory means its index.html), or
 * undefined when there is none or the path would lead outside `rootDir` (`..`, encoded
 * separators, symlinks pointing elsewhere).
 */
export async function resolveStaticFile(rootDir: string, urlPath: string): Promise<string | undefined> {
  let relative: string;
  try {
    relative = decodeURIComponent(urlPath);
  } catch {
    return undefined;
  }
  if (relative.includes('\0')) return undefined;
  try {
    const root = await realpath(rootDir);
    let file = await realpath(join(root, relative));
    if (file !== root && !file.startsWith(root + sep)) return undefined;
    if ((await stat(file)).isDirectory()) file = await realpath(join(file, 'index.html'));
    if (!file.startsWith(root + sep) || !(await stat(file)).isFile()) return undefined;
    return file;
  } catch {
    return undefined;
  }
}

export async function sendFile(res: ServerResponse, file: string, headOnly: boolean): Promise<void> {
  const type = CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
  res.setHeader('Content-Type', type);
  res.setHeader('Content-Length', (await stat(file)).size);
  if (type.startsWith('text/html')) res.setHeader('Content-Security-Policy', CSP_HEADER);
  if (headOnly) {
    res.end();
    return;
  }
  await pipeline(createReadStream(file), res);
}
