/**
 * Web pages and the API (/v1 and Ollama's routes): a foreign Origin is refused by default; the
 * origins the settings, GUFO_ORIGINS or `gufo serve --origins` allow get CORS headers and their
 * preflights answered. Raw HTTP, with the headers a browser sends.
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBackend } from '../../src-main/backend/index';
import { startOpenAiServer } from '../../src-main/backend/openai/listener';
import { openAiServiceOf } from '../../src-main/backend/openai/service';
import { originListed } from '../../src-main/node/server/guard';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

const ALLOWED = ['https://app.example.com', 'chrome-extension://*', 'http://localhost:*'];

describe('origin patterns', () => {
  it('match whole origins, * standing for any run of characters', () => {
    expect(originListed('https://app.example.com', ALLOWED)).toBe(true);
    expect(originListed('HTTPS://APP.EXAMPLE.COM', ALLOWED)).toBe(true);
    expect(originListed('chrome-extension://abcdefgh', ALLOWED)).toBe(true);
    expect(originListed('http://localhost:5173', ALLOWED)).toBe(true);
    expect(originListed('https://app.example.com.evil.example', ALLOWED)).toBe(false);
    expect(originListed('http://app.example.com', ALLOWED)).toBe(false);
    expect(originListed('https://localhost:5173', ALLOWED)).toBe(false);
    expect(originListed('http://localhostX', ['http://localhost.'])).toBe(false);
    expect(originListed('https://anything.example', ['*'])).toBe(true);
    expect(originListed('https://anything.example', [])).toBe(false);
  });
});

describe('pages of other sites', { timeout: 120_000 }, () => {
  const port = () => t.server.port;
  const preflight = (origin: string) =>
    send(port(), 'OPTIONS', '/api/chat', {
      origin,
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization,content-type',
      'access-control-request-private-network': 'true',
    });

  it('are refused by default, preflights too, without CORS headers', async () => {
    for (const path of ['/api/tags', '/v1/models']) {
      const reply = await send(port(), 'GET', path, { origin: 'https://app.example.com' });
      expect(reply.status).toBe(403);
      expect(reply.body).toContain('requests from web pages are refused (Origin https://app.example.com)');
      expect(reply.headers['access-control-allow-origin']).toBeUndefined();
    }
    const refused = await preflight('https://app.example.com');
    expect(refused.status).toBe(403);
    expect(refused.headers['access-control-allow-origin']).toBeUndefined();
    // Programs (no Origin) are not affected.
    expect((await send(port(), 'GET', '/api/tags')).status).toBe(200);
  });

  it('are served, with CORS headers, when their origin is allowed in the settings', async () => {
    await t.backend.api.updateOpenAiServerSettings({ origins: ALLOWED });
    try {
      for (const origin of ['https://app.example.com', 'chrome-extension://abcdefgh', 'http://localhost:5173']) {
        const reply = await send(port(), 'GET', '/api/tags', { origin });
        expect(reply.status).toBe(200);
        expect(reply.headers['access-control-allow-origin']).toBe(origin);
        expect(reply.headers.vary).toBe('Origin');
        expect((JSON.parse(reply.body) as { models: unknown[] }).models).toHaveLength(1);
      }
      const v1 = await send(port(), 'GET', '/v1/models', { origin: 'https://app.example.com' });
      expect(v1.status).toBe(200);
      expect(v1.headers['access-control-allow-origin']).toBe('https://app.example.com');

      const other = await send(port(), 'GET', '/api/tags', { origin: 'https://evil.example' });
      expect(other.status).toBe(403);
      expect(other.headers['access-control-allow-origin']).toBeUndefined();

      const answered = await preflight('https://app.example.com');
      expect(answered.status).toBe(204);
      expect(answered.headers).toMatchObject({
        'access-control-allow-origin': 'https://app.example.com',
        'access-control-allow-methods': 'GET, HEAD, POST, DELETE, OPTIONS',
        'access-control-allow-headers': 'authorization,content-type',
        'access-control-allow-private-network': 'true',
      });
      expect(answered.body).toBe('');
      expect((await preflight('https://evil.example')).status).toBe(403);

      // With an API key: the preflight carries none and is answered; the request itself needs it,
      // and its 401 carries the CORS headers, so that the page can read why.
      await t.backend.api.updateOpenAiServerSettings({ apiKey: 'sk-origins-test-key' });
      expect((await preflight('https://app.example.com')).status).toBe(204);
      const unkeyed = await send(port(), 'GET', '/api/tags', { origin: 'https://app.example.com' });
      expect(unkeyed.status).toBe(401);
      expect(unkeyed.headers['access-control-allow-origin']).toBe('https://app.example.com');
      const keyed = await send(port(), 'GET', '/api/tags', {
        origin: 'https://app.example.com',
        authorization: 'Bearer sk-origins-test-key',
      });
      expect(keyed.status).toBe(200);
    } finally {
      await t.backend.api.updateOpenAiServerSettings({ origins: [], apiKey: null });
    }
    expect((await send(port(), 'GET', '/api/tags', { origin: 'https://app.example.com' })).status).toBe(403);
  });

  it('refuses a setting that is not a list of origins, naming the entry', async () => {
    await expect(t.backend.api.updateOpenAiServerSettings({ origins: ['app.example.com'] })).rejects.toThrow(
      'setting "openAiServer.origins" must be a list of origins: "app.example.com" is not an origin (such as https://app.example.com, chrome-extension://* or http://localhost:*)',
    );
    await expect(
      t.backend.api.updateOpenAiServerSettings({ origins: 'https://app.example.com' as never }),
    ).rejects.toThrow('setting "openAiServer.origins" must be a list of origins');
    expect((await t.backend.api.openAiServerStatus()).settings.origins).toEqual([]);
  });
});

describe('GUFO_ORIGINS', { timeout: 120_000 }, () => {
  it('allows the origins it lists, comma-separated, over the settings; one that is not an origin is left out with a notice', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gufo-origins-'));
    mkdirSync(join(dir, 'models'));
    const backend = createBackend({
      mode: 'browser',
      dataDir: dir,
      env: { GUFO_ORIGINS: ' https://app.example.com , moz-extension://*,not an origin' },
    });
    try {
      const service = openAiServiceOf(backend.context);
      await backend.api.updateOpenAiServerSettings({ origins: ['https://settings.example'] });
      expect(service.limits().origins).toEqual(['https://app.example.com', 'moz-extension://*']);
      expect(backend.context.notices).toContain(
        'GUFO_ORIGINS: "not an origin" is not an origin (such as https://app.example.com, chrome-extension://* or http://localhost:*); left out',
      );
      const listener = await startOpenAiServer(service, { host: '127.0.0.1', port: 0 });
      try {
        const allowed = await send(listener.port, 'GET', '/api/version', { origin: 'moz-extension://1234' });
        expect(allowed.status).toBe(200);
        expect(allowed.headers['access-control-allow-origin']).toBe('moz-extension://1234');
        const fromSettings = await send(listener.port, 'GET', '/api/version', { origin: 'https://settings.example' });
        expect(fromSettings.status).toBe(403);
      } finally {
        await listener.close();
      }
    } finally {
      await backend.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
