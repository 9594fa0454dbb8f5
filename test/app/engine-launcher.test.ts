import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { EngineCrashedError, EngineHost } from '../../src-main/engine-wire/host';
import { unpackedPath, utilityProcessLauncher } from '../../src-main/app/engine-launcher';
import type { EngineRequest } from '../../src-main/engine-wire/protocol';

// A fake utilityProcess: each fork returns an EventEmitter standing in for the UtilityProcess.
const electron = vi.hoisted(() => {
  // vi.hoisted runs before the imports, so the factory loads what it needs with require().
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { EventEmitter } = require('node:events') as typeof import('node:events');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PassThrough } = require('node:stream') as typeof import('node:stream');
  class FakeUtilityProcess extends EventEmitter {
    static nextPid = 1000;
    pid: number | undefined = FakeUtilityProcess.nextPid++;
    stdout = new PassThrough();
    stderr = new PassThrough();
    sent: EngineRequest[] = [];
    postMessage = vi.fn((message: EngineRequest) => void this.sent.push(message));
    kill = vi.fn(() => {
      queueMicrotask(() => this.exit(0));
      return true;
    });
    exit(code: number) {
      this.pid = undefined;
      this.emit('exit', code);
    }
  }
  const children: FakeUtilityProcess[] = [];
  return {
    children,
    utilityProcess: {
      fork: vi.fn((_entry: string, _args: string[], _options: unknown) => {
        const child = new FakeUtilityProcess();
        children.push(child);
        return child;
      }),
    },
  };
});

vi.mock('electron', () => ({ utilityProcess: electron.utilityProcess }));

const ENTRY = '/app/out/main/engine.js';
let host: EngineHost;

afterEach(async () => {
  await host?.close();
  electron.children.length = 0;
  electron.utilityProcess.fork.mockClear();
});

function newHost(): EngineHost {
  return (host = new EngineHost({ launcher: utilityProcessLauncher(ENTRY) }));
}

describe('EngineHost over utilityProcess', () => {
  it('forks the built engine as a named service only on the first request', async () => {
    newHost();
    expect(electron.utilityProcess.fork).not.toHaveBeenCalled();
    const info = host.info();
    expect(electron.utilityProcess.fork).toHaveBeenCalledWith(ENTRY, [], { serviceName: 'Gufo engine', stdio: 'pipe' });
    const child = electron.children[0]!;
    expect(host.pid).toBe(child.pid);
    child.emit('message', {
      id: child.sent[0]!.id,
      type: 'info',
      pid: child.pid,
      node: '',
      versions: {},
      adapter: null,
      model: null,
    });
    await info;
  });

  it('sends requests through postMessage and resolves each on its answer, passing events on', async () => {
    newHost();
    const progress: unknown[] = [];
    const loading = host.load('/models/x.gguf', { ctx: 64 }, (e) => progress.push(e));
    const child = electron.children[0]!;
    expect(child.postMessage).toHaveBeenCalledTimes(1);
    const request = child.sent[0]!;
    expect(request).toMatchObject({ type: 'load', path: '/models/x.gguf', ctx: 64, id: expect.any(Number) as number });
    child.emit('message', { id: request.id, type: 'progress', phase: 'upload', done: 1, total: 2 });
    child.emit('message', { id: request.id, type: 'loaded', info: { model: 'm' } });
    await expect(loading).resolves.toEqual({ model: 'm' });
    expect(progress).toEqual([{ id: request.id, type: 'progress', phase: 'upload', done: 1, total: 2 }]);
  });

  it('rejects pending requests when the process exits, and starts a fresh one on the next request', async () => {
    newHost();
    const crashes: Error[] = [];
    host.onCrash((e) => crashes.push(e));
    const pending = [host.info(), host.unload()];
    const first = electron.children[0]!;
    expect(first.sent).toHaveLength(2);
    first.exit(1);
    for (const p of pending) await expect(p).rejects.toBeInstanceOf(EngineCrashedError);
    await expect(pending[0]).rejects.toThrow(/exited \(code 1\)/);
    expect(crashes).toHaveLength(1);
    expect(host.pid).toBeNull();

    const next = host.info();
    expect(electron.children).toHaveLength(2);
    const second = electron.children[1]!;
    expect(second.sent).toHaveLength(1);
    second.emit('message', {
      id: second.sent[0]!.id,
      type: 'info',
      pid: second.pid,
      node: '',
      versions: {},
      adapter: null,
      model: null,
    });
    await expect(next).resolves.toMatchObject({ type: 'info', pid: second.pid });
  });

  it('treats a fatal engine error as a crash and kills the process', async () => {
    vi.useFakeTimers();
    try {
      newHost();
      const pending = host.info();
      const child = electron.children[0]!;
      child.emit('message', { id: null, type: 'error', message: 'device lost', fatal: true });
      await expect(pending).rejects.toThrow(/device lost/);
      expect(host.pid).toBeNull();
      vi.advanceTimersByTime(1000);
      expect(child.kill).toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it("passes the engine's stderr on without the GPU stack's start-up noise", async () => {
    const written: string[] = [];
    const write = vi.spyOn(process.stderr, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    try {
      newHost();
      void host.info().catch(() => {});
      const child = electron.children[0]!;
      child.stderr.end(
        'XDG_RUNTIME_DIR is invalid or not set in the environment.\n' +
          'Warning: maxDynamicStorageBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.\n' +
          'MESA: warning: a real driver warning\n',
      );
      await new Promise((resolve) => child.stderr.once('close', resolve));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      write.mockRestore();
    }
    expect(written.join('')).toBe('MESA: warning: a real driver warning\n');
  });

  it('close() kills the process and rejects what is pending, without reporting a crash', async () => {
    newHost();
    const crashes: Error[] = [];
    host.onCrash((e) => crashes.push(e));
    const pending = host.info();
    const child = electron.children[0]!;
    await host.close();
    await expect(pending).rejects.toThrow(/stopped/);
    expect(child.kill).toHaveBeenCalled();
    expect(crashes).toHaveLength(0);
    expect(host.pid).toBeNull();
  });
});

describe('unpackedPath', () => {
  it('points into app.asar.unpacked in a package, and leaves other paths alone', () => {
    const resources = join('/opt', 'Gufo', 'resources');
    expect(unpackedPath(join(resources, 'app.asar', 'out', 'main', 'engine.js'))).toBe(
      join(resources, 'app.asar.unpacked', 'out', 'main', 'engine.js'),
    );
    expect(unpackedPath(join('/work', 'gufo', 'out', 'main', 'engine.js'))).toBe(
      join('/work', 'gufo', 'out', 'main', 'engine.js'),
    );
    expect(unpackedPath(join('/work', 'my.app.asar.d', 'engine.js'))).toBe(join('/work', 'my.app.asar.d', 'engine.js'));
  });
});
