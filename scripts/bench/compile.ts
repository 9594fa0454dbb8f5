/**
 * `tsx scripts/bench.ts compile [--json]` (`npm run bench -- compile`): what a first load of
 * stories260K costs in a fresh process, where every pipeline is compiled (and, through
 * kernel-warm-up.ts, run once), with WebGPU's zero-fill of workgroup memory turned off (Gufo's
 * default, gpu/device.ts) against kept on (GUFO_WORKGROUP_ZERO_FILL=1, Dawn's default),
 * alternating so that machine noise hits both: median CPU and wall time of RUNS loads each, and
 * their ratio. Without GUFO_ADAPTER or VK_ICD_FILENAMES, the engine runs on SwiftShader where it
 * is installed.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { STORIES_260K } from '../../test/support/paths';

const RUNS = 5;
const CHILD = fileURLToPath(new URL('./compile-child.ts', import.meta.url));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;

interface Load {
  cpuMs: number;
  wallMs: number;
}

function load(zeroFill: boolean): Load {
  const env: NodeJS.ProcessEnv = { ...process.env, GUFO_WORKGROUP_ZERO_FILL: zeroFill ? '1' : '0' };
  if (!env.GUFO_ADAPTER && !env.VK_ICD_FILENAMES && existsSync(SWIFTSHADER_ICD)) env.VK_ICD_FILENAMES = SWIFTSHADER_ICD;
  const r = spawnSync(process.execPath, ['--import', 'tsx', CHILD, STORIES_260K], { env, encoding: 'utf8' });
  const line = r.stdout.split('\n').find((l) => l.startsWith('{'));
  if (r.status !== 0 || !line) throw new Error(`compile-child.ts failed: ${r.stderr.trim()}`);
  return JSON.parse(line) as Load;
}

export function benchCompile({ json }: { json: boolean }): void {
  const without: Load[] = [];
  const withFill: Load[] = [];
  for (let i = 0; i < RUNS; i++) {
    process.stderr.write(`run ${i + 1} of ${RUNS}\n`);
    without.push(load(false));
    withFill.push(load(true));
  }
  const side = (loads: Load[]) => ({
    cpuMs: median(loads.map((l) => l.cpuMs)),
    wallMs: median(loads.map((l) => l.wallMs)),
  });
  const result = {
    suite: 'compile',
    model: 'stories260K',
    runs: RUNS,
    noZeroFill: side(without),
    zeroFill: side(withFill),
    cpuRatio: side(without).cpuMs / side(withFill).cpuMs,
  };
  if (json) console.log(JSON.stringify(result, null, 2));
  else {
    const row = (name: string, s: { cpuMs: number; wallMs: number }) =>
      console.log(
        `${name.padEnd(34)} ${s.cpuMs.toFixed(0).padStart(6)} ms CPU ${s.wallMs.toFixed(0).padStart(6)} ms wall`,
      );
    row('first load, no zero-fill (Gufo)', result.noZeroFill);
    row('first load, zero-fill (Dawn)', result.zeroFill);
    console.log(`CPU ratio ${result.cpuRatio.toFixed(2)}×, medians of ${RUNS} loads each, alternating`);
  }
}
