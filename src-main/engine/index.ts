// Engine process entry. The same file runs under Electron's utilityProcess (the app) and under
// child_process.fork (the CLI, the server, tests); only the channel to the host differs.
import { handleMessage } from './handler';
import type { EngineResponse } from './protocol';

interface Channel {
  onMessage(listener: (message: unknown) => void): void;
  send(response: EngineResponse): void;
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
      send: (response) => parentPort.postMessage(response),
    };
  }
  const send = process.send?.bind(process);
  if (send) {
    return {
      onMessage: (listener) => process.on('message', listener),
      send: (response) => void send(response),
    };
  }
  throw new Error('the engine must be started by utilityProcess.fork or child_process.fork');
}

const channel = hostChannel();
channel.onMessage((message) => channel.send(handleMessage(message)));
