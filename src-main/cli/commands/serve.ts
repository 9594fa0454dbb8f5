import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { createBackend } from '../../backend/index';
import { dataDir } from '../../node/data-dir';
import { startServer } from '../../node/server/index';
import { CliError, integerOption, log, type Command } from '../command';

const ROOT = resolve(import.meta.dirname, '../../..');
const RENDERER_DIR = join(ROOT, 'out', 'renderer');
const DEFAULT_PORT = 7823;

export const serveCommand: Command = {
  name: 'serve',
  summary: 'run the Gufo UI in a browser (no Electron needed), on 127.0.0.1',
  help: `Usage: gufo serve [--port N] [--host 127.0.0.1]

Serves the Gufo UI and its API on this machine only, then prints the address to open:
  Gufo is running at http://127.0.0.1:<port>/?token=<token>
The token is new on every launch; the API refuses calls without it.
Data (database, exports) lives in GUFO_HOME, else the OS user-data folder; GUFO_MODELS_DIRS
names extra model folders (separated by the OS path delimiter).
Builds the UI first (out/renderer) when it has not been built. Stop with Ctrl+C.

Options:
  --port N        port to listen on; 0 picks a free one (default ${DEFAULT_PORT})
  --host ADDRESS  address to listen on; only 127.0.0.1 is allowed
`,
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
  },
  async run(args) {
    const port = integerOption(args, 'port', DEFAULT_PORT);
    if (port > 65535) throw new CliError(`--port must be at most 65535, got ${port}`);
    const host = args.values.host ?? '127.0.0.1';
    if (host !== '127.0.0.1') {
      throw new CliError(`--host must be 127.0.0.1: Gufo's API is never exposed beyond this machine`);
    }

    if (!existsSync(join(RENDERER_DIR, 'index.html'))) await buildRenderer();

    const backend = createBackend({ mode: 'browser', dataDir: dataDir() });
    for (const notice of backend.context.notices) log(notice);
    const server = await startServer({ port, host, rendererDir: RENDERER_DIR, api: backend.api, events: backend.events }).catch(
      async (err: unknown) => {
        await backend.close();
        if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
          throw new CliError(`port ${port} is already in use (try --port 0 for any free port)`);
        }
        throw err;
      },
    );
    process.stdout.write(`Gufo is running at ${server.url}\n`);
    log(`Data: ${backend.context.dataDir}. Press Ctrl+C to stop.`);

    const signal = await new Promise<NodeJS.Signals>((done) => {
      process.once('SIGINT', done);
      process.once('SIGTERM', done);
    });
    log(`Stopping (${signal}).`);
    await server.close();
    await backend.close();
  },
};

/** `electron-vite build`, with its output on stderr: stdout carries only the address line. */
async function buildRenderer(): Promise<void> {
  log('The UI has not been built yet; building it (electron-vite build)...');
  const require = createRequire(import.meta.url);
  const bin = join(require.resolve('electron-vite/package.json'), '..', 'bin', 'electron-vite.js');
  const code = await new Promise<number | null>((done, fail) => {
    spawn(process.execPath, [bin, 'build'], { cwd: ROOT, stdio: ['ignore', 2, 2] })
      .once('error', fail)
      .once('exit', done);
  });
  if (code !== 0 || !existsSync(join(RENDERER_DIR, 'index.html'))) {
    throw new CliError('building the UI failed (see the output above); try `npm run build`');
  }
}
