/**
 * Where browser mode serves GufoApi: under a prefix of its own, so that the root's `/api/` is free
 * for Ollama's API (clients append `/api/chat` and such to a base URL).
 */
export const UI_API_PREFIX = '/gufo/api/';
/** Server-Sent Events with every back-end event. */
export const UI_EVENTS_PATH = `${UI_API_PREFIX}events`;
