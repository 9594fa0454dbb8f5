import { spawnSync } from 'node:child_process';
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
