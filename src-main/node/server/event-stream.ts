import type { IncomingMessage, ServerResponse } from 'node:http';
import type { GufoEvent, GufoEventListener } from '../../../src-preload/api';

/** Where the server gets the back end's events from. */
export interface EventSource {
  subscribe(listener: GufoEventListener): () => void;
}

/** A comment line this often keeps proxies and idle timers from closing the stream. */
const KEEPALIVE_MS = 15_000;

/** `GET /gufo/api/events`: every back-end event as one Server-Sent Event (`data: <json>`), until the client leaves. */
export function streamEvents(req: IncomingMessage, res: ServerResponse, events: EventSource): void {
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-store',
    Connection: 'keep-alive',
  });
  res.write(': connected\n\n');
  const send = (event: GufoEvent) => res.write(`data: ${JSON.stringify(event)}\n\n`);
  const unsubscribe = events.subscribe(send);
  const keepalive = setInterval(() => res.write(': keepalive\n\n'), KEEPALIVE_MS);
  const stop = () => {
    clearInterval(keepalive);
    unsubscribe();
  };
  req.on('close', stop);
  res.on('error', stop);
}
