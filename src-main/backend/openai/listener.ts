/**
 * The API on a listener of its own (the app's "OpenAI-compatible server" setting, `gufo serve
 * --api-port`), and the switch that keeps one running as the settings say.
 */
import type { OpenAiServerSettings } from '../../../src-preload/api';
import { listen } from '../../node/server/http-server';
import { openAiRoutes } from './routes';
import type { OpenAiService } from './service';

export interface OpenAiListener {
  port: number;
  /** The API's base URL, as clients are configured with it ("http://127.0.0.1:7824/v1"). */
  url: string;
  close(): Promise<void>;
}

/** Addresses only this machine reaches; the Host header is checked there (DNS rebinding). */
function isLoopback(host: string): boolean {
  return host === '127.0.0.1' || host === 'localhost';
}

/** Why the API may not be served on `host` with `apiKey`, or null: beyond this machine it needs a key. */
export function keyProblem(host: string, apiKey: string | null): string | null {
  return isLoopback(host) || apiKey !== null
    ? null
    : `serving the API on ${host}, beyond this machine, needs an API key`;
}

/** Serves the API alone on `host`:`port` (0: any free port); rejects with the listen error (EADDRINUSE…). */
export async function startOpenAiServer(
  service: OpenAiService,
  options: { host: string; port: number },
): Promise<OpenAiListener> {
  const { host } = options;
  const problem = keyProblem(host, service.limits().apiKey);
  if (problem) throw new Error(problem);
  let port = options.port;
  const routes = openAiRoutes(service, { hostPort: () => (isLoopback(host) ? port : null) });
  // "localhost" may resolve to ::1 first; clients expect 127.0.0.1.
  const listening = await listen(routes.handle, port, host === 'localhost' ? '127.0.0.1' : host);
  port = listening.port;
  return { port, url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/v1`, close: () => listening.close() };
}

/** Starts, restarts and stops the listener as the settings say; one change at a time. */
export class OpenAiServerSwitch {
  #running: { address: string; listener: OpenAiListener } | null = null;
  #error: string | null = null;
  #changes: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(private readonly service: OpenAiService) {}

  get url(): string | null {
    return this.#running?.listener.url ?? null;
  }

  /** Why the listener is not running although the settings ask for it. */
  get error(): string | null {
    return this.#error;
  }

  /** Brings the listener in line with the saved settings. */
  apply(): Promise<void> {
    return this.#change(() => (this.#closed ? null : this.service.ctx.settings.openAiServer.get()));
  }

  /** Stops the listener for good (the back end is closing; its database may be closed already). */
  close(): Promise<void> {
    this.#closed = true;
    return this.#change(() => null);
  }

  /** Runs one change after the ones before it (never rejects: a failure is the status' error); `wanted`: the settings to serve, null for none. */
  #change(wanted: () => OpenAiServerSettings | null): Promise<void> {
    this.#changes = this.#changes.then(async () => {
      try {
        await this.#apply(wanted());
      } catch (err) {
        this.#error = (err as Error).message;
      }
    });
    return this.#changes;
  }

  async #apply(settings: OpenAiServerSettings | null): Promise<void> {
    const wanted = settings?.enabled ? `${settings.host}:${settings.port}` : null;
    if (this.#running?.address === wanted && wanted !== null) return;
    await this.#running?.listener.close();
    this.#running = null;
    this.#error = null;
    if (!settings || wanted === null) return;
    try {
      this.#running = { address: wanted, listener: await startOpenAiServer(this.service, settings) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new Error(`port ${settings.port} is already in use on ${settings.host}`);
      if (code === 'EADDRNOTAVAIL') throw new Error(`${settings.host} is not an address of this machine`);
      throw err;
    }
  }
}
