import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { createBackend } from '../../backend/index';
import { startOpenAiServer } from '../../backend/openai/listener';
import { openAiRoutes } from '../../backend/openai/routes';
import { openAiServiceOf } from '../../backend/openai/service';
import { dataDir } from '../../node/data-dir';
import { startServer } from '../../node/server/index';
import { openAiServerSettingProblem } from '../../node/store/settings';
import type { OpenAiServerSettings } from '../../../src-preload/api';
import { CliError, CTX_OPTION, integerOption, log, type Command, type CommandArgs } from '../command';
import { KV_CACHE_TYPES } from '../../../src-preload/api/kv-cache';
import { KV_CACHE_OPTIONS, kvCacheOptions } from './run';
import { PACKAGE_ROOT } from '../package-root';

const RENDERER_DIR = join(PACKAGE_ROOT, 'out', 'renderer');
const DEFAULT_PORT = 7823;
/**
 * Sequences (KV caches) per loaded model. One, as Ollama's OLLAMA_NUM_PARALLEL: each slot holds a
 * KV cache of the whole context (llama-server's 4 slots share one), so more is the user's choice.
 */
const DEFAULT_PARALLEL = 1;
const MAX_PARALLEL = 64;

export const serveCommand: Command = {
  help: `Usage: gufo serve [--port N] [--host 127.0.0.1] [--api-key KEY] [--models-cap N] [--ctx N]
                  [--parallel N] [--cache-type-k T] [--cache-type-v T] [--api-port N]
                  [--api-host ADDRESS] [--origins LIST]

Serves the Gufo UI and its API on this machine only, then prints the address to open:
  Gufo is running at http://127.0.0.1:<port>/?token=<token>
The token is new on every launch; the API refuses calls without it.
Data (database, exports) lives in GUFO_HOME, else the OS user-data folder; GUFO_MODELS_DIRS
names extra model folders (separated by the OS path delimiter).
Builds the UI first (out/renderer) when it has not been built. Stop with Ctrl+C.

The OpenAI-compatible API (GET /v1/models, POST /v1/chat/completions, POST /v1/completions,
POST /v1/responses, POST /v1/embeddings, GET /metrics) is served on the same port as the UI, at
http://127.0.0.1:<port>/v1, unless --api-port gives it a port of its own, with Ollama's API
(/api/chat, /api/generate, ...) and llama.cpp's (/health, /completion, /tokenize, /detokenize)
at its root. It needs no token: programs on this machine may call
it, web pages may not (a request with a foreign Origin is refused) unless their origin is allowed
(--origins). With an API key (--api-key,
GUFO_API_KEY, or the app's settings), clients must send "Authorization: Bearer <key>".
Model ids are the file names without .gguf, lower-cased (GET /v1/models lists them).

Options:
  --port N            port to listen on; 0 picks a free one (default ${DEFAULT_PORT})
  --host ADDRESS      address to listen on; only 127.0.0.1 is allowed
  --api-key KEY       key the OpenAI-compatible API requires (default: GUFO_API_KEY, else the settings')
  --models-cap N      models loaded at once, one engine process each; the least recently used
                      one is unloaded for another (default 1)
  -c, --ctx N         largest context a model is loaded with for API requests (default: the
                      settings', 4096; a model's trained context when smaller)
  --parallel N        sequences each loaded model keeps, each in a KV cache of the whole context
                      (N times one cache's memory): a request continues the one sharing the
                      longest prefix with its prompt, else the least recently used (default ${DEFAULT_PARALLEL})
  --cache-type-k T    KV cache type for K of the models loaded for API requests and for chats
                      (a chat's own setting, Chat settings › KV cache, overrides it):
                      ${KV_CACHE_TYPES.join(', ')} (default f16), as llama.cpp's --cache-type-k
  --cache-type-v T    the same for V
  --api-port N        serve the OpenAI-compatible API on this port of its own instead
  --api-host ADDRESS  address for --api-port (default 127.0.0.1); any other than 127.0.0.1 or
                      localhost serves beyond this machine and needs an API key
  --origins LIST      web pages that may call the API, comma-separated origins with * for any
                      text: "https://app.example.com,chrome-extension://*,http://localhost:*"
                      (default: GUFO_ORIGINS, else the settings'; as Ollama's OLLAMA_ORIGINS)
`,
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    'api-key': { type: 'string' },
    'models-cap': { type: 'string' },
    ctx: CTX_OPTION,
    parallel: { type: 'string' },
    ...KV_CACHE_OPTIONS,
    'api-port': { type: 'string' },
    'api-host': { type: 'string' },
    origins: { type: 'string' },
  },
  async run(args) {
    const port = integerOption(args, 'port', DEFAULT_PORT);
    if (port > 65535) throw new CliError(`--port must be at most 65535, got ${port}`);
    const host = args.values.host ?? '127.0.0.1';
    if (host !== '127.0.0.1') {
      throw new CliError(`--host must be 127.0.0.1: Gufo's API is never exposed beyond this machine`);
    }
    const api = apiOptions(args);
    const modelsCap = integerOption(args, 'models-cap', 1);
    if (modelsCap < 1) throw new CliError('--models-cap must be at least 1');
    const parallel = integerOption(args, 'parallel', DEFAULT_PARALLEL);
    if (parallel < 1 || parallel > MAX_PARALLEL)
      throw new CliError(`--parallel must be between 1 and ${MAX_PARALLEL}, got ${parallel}`);

    if (!existsSync(join(RENDERER_DIR, 'index.html'))) await buildRenderer();

    const backend = createBackend({
      mode: 'browser',
      dataDir: dataDir(),
      engineCap: modelsCap,
      kvTypes: kvCacheOptions(args),
      parallel,
    });
    for (const notice of backend.context.notices) log(notice);
    const service = openAiServiceOf(backend.context);
    service.override({ apiKey: api.apiKey, contextSize: api.contextSize, origins: api.origins });
    const servers: { close(): Promise<void> }[] = [];
    try {
      const alone =
        api.port === undefined ? null : await startOpenAiServer(service, { host: api.host, port: api.port });
      if (alone) servers.push(alone);
      const mounted = alone ? undefined : openAiRoutes(service, { hostPort: () => null });
      const server = await startServer({
        port,
        host,
        rendererDir: RENDERER_DIR,
        api: backend.api,
        events: backend.events,
        mounted,
      });
      servers.push(server);
      process.stdout.write(`Gufo is running at ${server.url}\n`);
      service.servedUrl = alone?.url ?? `http://${host}:${server.port}/v1`;
      log(
        `OpenAI-compatible API at ${service.servedUrl}${service.limits().apiKey === null ? '' : ' (API key required)'}.`,
      );
    } catch (err) {
      for (const server of servers) await server.close();
      await backend.close();
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
        throw new CliError(
          `port ${(err as { port?: number }).port ?? port} is already in use (try --port 0 or --api-port 0 for any free port)`,
        );
      }
      throw err;
    }
    log(`Data: ${backend.context.dataDir}. Press Ctrl+C to stop.`);

    const signal = await new Promise<NodeJS.Signals>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    log(`Stopping (${signal}).`);
    for (const server of servers) await server.close();
    await backend.close();
  },
};

