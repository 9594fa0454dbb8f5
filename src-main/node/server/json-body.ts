/**
 * Request bodies as JSON. A body of megabytes (an 8 MiB prompt) takes tens of milliseconds to
 * decode and parse, and six at once would hold every other request of the server back, so large
 * bodies are parsed in a worker thread; the event loop only receives the parsed value (a copy
 * that costs a fraction of decoding and parsing). Small bodies are parsed inline.
 */
import type { IncomingMessage } from 'node:http';
import { Worker } from 'node:worker_threads';

/** Bodies up to this size are parsed on the event loop (well under a millisecond). */
const INLINE_BYTES = 256 * 1024;
/** The worker ends after this long without a body to parse. */
const IDLE_MS = 30_000;

/**
 * The parsed body (an empty body is no arguments: []), null when not JSON, undefined when over
 * `maxBytes`: announced so in Content-Length (refused before a byte of it is read), or found so
 * while reading a chunked one. The caller answers 413 and closes the connection.
 */
export async function readJson(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  // Node's parser has already refused a malformed Content-Length; absent, the body is chunked.
  if (Number(req.headers['content-length'] ?? 0) > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) return undefined;
    chunks.push(chunk);
  }
  // One buffer of its own, so that a large one can be handed to the worker rather than copied.
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return size <= INLINE_BYTES ? parseBody(bytes) : parser.parse(bytes);
}

/** What the worker runs too (it is given this function's source). */
function parseBody(bytes: Uint8Array): unknown {
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  if (text.trim() === '') return [];
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const parseBody = ${parseBody.toString()};
parentPort.on('message', ({ id, bytes }) => parentPort.postMessage({ id, value: parseBody(bytes) }));
`;

/** One worker, started on the first large body and ended when idle; bodies queue in its port. */
class BodyParser {
  #worker: Worker | null = null;
  #idle: NodeJS.Timeout | undefined;
  readonly #waiting = new Map<number, { resolve(value: unknown): void; reject(err: Error): void }>();
  #nextId = 1;

  parse(bytes: Uint8Array): Promise<unknown> {
    const worker = this.#start();
    clearTimeout(this.#idle);
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#waiting.set(id, { resolve, reject });
      worker.postMessage({ id, bytes }, [bytes.buffer as ArrayBuffer]);
    });
  }

  #start(): Worker {
    if (this.#worker) return this.#worker;
    const worker = new Worker(WORKER_SOURCE, { eval: true });
    // It never keeps a process alive that has nothing else to do.
    worker.unref();
    worker.on('message', ({ id, value }: { id: number; value: unknown }) => {
      this.#waiting.get(id)?.resolve(value);
      this.#waiting.delete(id);
      if (this.#waiting.size === 0) this.#idle = setTimeout(() => this.#stop(worker), IDLE_MS).unref();
    });
    const fail = (err: Error) => {
      if (this.#worker === worker) this.#worker = null;
      for (const waiting of this.#waiting.values()) waiting.reject(err);
      this.#waiting.clear();
    };
    worker.on('error', fail);
    worker.on('exit', () => fail(new Error('the request body parser stopped')));
    this.#worker = worker;
    return worker;
  }

  /** Ends an idle worker; the next large body starts another. */
  #stop(worker: Worker): void {
    worker.removeAllListeners();
    this.#worker = null;
    void worker.terminate();
  }
}

const parser = new BodyParser();
