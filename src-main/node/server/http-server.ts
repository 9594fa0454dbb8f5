/** An HTTP listener's start and stop, and JSON replies: shared by the UI server and the OpenAI-compatible one. */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Answers one request; a thrown error becomes a 500 (or a dropped connection once the reply has begun). */
export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => Promise<void>;

export interface Listening {
  /** The port it listens on (the one picked when 0 was asked). */
  port: number;
  close(): Promise<void>;
}

/** Listens on `host`:`port` (0: any free port); rejects with the listen error (EADDRINUSE…). */
export async function listen(handler: RequestHandler, port: number, host: string): Promise<Listening> {
  const server = createServer((req, res) => {
    handler(req, res).catch((err: unknown) => {
      if (res.headersSent) res.destroy();
      else sendJson(res, 500, { error: err instanceof Error ? err.message : String(err) });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        // Idle keep-alive connections would otherwise hold close() open.
        server.closeAllConnections();
      }),
  };
}

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
  });
  res.end(text);
}
