/**
 * Large prompts do not stall the server (issue #14): one that cannot fit the context is refused
 * from a lower bound on its tokens, without tokenizing megabytes; one the bound cannot refuse is
 * tokenized off the event loop, so /metrics keeps answering meanwhile.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAiRoutes } from '../../src-main/backend/openai/routes';
import { openAiServiceOf, type OpenAiService } from '../../src-main/backend/openai/service';
import { GgufType } from '../../src-main/core/gguf/values';
import { startServer, type MountedRoutes, type RunningServer } from '../../src-main/node/server/index';
import { createBackend, type Backend } from '../../src-main/backend/index';
import { writeStoriesWith } from '../support/gguf-variants';
import { STORIES_260K } from '../support/paths';
import { errorOf, send } from './fixtures/openai-server';

const json = { 'content-type': 'application/json' };
const STORY = 'Once upon a time there was a little girl named Lily. She loved to play outside. ';
const storyText = (bytes: number) => STORY.repeat(Math.ceil(bytes / STORY.length)).slice(0, bytes);
/** A context large enough that the bound (7 bytes a token at most) lets a 2 MiB prompt through to be counted. */
const LONG_CONTEXT = 400_000;

describe('large prompts and the event loop', () => {
  let backend: Backend;
  let server: RunningServer;
  let service: OpenAiService;
  /** Called once the server has read the whole body of the next POST /v1/completions (its handling goes on from there). */
  let onBodyRead: (() => void) | null = null;
  // Made once for the file (tempDir() is per test).
  const dir = mkdtempSync(join(tmpdir(), 'gufo-event-loop-'));

  beforeAll(async () => {
    const home = join(dir, 'home');
    // The data folder's models/ is in the library.
    const models = join(home, 'models');
    mkdirSync(models, { recursive: true });
    copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
    await writeStoriesWith(join(models, 'stories-long.gguf'), [
      { key: 'llama.context_length', type: GgufType.UINT32, value: LONG_CONTEXT },
    ]);
    const renderer = join(dir, 'renderer');
    mkdirSync(renderer);
    writeFileSync(join(renderer, 'index.html'), '<!doctype html><title>Gufo</title>');
    backend = createBackend({ mode: 'browser', dataDir: home, env: {} });
    service = openAiServiceOf(backend.context);
    service.override({ contextSize: LONG_CONTEXT });
    const routes = openAiRoutes(service, { hostPort: () => null });
    const mounted: MountedRoutes = {
      matches: (pathname, req) => routes.matches(pathname, req),
      handle: (req, res) => {
        const read = req.url === '/v1/completions' ? onBodyRead : null;
        if (read) {
          onBodyRead = null;
          req.once('end', read);
        }
        return routes.handle(req, res);
      },
    };
    server = await startServer({
      port: 0,
      host: '127.0.0.1',
      rendererDir: renderer,
      api: backend.api,
      events: backend.events,
      mounted,
    });
  });
  afterAll(async () => {
    await server?.close();
    await backend?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a prompt of megabytes that cannot fit the context, naming the context, without tokenizing it', async () => {
    const body = JSON.stringify({ model: 'stories260k', messages: [{ role: 'user', content: storyText(7 << 20) }] });
    const reply = await send(server.port, 'POST', '/v1/chat/completions', json, body);
    expect(reply.status).toBe(400);
    const error = errorOf(reply.body);
    expect(error).toMatchObject({ code: 'context_length_exceeded', param: 'messages', type: 'invalid_request_error' });
    // "at least": counted from its bytes, never tokenized (that took seconds and froze the server).
    expect(error.message).toMatch(
      /^the prompt has at least \d+ tokens, and the context of "stories260k" holds 2048 with the answer; shorten the messages$/,
    );
  });

  it('keeps answering /metrics while a large prompt the bound cannot refuse is tokenized', async () => {
    const body = JSON.stringify({ model: 'stories-long', prompt: storyText(2 << 20) });
    const order: string[] = [];
    // Once the server has the whole prompt, it parses it and hands it to a tokenizer at once (which takes a while).
    const bodyRead = new Promise<void>((resolve) => (onBodyRead = resolve));
    const big = send(server.port, 'POST', '/v1/completions', json, body).then((reply) => {
      order.push('big');
      return reply;
    });
    await bodyRead;
    const metrics = await send(server.port, 'GET', '/metrics');
    order.push('metrics');
    expect(metrics.status).toBe(200);
    const reply = await big;
    expect(order).toEqual(['metrics', 'big']);
    // Counted exactly (the bound let it through), it turned out too long.
    expect(reply.status).toBe(400);
    expect(errorOf(reply.body).message).toMatch(
      /^the prompt has \d+ tokens, and the context of "stories-long" holds 400000/,
    );
  });
});
