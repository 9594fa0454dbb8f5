/**
 * Starts the engine in an Electron utility process (the app's way; the CLI, the server and tests
 * fork it with Node). EngineHost speaks the same protocol over either channel and treats the
 * process's exit the same way: pending requests fail, the next request starts a fresh engine.
 */
import { sep } from 'node:path';
import { utilityProcess } from 'electron';
import { forwardWithoutDriverNoise } from '../engine-wire/driver-noise';
import type { EngineLauncher } from '../engine-wire/host';
import type { EngineMessage } from '../engine-wire/protocol';

/** How long a stopped engine may take to exit before it is killed outright. */
const STOP_TIMEOUT_MS = 2000;

/**
 * Where `file` is in the folder electron-builder unpacks beside app.asar; unchanged outside a
 * package. The engine runs from there: its native addons (webgpu, koffi) and the shaders it reads
 * must be real files (see asarUnpack in electron-builder.json).
 */
export function unpackedPath(file: string): string {
  return file.replace(`${sep}app.asar${sep}`, `${sep}app.asar.unpacked${sep}`);
}

/** `entry` is the built engine, out/main/engine.js (its unpacked copy in a package). */
export function utilityProcessLauncher(entry: string): EngineLauncher {
  return (events) => {
    const child = utilityProcess.fork(entry, [], { serviceName: 'Gufo engine', stdio: 'pipe' });
    // Its logs reach the app's own stdout/stderr, less the GPU stack's start-up noise (and reading them keeps the pipes from filling up).
    child.stdout?.pipe(process.stdout);
    if (child.stderr) forwardWithoutDriverNoise(child.stderr, process.stderr);
    let exited = false;
    const exitWaiters: (() => void)[] = [];
    child.on('message', (message: unknown) => events.message(message as EngineMessage));
    child.on('exit', (code: number) => {
      exited = true;
      for (const resolve of exitWaiters.splice(0)) resolve();
      events.exit(`engine process exited (code ${code})`);
    });
    return {
      get pid() {
        return child.pid ?? null;
      },
      send: (message) => {
        if (exited) throw new Error('the engine process has exited');
        child.postMessage(message);
      },
      kill: () => void child.kill(),
      // A utility process has no disconnect to wait on: kill() (SIGTERM), then SIGKILL if it lingers.
      stop: () =>
        new Promise<void>((resolve) => {
          if (exited) return resolve();
          const force = setTimeout(() => {
            try {
              if (child.pid !== undefined) process.kill(child.pid, 'SIGKILL');
            } catch {
              // already gone
            }
          }, STOP_TIMEOUT_MS);
          exitWaiters.push(() => {
            clearTimeout(force);
            resolve();
          });
          child.kill();
        }),
    };
  };
}
