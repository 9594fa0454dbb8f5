import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface GufoServe {
  process: ChildProcess;
  /** The printed address, token included. */
  url: URL;
  /** Stops the server; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** Starts `gufo serve --port 0` (and `args`) with `env` added, and waits for the address line on stdout. */
export async function startGufoServe(env: NodeJS.ProcessEnv = {}, args: readonly string[] = []): Promise<GufoServe> {
  const child = spawn(process.execPath, ['bin/gufo.mjs', 'serve', '--port', '0', ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The first line on stdout is the address, exactly; logs go to stderr.
  const lines = createInterface({ input: child.stdout });
  const first = await Promise.race([
    new Promise<string>((resolve) => lines.once('line', resolve)),
    new Promise<never>((_, reject) => child.once('exit', (code) => reject(new Error(`gufo serve exited (${code})`)))),
  ]);
  const match = /^Gufo is running at (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)$/.exec(first);
  if (!match) throw new Error(`unexpected first stdout line of gufo serve: ${first}`);
  return {
    process: child,
    url: new URL(match[1]!),
    stop: async () => {
      if (child.exitCode !== null) return child.exitCode;
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      return exited;
    },
  };
}
