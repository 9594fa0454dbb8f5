/**
 * llama.cpp's side of `bench:quant -- --model` in its own process: `IN OUT TYPE THREADS` runs
 * llama_model_quantize (node-llama-cpp's libllama, through koffi) and prints
 * { seconds, cpuSeconds, peakRssBytes } on stdout: wall time and CPU time of the call (worker
 * threads included; on a busy machine CPU time is the steadier figure), peak RSS of this process
 * (Node with tsx and koffi loaded, libllama's footprint on top).
 */
import { isQuantFileType } from '../../src-main/core/quant-recipes';
import { llamaFileTypeId } from '../../src-main/core/llama-file-types';
import { llamaModelQuantize } from '../../test/support/llama-quantize';

export interface ChildResult {
  seconds: number;
  cpuSeconds: number;
  peakRssBytes: number;
}

const [input, output, type, threads] = process.argv.slice(2);
if (!input || !output || !type || !threads || !isQuantFileType(type))
  throw new Error('usage: quant-model-child.ts IN OUT TYPE THREADS');
const started = performance.now();
const cpuBefore = process.cpuUsage();
const r = llamaModelQuantize(input, output, llamaFileTypeId(type)!, { nthread: Number(threads) });
if (!r.ok) throw new Error(`llama_model_quantize failed:\n${r.log}`);
const cpu = process.cpuUsage(cpuBefore);
const result: ChildResult = {
  seconds: (performance.now() - started) / 1000,
  cpuSeconds: (cpu.user + cpu.system) / 1e6,
  peakRssBytes: process.resourceUsage().maxRSS * 1024,
};
console.log(JSON.stringify(result));
