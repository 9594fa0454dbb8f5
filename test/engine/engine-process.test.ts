import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { EngineCrashedError, EngineHost, EngineRequestError } from '../../src-main/engine-wire/host';
import type { EngineMessage, ProgressEvent, TokenEvent } from '../../src-main/engine-wire/protocol';
import { engineGate } from '../support/engine-gate';
import { STORIES_260K } from '../support/paths';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

const entry = fileURLToPath(new URL('../../src-main/engine/index.ts', import.meta.url));

let child: ChildProcess | undefined;

afterEach(() => {
  child?.kill();
  child = undefined;
});

/** Forks the engine entry the way the CLI and tests do, and sends it one raw message. */
function ask(message: unknown): Promise<EngineMessage> {
  child ??= fork(entry, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const engine = child;
  return new Promise((resolve, reject) => {
    engine.once('message', (reply) => resolve(reply as EngineMessage));
    engine.once('error', reject);
    engine.once('exit', (code) => reject(new Error(`engine exited with code ${code}`)));
    engine.send(message as object);
  });
}

describe('engine process over child_process.fork', () => {
  it('answers an info request with its pid and runtime versions', async () => {
    const reply = await ask({ id: 7, type: 'info' });
    expect(reply).toMatchObject({
      id: 7,
      type: 'info',
      pid: child!.pid,
      node: process.versions.node,
      adapter: null,
      model: null,
    });
    expect(reply.type === 'info' && reply.versions.v8).toBe(process.versions.v8);
  });

  it('answers a malformed request with an error instead of dying', async () => {
    expect(await ask({ type: 'info' })).toMatchObject({ id: null, type: 'error' });
    expect(await ask({ id: 8, type: 'explode' })).toMatchObject({ id: 8, type: 'error' });
    expect(await ask({ id: 9, type: 'generate', prompt: 'hello', maxTokens: 3 })).toMatchObject({
      id: 9,
      type: 'error',
    });
    expect(await ask({ id: 10, type: 'info' })).toMatchObject({ id: 10, type: 'info' });
  });
});

describe('EngineHost', () => {
  const host = new EngineHost();
  afterAll(() => host.close());

  it('loads a model with progress events and streams a greedy generation', async () => {
    const progress: ProgressEvent[] = [];
    const info = await host.load(STORIES_260K, { ctx: 128 }, (e) => progress.push(e));
    expect(progress.length).toBeGreaterThan(0);
    expect(progress.at(-1)!.done).toBe(progress.at(-1)!.total);
    expect(info.model).toMatchObject({ architecture: 'llama', layers: 5, vocab: 512, ctx: 128, bos: 1, addBos: true });
    expect(info.memory!.residentWeightBytes).toBeLessThanOrEqual(1.07 * info.memory!.fileTensorBytes);
    expect(info.adapter.name).toBeTruthy();

    const tokens: TokenEvent[] = [];
    const result = await host.generate(
      { prompt: STORIES_PROMPT, maxTokens: 16, stop: [] },
      { onToken: (e) => tokens.push(e) },
    );
    expect(result.ids).toEqual(STORIES_GREEDY.slice(0, 16));
    expect(tokens.map((t) => t.token)).toEqual(result.ids);
    expect(tokens.map((t) => t.index)).toEqual(result.ids.map((_, i) => i));
    expect(result.stopReason).toBe('length');
    expect(result.timings.decodeTokS).toBeGreaterThan(0);
    expect((await host.info()).model?.ctx).toBe(128);
  });

  it('cancels a generation within one token', async () => {
    // An engine that waits after each token until this side has handled it: the cancel asked on the
    // third token is on its way before the engine goes on, however far ahead it could have been.
    const gated = new EngineHost({ launcher: engineGate().launcher });
    try {
      await gated.load(STORIES_260K, { ctx: 128 });
      const controller = new AbortController();
      let seen = 0;
      const result = await gated.generate(
        { prompt: STORIES_PROMPT, maxTokens: 100, stop: [] },
        {
          signal: controller.signal,
          onToken: () => {
            if (++seen === 3) controller.abort();
          },
        },
      );
      expect(result.stopReason).toBe('cancelled');
      // The cancel arrives while the engine waits for a step: at most one more token.
      expect(result.ids.length).toBeGreaterThanOrEqual(3);
      expect(result.ids.length).toBeLessThanOrEqual(4);
      expect(result.ids).toEqual(STORIES_GREEDY.slice(0, result.ids.length));
    } finally {
      await gated.close();
    }
  });

  it('reports a bad request as an error and keeps serving', async () => {
    await expect(host.load('/nonexistent/model.gguf')).rejects.toBeInstanceOf(EngineRequestError);
    await expect(host.generate({ prompt: [1], maxTokens: 2 })).rejects.toThrow(/no model loaded/);
    expect((await host.info()).type).toBe('info');
  });

  it('rejects pending requests when the engine dies, and starts a fresh one on the next request', async () => {
    await host.load(STORIES_260K, { ctx: 64 });
    const pid = host.pid!;
    const crashes: Error[] = [];
    host.onCrash((e) => crashes.push(e));
    const pending = host.generate(
      { prompt: STORIES_PROMPT, maxTokens: 50, stop: [] },
      { onToken: () => process.kill(pid, 'SIGKILL') },
    );
    await expect(pending).rejects.toBeInstanceOf(EngineCrashedError);
    expect(crashes).toHaveLength(1);
    const info = await host.info();
    expect(info.pid).not.toBe(pid);
    expect(info.model).toBeNull();
  });
});
