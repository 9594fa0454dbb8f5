import type { EngineResponse } from './protocol';

/** Answers one message from the host. Messages cross a process boundary, so check their shape. */
export function handleMessage(message: unknown): EngineResponse {
  const { id, type } = (message ?? {}) as { id?: unknown; type?: unknown };
  if (typeof id !== 'number') {
    return { id: null, type: 'error', message: 'request without a numeric id' };
  }
  switch (type) {
    case 'info':
      return { id, type: 'info', pid: process.pid, node: process.versions.node, versions: process.versions };
    default:
      return { id, type: 'error', message: `unknown request type ${JSON.stringify(type)}` };
  }
}
