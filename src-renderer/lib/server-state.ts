/**
 * What Settings says about the OpenAI-compatible API and Ollama's, which answer on the same
 * listeners: every place they are served now, and what the switch below governs.
 */
import type { OpenAiServerStatus } from '../../src-preload/api';

export interface ServedAt {
  /** OpenAI's base URL (".../v1"). */
  url: string;
  /** Ollama's base URL: the same listener's origin (clients append /api/chat). */
  ollamaUrl: string;
  /** Who serves it there. */
  by: string;
}

/** Where the APIs answer now: `gufo serve`'s own mount (whatever the settings say), then the settings' listener. */
export function servedAt(status: Pick<OpenAiServerStatus, 'url' | 'servedUrl'>): ServedAt[] {
  const places: ServedAt[] = [];
  const at = (url: string, by: string) => places.push({ url, ollamaUrl: url.replace(/\/v1$/, ''), by });
  if (status.servedUrl !== null) at(status.servedUrl, "gufo serve, on this page's port");
  if (status.url !== null && status.url !== status.servedUrl) at(status.url, 'the listener below');
  return places;
}

/**
 * The switch's label: under `gufo serve` the APIs are served on the page's port whatever it says,
 * so it governs a listener of its own (the address and port below), not whether they are served.
 */
export function listenerLabel(status: Pick<OpenAiServerStatus, 'servedUrl'> | null): string {
  return status?.servedUrl
    ? 'Also serve the APIs on a listener of their own (the address and port below)'
    : 'Serve the OpenAI-compatible and Ollama APIs';
}
