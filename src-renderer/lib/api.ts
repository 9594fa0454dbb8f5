import type { GufoApi } from '../../src-preload/api';

declare global {
  interface Window {
    /** Set by the Electron preload; absent in browser mode. */
    gufo?: GufoApi;
  }
}

/** The GufoApi binding for where the page runs: Electron's preload, else HTTP to `gufo serve`. */
export function resolveApi(): GufoApi {
  return window.gufo ?? httpApi(new URLSearchParams(location.search).get('token') ?? '');
}

/** GufoApi over `POST /api/<method>` on the server that served this page. */
function httpApi(token: string): GufoApi {
  async function call<K extends keyof GufoApi>(
    method: K,
    ...args: Parameters<GufoApi[K]>
  ): Promise<Awaited<ReturnType<GufoApi[K]>>> {
    const response = await fetch(`/api/${method}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'x-gufo-token': token },
      body: JSON.stringify(args),
    });
    if (response.status === 401) {
      throw new Error('Access denied: open Gufo with the full address `gufo serve` printed (it carries the token).');
    }
    const body: unknown = await response.json();
    if (!response.ok) throw new Error((body as { error?: string }).error ?? response.statusText);
    return body as Awaited<ReturnType<GufoApi[K]>>;
  }

  return {
    appInfo: () => call('appInfo'),
  };
}
