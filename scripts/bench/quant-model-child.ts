/**
 * One side of `bench:quant -- --model` in its own process: `<ours|llama> IN OUT TYPE THREADS`,
 * prints { seconds, cpuSeconds, peakRssBytes } on stdout: wall time of the run; CPU time and peak RSS
 * of this process, worker threads included (on a busy machine CPU time is the steadier figure).
 * Ours is the built CLI (out/cli: its workers are bundles, as users run them), started in this
 * process, which tsx has loaded as for llama's side: both start from the same footprint.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { isQuantFileType } from '../../src-main/core/quant-recipes';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import { llamaModelQuantize } from '../../test/support/llama-quantize';

export interface ChildResult {
  seconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
}

const BUILT_CLI = fileURLToPath(new URL('../../out/cli/gufo.js', import.meta.url));

const [side, input, output, type, threads] = process.argv.slice(2);
if (!input || !output || !type || !threads || !isQuantFileType(type) || (side !== 'ours' && side !== 'llama')) {
  throw new Error('usage: quant-model-child.ts <ours|llama> IN OUT TYPE THREADS');
}
const started = performance.now();
const cpuBefore = process.cpuUsage();
const report = () => {
  const cpu = process.cpuUsage(cpuBefore);
  const result: ChildResult = { seconds: (performance.now() - started) / 1000, cpuSeconds: (cpu.user + cpu.system) / 1e6, peakRssBytes: process.resourceUsage().maxRSS * 1024 };
  console.log(JSON.stringify(result));
};
if (side === 'ours') {
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run npm run build:cli`);
  process.argv = [process.argv[0]!, BUILT_CLI, 'quantize', input, output, '--type', type, '--threads', threads];
  // The CLI runs the command and exits: its exit code is the run's.
  process.on('exit', (code) => code === 0 && report());
  await import(BUILT_CLI);
} else {
  const r = llamaModelQuantize(input, output, llamaFileTypeId(type)!, { nthread: Number(threads) });
  if (!r.ok) throw new Error(`llama_model_quantize failed:\n${r.log}`);
  report();
}
