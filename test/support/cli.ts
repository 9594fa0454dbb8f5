import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { adapterJson, memoryJson } from '../../src-main/cli/commands/run';
import type { ggufToJson } from '../../src-main/core/gguf/json';
import type { ModelSummary } from '../../src-main/core/model-summary';
import type { BenchResult, GenerateResult } from '../../src-main/engine-wire/protocol';
import { REPO_ROOT } from './paths';

export interface CliResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** The document `gufo inspect --json` prints, as the command builds it. */
export type InspectJson = ReturnType<typeof ggufToJson> & {
  summary: ModelSummary & { guessedFileType: string | null };
};

/** What `gufo run --json` and `gufo bench --json` say of the GPU and the model's memory. */
interface EngineJson {
  adapter: ReturnType<typeof adapterJson>;
  memory: ReturnType<typeof memoryJson>;
}

/** The document `gufo run --json` prints (logprobs with --top-logprobs only). */
export type RunJson = EngineJson &
  Pick<GenerateResult, 'ids' | 'stopReason' | 'logprobs'> & {
    promptIds: number[];
    text: string;
    timings: Record<'loadMs' | 'ttftMs' | 'prefillTokS' | 'decodeTokS', number>;
  };

/** The document `gufo bench --json` prints. */
export type BenchJson = EngineJson & BenchResult;

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
