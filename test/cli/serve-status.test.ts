/** `gufo serve` serves the OpenAI-compatible API on the UI's port: Settings must be told so, not "Off". */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { OpenAiServerStatus } from '../../src-preload/api';
import { isolatedEnv } from '../support/backend';
import { REPO_ROOT } from '../support/paths';
import { tempDir } from '../support/temp';
import { UI_API_PREFIX } from '../../src-preload/api/http-paths';

/** Starts `gufo serve` and answers its UI's origin and launch token once it runs, with a way to stop it. */
function serve(args: string[]): Promise<{ origin: string; token: string; stop(): void }> {
  const home = tempDir();
  const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/gufo.mjs'), 'serve', ...args], {
    env: { ...process.env, ...isolatedEnv(home), GUFO_HOME: join(home, 'gufo-data') },
  });
  const stop = () => void child.kill('SIGTERM');
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8');
      const url = /Gufo is running at (\S+)/.exec(stdout)?.[1];
      if (url) resolve({ origin: new URL(url).origin, token: new URL(url).searchParams.get('token') ?? '', stop });
    });
    child.once('close', (status) => reject(new Error(`gufo serve exited with ${status}: ${stderr}`)));
  });
}

async function serverStatus(ui: { origin: string; token: string }): Promise<OpenAiServerStatus> {
  const headers = { 'content-type': 'application/json', 'x-gufo-token': ui.token };
  const reply = await fetch(`${ui.origin}${UI_API_PREFIX}openAiServerStatus`, { method: 'POST', headers, body: '[]' });
  expect(reply.status).toBe(200);
  return ((await reply.json()) as { result: OpenAiServerStatus }).result;
}

describe('gufo serve and the server status', () => {
  it('says where the API is served while the settings listener is off', async () => {
    const ui = await serve(['--port', '0']);
    try {
      const status = await serverStatus(ui);
      expect(status).toMatchObject({ url: null, servedUrl: `${ui.origin}/v1`, settings: { enabled: false } });
      const models = await fetch(`${status.servedUrl}/models`);
      expect(models.status).toBe(200);
    } finally {
      ui.stop();
    }
  }, 60_000);

  it('lets the pages of the --origins sites call the API, with CORS headers, and no other', async () => {
    const ui = await serve(['--port', '0', '--origins', 'https://app.example.com,chrome-extension://*']);
    try {
      const page = await fetch(`${ui.origin}/api/tags`, { headers: { origin: 'chrome-extension://abcd' } });
      expect(page.status).toBe(200);
      expect(page.headers.get('access-control-allow-origin')).toBe('chrome-extension://abcd');
      const other = await fetch(`${ui.origin}/v1/models`, { headers: { origin: 'https://evil.example' } });
      expect(other.status).toBe(403);
      // The option wins over the (empty) settings, which still say what was saved.
      expect((await serverStatus(ui)).settings.origins).toEqual([]);
    } finally {
      ui.stop();
    }
  }, 60_000);
});
