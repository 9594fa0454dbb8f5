import { request } from 'node:http';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend, type Backend } from '../../src-main/backend/index';
import { startServer, type RunningServer } from '../../src-main/node/server/index';
import pkg from '../../package.json';
import { rawExchange } from '../support/raw-http';

let dir: string;
let server: RunningServer;
let backend: Backend;

beforeAll(async () => {
  // A renderer folder, with a secret file beside it that must stay unreachable.
  dir = mkdtempSync(join(tmpdir(), 'gufo-server-'));
  mkdirSync(join(dir, 'renderer', 'assets'), { recursive: true });
  writeFileSync(join(dir, 'renderer', 'index.html'), '<!doctype html><title>Gufo</title>');
  writeFileSync(join(dir, 'renderer', 'assets', 'app.js'), 'export {};');
  writeFileSync(join(dir, 'secret.txt'), 'secret');
  backend = createBackend({ mode: 'browser', dataDir: join(dir, 'home'), env: {} });
  server = await startServer({
    port: 0,
    host: '127.0.0.1',
    rendererDir: join(dir, 'renderer'),
    api: backend.api,
    events: backend.events,
  });
});

afterAll(async () => {
  await server?.close();
  await backend?.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A raw request: exact path and Host header, which fetch() would normalize or forbid. */
function send(method: string, path: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port: server.port, method, path, headers: { host: `127.0.0.1:${server.port}`, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const withToken = () => ({ 'x-gufo-token': server.token, 'content-type': 'application/json' });

describe('browser-mode server', () => {
  it('prints a loopback URL carrying a fresh token', () => {
    expect(server.url).toBe(`http://127.0.0.1:${server.port}/?token=${server.token}`);
    expect(server.token).toMatch(/^[\w-]{43}$/);
  });

  it('serves the renderer with a strict CSP on HTML', async () => {
    const page = await send('GET', '/?token=abc');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toContain("default-src 'none'");
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    const script = await send('GET', '/assets/app.js');
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/^text\/javascript/);
  });

  it.each(['/../secret.txt', '/%2e%2e/secret.txt', '/assets/..%2f..%2fsecret.txt', '/%00', '/%E0%A4%A'])(
    'never serves files outside the renderer folder: %s',
    async (path) => {
      const reply = await send('GET', path);
      expect(reply.status).toBe(404);
      expect(reply.body).not.toContain('secret');
    },
  );

  it('refuses requests addressed to another host name (DNS rebinding)', async () => {
    for (const host of ['evil.example:' + server.port, `127.0.0.1:${server.port + 1}`, '127.0.0.1']) {
      expect((await send('GET', '/', { host })).status).toBe(403);
      expect((await send('POST', '/gufo/api/appInfo', { ...withToken(), host }, '[]')).status).toBe(403);
    }
    expect((await send('GET', '/', { host: `localhost:${server.port}` })).status).toBe(200);
  });

  it('refuses API calls without the right token', async () => {
    expect((await send('POST', '/gufo/api/appInfo', {}, '[]')).status).toBe(401);
    expect((await send('POST', '/gufo/api/appInfo', { 'x-gufo-token': 'x'.repeat(43) }, '[]')).status).toBe(401);
    expect((await send('POST', '/gufo/api/appInfo', { 'x-gufo-token': '' }, '[]')).status).toBe(401);
  });

  it("refuses other sites' pages even with the token, and serves GufoApi only under /gufo/api/", async () => {
    const own = await send(
      'POST',
      '/gufo/api/appInfo',
      { ...withToken(), origin: `http://127.0.0.1:${server.port}` },
      '[]',
    );
    expect(own.status).toBe(200);
    for (const origin of ['http://evil.example', `http://localhost:${server.port + 1}`, 'null']) {
      expect((await send('POST', '/gufo/api/appInfo', { ...withToken(), origin }, '[]')).status).toBe(403);
      expect((await send('GET', `/gufo/api/events?token=${server.token}`, { origin })).status).toBe(403);
    }
    // The old place is Ollama's API's now (or nothing, without it): never a GufoApi call.
    const old = await send('POST', '/api/appInfo', withToken(), '[]');
    expect(old.status).not.toBe(200);
    expect(old.body).not.toContain('"result"');
  });

  it('calls GufoApi methods with the token', async () => {
    const reply = await send('POST', '/gufo/api/appInfo', withToken(), '[]');
    expect(reply.status).toBe(200);
    expect((JSON.parse(reply.body) as { result: unknown }).result).toMatchObject({
      name: 'Gufo',
      version: pkg.version,
      mode: 'browser',
      platform: process.platform,
      node: process.versions.node,
      dataDir: join(dir, 'home'),
      notices: [],
    });
  });

  it("answers a method's error as { error } (the call itself worked)", async () => {
    const reply = await send('POST', '/gufo/api/updateSettings', withToken(), JSON.stringify([{ theme: 'purple' }]));
    expect(reply.status).toBe(200);
    expect(JSON.parse(reply.body)).toEqual({ error: 'setting "theme" must be one of system, light, dark' });
  });

  it('rejects unknown methods, inherited names, wrong verbs and bad bodies', async () => {
    expect((await send('POST', '/gufo/api/nope', withToken(), '[]')).status).toBe(404);
    expect((await send('POST', '/gufo/api/constructor', withToken(), '[]')).status).toBe(404);
    expect((await send('POST', '/gufo/api/toString', withToken(), '[]')).status).toBe(404);
    expect((await send('GET', '/gufo/api/appInfo', withToken())).status).toBe(405);
    expect((await send('POST', '/gufo/api/appInfo', withToken(), '{"a":1}')).status).toBe(400);
    expect((await send('POST', '/gufo/api/appInfo', withToken(), 'not json')).status).toBe(400);
    expect((await send('POST', '/gufo/api/appInfo', withToken(), '[' + '0,'.repeat(600_000) + '0]')).status).toBe(413);
  });

  it('refuses a body announced over the limit at once (413), without waiting for it', async () => {
    // Headers only, and the first byte of a body announced as 100 MB.
    const answer = await rawExchange(
      server.port,
      `POST /gufo/api/appInfo HTTP/1.1\r\nHost: 127.0.0.1:${server.port}\r\nx-gufo-token: ${server.token}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n[`,
      5_000,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 413 /);
    expect(answer.toLowerCase()).toContain('connection: close');
  });

  it.each([
    [
      'the token query parameter (EventSource)',
      (token: string) => ({ path: `/gufo/api/events?token=${token}`, headers: {} }),
    ],
    ['the x-gufo-token header', (token: string) => ({ path: '/gufo/api/events', headers: { 'x-gufo-token': token } })],
  ])('streams back-end events to a client that presents the token in %s', async (_, presenting) => {
    expect((await send('GET', '/gufo/api/events')).status).toBe(401);
    expect((await send('GET', '/gufo/api/events', presenting('x'.repeat(43)).headers)).status).toBe(401);
    const { path, headers } = presenting(server.token);
    const received = await new Promise<string>((resolve, reject) => {
      const req = request(
        // A connection of its own: the stream holds it open.
        {
          agent: false,
          host: '127.0.0.1',
          port: server.port,
          path,
          headers: { host: `127.0.0.1:${server.port}`, ...headers },
        },
        (res) => {
          if (res.statusCode !== 200) return reject(new Error(`status ${res.statusCode}`));
          expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
          let text = '';
          res.setEncoding('utf8');
          res.on('error', () => {}); // the reset caused by leaving below
          res.on('data', (chunk: string) => {
            text += chunk;
            if (text.includes(': connected')) backend.events.emit({ type: 'library-changed' });
            if (text.includes('library-changed')) {
              resolve(text);
              req.destroy();
            }
          });
        },
      );
      req.on('error', (err) => (req.destroyed ? undefined : reject(err)));
      req.end();
    });
    expect(received).toContain('data: {"type":"library-changed"}\n\n');
  });
});
