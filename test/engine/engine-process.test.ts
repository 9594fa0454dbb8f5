import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { EngineResponse } from '../../src-main/engine/protocol';

const entry = fileURLToPath(new URL('../../src-main/engine/index.ts', import.meta.url));

let child: ChildProcess | undefined;

afterEach(() => {
  child?.kill();
  child = undefined;
});

/** Forks the engine entry the way the CLI and tests do, and sends it one raw message. */
function ask(message: unknown): Promise<EngineResponse> {
  child ??= fork(entry, { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const engine = child;
  return new Promise((resolve, reject) => {
    engine.once('message', (reply) => resolve(reply as EngineResponse));
    engine.once('error', reject);
    engine.once('exit', (code) => reject(new Error(`engine exited with code ${code}`)));
    engine.send(message as object);
  });
}

describe('engine process over child_process.fork', () => {
  it('answers an info request with its pid and runtime versions', async () => {
    const reply = await ask({ id: 7, type: 'info' });
    expect(reply).toMatchObject({ id: 7, type: 'info', pid: child!.pid, node: process.versions.node });
    expect(reply.type === 'info' && reply.versions.v8).toBe(process.versions.v8);
  });

  it('answers a malformed request with an error instead of dying', async () => {
    expect(await ask({ type: 'info' })).toMatchObject({ id: null, type: 'error' });
    expect(await ask({ id: 8, type: 'explode' })).toMatchObject({ id: 8, type: 'error' });
    expect(await ask({ id: 9, type: 'info' })).toMatchObject({ id: 9, type: 'info' });
  });
});
