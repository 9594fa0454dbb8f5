/** What Settings says about the OpenAI-compatible API: every place it is served now, or that it is off. */
import type { OpenAiServerStatus } from '../../src-preload/api';

export interface ServedAt {
  url: string;
  /** Who serves it there. */
  by: string;
}

/** Where the API answers now: `gufo serve`'s own mount (whatever the settings say), then the settings' listener. */
export function servedAt(status: Pick<OpenAiServerStatus, 'url' | 'servedUrl'>): ServedAt[] {
  const places: ServedAt[] = [];
  if (status.servedUrl !== null) places.push({ url: status.servedUrl, by: 'gufo serve' });
  if (status.url !== null && status.url !== status.servedUrl)
    places.push({ url: status.url, by: 'the listener below' });
  return places;
}
