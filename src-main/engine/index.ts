// Engine process entry. The same file runs under Electron's utilityProcess (the app) and under
// child_process.fork (the CLI, the server, tests); only the channel to the host differs.
// An uncaught error or a lost GPU is reported as a fatal error message, then the process exits:
// the host sees both and can start a fresh engine.
import { EngineHandler } from './handler';
import type { EngineMessage } from '../engine-wire/protocol';

interface Channel {
  onMessage(listener: (message: unknown) => void): void;
  send(message: EngineMessage): void;
}

/** Electron's `process.parentPort`, declared here because the engine must not import electron. */
interface ParentPort {
  on(event: 'message', listener: (event: { data: unknown }) => void): void;
  postMessage(message: unknown): void;
}

function hostChannel(): Channel {
  const { parentPort } = process as unknown as { parentPort?: ParentPort };
  if (parentPort) {
    return {
      onMessage: (listener) => parentPort.on('message', (event) => listener(event.data)),
      send: (message) => parentPort.postMessage(message),
    };
  }
  const send = process.send?.bind(process);
  if (send) {
    return {
      onMessage: (listener) => process.on('message', listener),
      send: (message) => {
        if (process.connected) send(message);
      },
    };
  }
  throw new Error('the engine must be started by utilityProcess.fork or child_process.fork');
}

const channel = hostChannel();

/** Tells the host, then exits: after a crash or a lost device the process state is not trusted. */
function fatal(message: string): void {
  channel.send({ id: null, type: 'error', message, fatal: true });
  // Give the IPC message a moment to leave before the process goes.
  setTimeout(() => process.exit(1), 50);
}

const handler = new EngineHandler((m) => channel.send(m), fatal);
const crashed = (err: unknown) => fatal(`engine crashed: ${err instanceof Error ? err.message : String(err)}`);
process.on('uncaughtException', crashed);
process.on('unhandledRejection', crashed);
// The host went away (child_process): nothing left to serve.
process.on('disconnect', () => {
  void handler.close().finally(() => process.exit(0));
});

channel.onMessage((message) => handler.handle(message));
