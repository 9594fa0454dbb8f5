/**
 * Start-up of the `gufo` command: `gufo --help` through bin/gufo.mjs (the built CLI, as `npx gufo`
 * runs it) against a bare `node -e ''`, alternating so that machine noise hits both; the median
 * wall time of RUNS runs each, after one warm-up, and their ratio (the goal: at most 3×).
 *
 *   tsx scripts/bench.ts cli [--json]      (npm run bench:cli)
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const RUNS = 10;
const BIN = fileURLToPath(new URL('../../bin/gufo.mjs', import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

/** Wall milliseconds of one `node <args>`; throws with its stderr when it fails. */
function wallMs(args: string[]): number {
  const start = performance.now();
  // Without GUFO_DEV: the built CLI, not the sources through tsx.
  const r = spawnSync(process.execPath, args, {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, GUFO_DEV: undefined },
  });
  const ms = performance.now() - start;
  if (r.status !== 0) throw new Error(`node ${args.join(' ')} failed: ${r.stderr.toString().trim()}`);
  return ms;
}

export function benchCli({ json }: { json: boolean }): void {
  const gufo = [BIN, '--help'];
  const node = ['-e', ''];
  wallMs(gufo);
  wallMs(node);
  const gufoMs: number[] = [];
  const nodeMs: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    gufoMs.push(wallMs(gufo));
    nodeMs.push(wallMs(node));
  }
  const result = {
    suite: 'cli',
    runs: RUNS,
    gufoHelpMs: median(gufoMs),
    nodeMs: median(nodeMs),
    ratio: median(gufoMs) / median(nodeMs),
  };
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    console.log(`gufo --help  ${result.gufoHelpMs.toFixed(1)} ms`);
    console.log(`node -e ''   ${result.nodeMs.toFixed(1)} ms`);
    console.log(
      `ratio        ${result.ratio.toFixed(2)}× (goal: at most 3×), median of ${RUNS} runs each after a warm-up`,
    );
  }
}
