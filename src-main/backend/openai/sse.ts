/**
 * A streamed answer as OpenAI sends one: Server-Sent Events `data: <json>`, ended by `data: [DONE]`
 * (Chat Completions, completions), or typed events `event: <type>` ended by closing the stream (the
 * Responses API).
 */
import type { ServerResponse } from 'node:http';
import type { OpenAiError } from './errors';

export class SseWriter {
  constructor(private readonly res: ServerResponse) {
    res.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-store',
      Connection: 'keep-alive',
    });
    // Each token goes out as it comes, not batched with the next.
    res.socket?.setNoDelay(true);
  }

  /** Sends one event; nothing once the client has gone (the generation is being cancelled). */
  send(data: unknown): void {
    if (!this.res.destroyed) this.res.write(`data: ${JSON.stringify(data)}\n\n`);
  }

  /** Sends one typed event, its type also in the data (the Responses API's form). */
  event(data: { type: string; [field: string]: unknown }): void {
    if (!this.res.destroyed) this.res.write(`event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  /** Ends a stream of typed events. */
  close(): void {
    this.res.end();
  }

  done(): void {
    this.res.end('data: [DONE]\n\n');
  }

  /** An error after the stream began: sent as an event (the OpenAI clients raise it), then the stream ends. */
  fail(err: OpenAiError): void {
    this.res.end(`data: ${JSON.stringify(err.body)}\n\n`);
  }
}
