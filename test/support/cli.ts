import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './paths';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `gufo <args>` the way a user's `npx gufo` does: through bin/gufo.mjs. */
export function gufo(args: string[], env: NodeJS.ProcessEnv = {}, timeout = 60_000): CliResult {
  const r = spawnSync(process.execPath, [join(REPO_ROOT, 'bin/gufo.mjs'), ...args], {
    encoding: 'utf8',
    env: { ...process.env, ...env },
    timeout,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/**
 * Like gufo(), without blocking this process: for commands that talk to servers the test runs
 * in-process (a spawnSync would keep them from answering).
 */
export function gufoAsync(args: string[], env: NodeJS.ProcessEnv = {}, timeout = 60_000): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(REPO_ROOT, 'bin/gufo.mjs'), ...args], {
      env: { ...process.env, ...env },
      timeout,
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}
