/**
 * Engine processes that never run ahead of their host, for tests that act in the middle of a
 * generation (stop, cancel, close) whatever the speed of the GPU and of this machine.
 *
 * The engine (engine-gate-entry.ts: the real one) waits after sending each token until this side
 * has handled it: the host's handlers, and every reaction to them that needs no I/O (a promise the
 * test awaits, then a stop or a cancel), run while the engine waits there; what the host sent it
 * meanwhile (a cancel) is on its way before the engine goes on. So a cancel asked on token n lands
 * with token n + 1, the step the engine had already started, however fast either side is.
 *
 * For a reaction that takes its own turns of the event loop (a client that disconnects, a back
 * end that closes), `holdAfter(n)` keeps the engine at token n until `release()` or, with
 * `releaseOnCancel()`, until the host has sent it a cancel. Nothing here waits on a clock.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { forwardWithoutDriverNoise } from '../../src-main/engine-wire/driver-noise';
import { stopEngineChild, type EngineLauncher, type EngineProcess } from '../../src-main/engine-wire/host';
import type { EngineMessage, EngineRequest } from '../../src-main/engine-wire/protocol';

const ENTRY = fileURLToPath(new URL('./engine-gate-entry.ts', import.meta.url));
const GO = Buffer.of(1);

export interface EngineGate {
  /** Starts gated engine processes: give it to an EngineHost or a back end (`engineLauncher`). */
  readonly launcher: EngineLauncher;
  /**
   * Holds the engine once it has sent the `n`-th token (1-based) of its running or next
   * generation; resolves when that token has reached the host and the engine waits there.
   */
  holdAfter(n: number): Promise<void>;
  /** Lets the held engine go on, once what the host sent it meanwhile is on its way. */
  release(): void;
  /** Lets the held engine go on once the host has sent it a cancel since it was held (a stop that takes turns of its own). */
  releaseOnCancel(): void;
}

export function engineGate(): EngineGate {
  let hold: { n: number; reached: () => void } | null = null;
  /** Lets the held engine go (null: none held). */
  let held: (() => void) | null = null;
  /** Whether the host has sent a cancel since the engine was held. */
  let cancelled = false;
  /** Whether a cancel lets the held engine go. */
  let onCancel = false;

  const releaseHeld = () => {
    const go = held;
    held = null;
    cancelled = onCancel = false;
    go?.();
  };

  const launcher: EngineLauncher = (events) => {
    const child: ChildProcess = fork(ENTRY, {
      execArgv: ['--import', 'tsx'],
      env: process.env,
      stdio: ['pipe', 'inherit', 'pipe', 'ipc'],
    });
    forwardWithoutDriverNoise(child.stderr!, process.stderr);
    // An engine that has gone reads no more bytes.
    child.stdin!.on('error', () => {});
    let gone = false;
    const exit = (reason: string) => {
      if (gone) return;
      gone = true;
      events.exit(reason);
    };

    /** Messages to the engine not yet written to its channel, and what waits for them. */
    let unsent = 0;
    const whenSent: (() => void)[] = [];
    /**
     * Lets the engine go on past the token it waits at: after the reactions this turn started
     * (promise callbacks included), once what they sent the engine is written to its channel.
     */
    const go = () =>
      setImmediate(() => {
        const write = () => void (child.stdin!.writable && child.stdin!.write(GO));
        if (unsent === 0) write();
        else whenSent.push(write);
      });

    child.on('message', (raw) => {
      const message = raw as EngineMessage;
      events.message(message);
      if (message.type !== 'token') return;
      if (hold && message.index + 1 === hold.n) {
        const { reached } = hold;
        hold = null;
        held = go;
        reached();
      } else {
        go();
      }
    });
    child.on('error', (err) => exit(`engine process error: ${err.message}`));
    child.on('exit', (code, signal) => exit(`engine process exited (${signal ?? `code ${code}`})`));

    const engine: EngineProcess = {
      get pid() {
        return child.pid ?? null;
      },
      send: (message: EngineRequest, onError) => {
        unsent++;
        child.send(message, (err) => {
          unsent--;
          if (err) onError(err);
          if (unsent === 0) for (const then of whenSent.splice(0)) then();
        });
        if (message.type === 'cancel' && held) {
          cancelled = true;
          if (onCancel) releaseHeld();
        }
      },
      kill: () => void child.kill('SIGKILL'),
      // As forkLauncher's; the engine waits for no byte meanwhile.
      stop: () => {
        child.stdin!.end();
        return stopEngineChild(child);
      },
    };
    return engine;
  };

  return {
    launcher,
    holdAfter(n) {
      if (hold || held) throw new Error('the engine gate holds one token at a time');
      return new Promise<void>((reached) => (hold = { n, reached }));
    },
    release() {
      if (!held) throw new Error('the engine gate holds nothing to release');
      releaseHeld();
    },
    releaseOnCancel() {
      if (!held) throw new Error('the engine gate holds nothing to release');
      if (cancelled) releaseHeld();
      else onCancel = true;
    },
  };
}
