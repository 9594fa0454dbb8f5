/**
 * The engine process of engine-gate.ts: the real engine (src-main/engine/index.ts), except that
 * after it sends each token of a generation it waits, blocked, for one byte on stdin. The host side
 * sends that byte once it has handled the token (or, when the test holds the engine there, once the
 * test lets it go), so the engine is never further ahead than the host has seen.
 */
import { readSync } from 'node:fs';

const send = process.send?.bind(process);
if (!send) throw new Error('engine-gate-entry.ts is started by engine-gate.ts with child_process.fork');

const nap = new Int32Array(new SharedArrayBuffer(4));
const go = Buffer.alloc(1);

/** Blocks until the host's byte comes; end of input (the host is gone) lets the engine go on, to its disconnect. */
function waitForGo(): void {
  for (;;) {
    try {
      readSync(0, go, 0, 1, null);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
      Atomics.wait(nap, 0, 0, 1);
    }
  }
}

process.send = ((message: unknown, ...rest: never[]) => {
  const sent = send(message, ...rest);
  if ((message as { type?: unknown } | null)?.type === 'token') waitForGo();
  return sent;
}) as typeof process.send;

// Imported only now: the engine binds process.send when its module runs.
await import('../../src-main/engine/index');
