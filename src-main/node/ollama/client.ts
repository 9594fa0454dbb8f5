/**
 * The few calls of Ollama's REST API that create a model from a GGUF file, as documented for
 * Ollama 0.5.5 and later (docs/api.md): GET /api/version, HEAD and POST /api/blobs/sha256:<hex>
 * (the server checks the digest of what it receives), and POST /api/create with `model` and
 * `files` (file name → digest), whose answer streams JSON lines: {"status": ...} until "success",
 * or {"error": ...}.
 */
import { createReadStream } from 'node:fs';
import { Readable, Transform } from 'node:stream';

/** The first version whose /api/create takes `files` instead of a Modelfile. */
export const OLLAMA_MIN_VERSION = '0.5.5';
/** How long a server gets to say its version before it counts as not running. */
const PROBE_MS = 3000;

export interface CreateRequest {
  model: string;
  files: Record<string, string>;
  template?: string;
  system?: string;
  parameters?: Record<string, unknown>;
}

export interface CreateStatus {
  status: string;
  digest?: string;
  total?: number;
  completed?: number;
}

export class OllamaClient {
  constructor(readonly baseUrl: string) {}

  /** The server's version, or null when no server answers. */
  async version(signal?: AbortSignal): Promise<string | null> {
    const timeout = AbortSignal.timeout(PROBE_MS);
    try {
      const response = await fetch(`${this.baseUrl}/api/version`, {
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      });
      if (!response.ok) return null;
      const body = (await response.json()) as { version?: unknown };
      return typeof body.version === 'string' ? body.version : null;
    } catch (err) {
      if (signal?.aborted) throw err;
      return null;
    }
  }

  async hasBlob(digest: string, signal?: AbortSignal): Promise<boolean> {
    const response = await fetch(this.#blobUrl(digest), { method: 'HEAD', signal });
    if (response.status === 404) return false;
    if (!response.ok)
      throw new Error(`Ollama at ${this.baseUrl} answered ${response.status} to HEAD ${this.#blobUrl(digest)}`);
    return true;
  }

  /** Uploads the file as the blob `digest`; `onProgress` gets the bytes sent so far. */
  async pushBlob(
    path: string,
    digest: string,
    size: number,
    options: { signal?: AbortSignal; onProgress?: (bytes: number) => void } = {},
  ): Promise<void> {
    let sent = 0;
    const counted = createReadStream(path).pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, done) {
          sent += chunk.length;
          options.onProgress?.(sent);
          done(null, chunk);
        },
      }),
    );
    const init = {
      method: 'POST',
      body: Readable.toWeb(counted) as ReadableStream<Uint8Array>,
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': String(size) },
      signal: options.signal,
      // A streamed request body (Node's fetch requires saying so).
      duplex: 'half',
    };
    const response = await fetch(this.#blobUrl(digest), init);
    if (!response.ok) throw new Error(`Ollama refused the upload of ${path}: ${await errorOf(response)}`);
    await response.body?.cancel();
  }

  /** Creates the model, passing each status line to `onStatus`; throws with Ollama's error. */
  async create(
    request: CreateRequest,
    options: { signal?: AbortSignal; onStatus?(status: CreateStatus): void } = {},
  ): Promise<void> {
    const response = await fetch(`${this.baseUrl}/api/create`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ ...request, stream: true }),
      signal: options.signal,
    });
    if (!response.ok || !response.body)
      throw new Error(`Ollama could not create ${request.model}: ${await errorOf(response)}`);
    let success = false;
    let rest = '';
    const decoder = new TextDecoder();
    const reader = response.body.getReader();
    const line = (text: string) => {
      if (text.trim() === '') return;
      const message = JSON.parse(text) as CreateStatus & { error?: string };
      if (message.error) throw new Error(`Ollama could not create ${request.model}: ${message.error}`);
      if (message.status === 'success') success = true;
      options.onStatus?.(message);
    };
    for (;;) {
      const { done, value } = await reader.read();
      rest += decoder.decode(value, { stream: !done });
      const lines = rest.split('\n');
      rest = lines.pop() ?? '';
      lines.forEach(line);
      if (done) break;
    }
    line(rest);
    if (!success) throw new Error(`Ollama stopped answering before it created ${request.model}`);
  }

  #blobUrl(digest: string): string {
    return `${this.baseUrl}/api/blobs/${digest}`;
  }
}

/** Whether `version` is at least `minimum` (development builds report 0.0.0 and are taken as new). */
export function versionAtLeast(version: string, minimum: string): boolean {
  const parse = (v: string) => v.replace(/^v/, '').split(/[.-]/).slice(0, 3).map(Number);
  const have = parse(version);
  if (have.every((n) => n === 0)) return true;
  const need = parse(minimum);
  for (let i = 0; i < 3; i++) {
    const a = have[i] ?? 0;
    const b = need[i] ?? 0;
    if (Number.isNaN(a)) return false;
    if (a !== b) return a > b;
  }
  return true;
}

async function errorOf(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const error = (JSON.parse(text) as { error?: unknown }).error;
    if (typeof error === 'string') return error;
  } catch {
    // Not JSON: the text itself, or the status.
  }
  return text.trim() || `${response.status} ${response.statusText}`;
}