/** The OpenAI-compatible API's options, each checked as the settings check it. */
function apiOptions(args: CommandArgs): {
  apiKey?: string;
  contextSize?: number;
  port?: number;
  host: string;
  origins?: string[];
} {
  const checked = <K extends keyof OpenAiServerSettings>(flag: string, field: K, value: unknown) => {
    const problem = openAiServerSettingProblem(field, value);
    if (problem) throw new CliError(`--${flag} ${problem}, got ${JSON.stringify(value)}`);
    return value as OpenAiServerSettings[K];
  };
  const raw = (name: string) => args.values[name] as string | undefined;
  const key = raw('api-key');
  const host = raw('api-host');
  if (host !== undefined && raw('api-port') === undefined) throw new CliError('--api-host goes with --api-port');
  return {
    apiKey: key === undefined ? undefined : (checked('api-key', 'apiKey', key) ?? undefined),
    contextSize: raw('ctx') === undefined ? undefined : checked('ctx', 'contextSize', integerOption(args, 'ctx', 0)),
    port: raw('api-port') === undefined ? undefined : checked('api-port', 'port', integerOption(args, 'api-port', 0)),
    host: host === undefined ? '127.0.0.1' : checked('api-host', 'host', host),
    origins:
      raw('origins') === undefined
        ? undefined
        : checked(
            'origins',
            'origins',
            raw('origins')!
              .split(',')
              .map((o) => o.trim())
              .filter((o) => o !== ''),
          ),
  };
}

/** `electron-vite build`, with its output on stderr: stdout carries only the address line. */
async function buildRenderer(): Promise<void> {
  log('The UI has not been built yet; building it (electron-vite build)...');
  const require = createRequire(import.meta.url);
  const bin = join(require.resolve('electron-vite/package.json'), '..', 'bin', 'electron-vite.js');
  const code = await new Promise<number | null>((done, fail) => {
    spawn(process.execPath, [bin, 'build'], { cwd: PACKAGE_ROOT, stdio: ['ignore', 2, 2] })
      .once('error', fail)
      .once('exit', done);
  });
  if (code !== 0 || !existsSync(join(RENDERER_DIR, 'index.html'))) {
    throw new CliError('building the UI failed (see the output above); try `npm run build`');
  }
}
