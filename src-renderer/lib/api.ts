import {
  API_METHODS,
  type GufoApi,
  type GufoBridge,
  type GufoEvent,
  type GufoEventListener,
} from '../../src-preload/api';
import { UI_API_PREFIX, UI_EVENTS_PATH } from '../../src-preload/api/http-paths';

declare global {
  interface Window {
    /** Set by the Electron preload; absent in browser mode. */
    gufo?: GufoBridge;
  }
}

/** The GufoApi binding for where the page runs: Electron's preload, else HTTP + SSE to `gufo serve`. */
export function resolveApi(): GufoBridge {
  return window.gufo ?? httpBridge(new URLSearchParams(location.search).get('token') ?? '');
}

export const ACCESS_DENIED =
  'Access denied: open Gufo with the full address `gufo serve` printed (it carries the token).';

/** GufoApi over `POST /gufo/api/<method>`, events over `GET /gufo/api/events`, on the server that served this page. */
function httpBridge(token: string): GufoBridge {
  async function call(method: string, args: unknown[]): Promise<unknown> {
    // JSON has no undefined: an omitted optional argument would arrive as null. Leave it out, as IPC does.
    while (args.length > 0 && args.at(-1) === undefined) args = args.slice(0, -1);
    const response = await fetch(`${UI_API_PREFIX}${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-gufo-token': token },
      body: JSON.stringify(args),
    });
    if (response.status === 401) throw new Error(ACCESS_DENIED);
    const body = (await response.json()) as { result?: unknown; error?: string };
    if (!response.ok || body.error !== undefined) throw new Error(body.error ?? response.statusText);
    return body.result;
  }

  const listeners = new Set<GufoEventListener>();
  let source: EventSource | undefined;
  /** One stream for the page, opened with the first listener; EventSource reconnects by itself. */
  function connect(): void {
    if (source) return;
    source = new EventSource(`${UI_EVENTS_PATH}?token=${encodeURIComponent(token)}`);
    source.onmessage = (message) => {
      const event = JSON.parse(message.data as string) as GufoEvent;
      for (const listener of listeners) listener(event);
    };
  }

  const methods = Object.fromEntries(
    API_METHODS.map((name) => [name, (...args: unknown[]) => call(name, args)]),
  ) as unknown as GufoApi;
  return {
    ...methods,
    onEvent(listener) {
      listeners.add(listener);
      connect();
      return () => listeners.delete(listener);
    },
  };
}
