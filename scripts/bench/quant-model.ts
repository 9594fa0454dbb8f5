/**
 * `npm run bench:quant -- --model [--threads N] [--type Q4_K_M] [--rounds R]`: a whole-model quantization, a
 * ~150 MB random F32 Llama (generated once, cached in the temp folder) to Q4_K_M on 2 threads,
 * by Gufo and by llama.cpp's llama_model_quantize (node-llama-cpp's libllama), in the same run,
 * each in its own process so its peak RSS is its own. Gufo's side is `gufo quantize` as a user
 * runs it (bin/gufo.mjs, the built CLI: its workers are bundles), timed as a whole process from
 * Node's start (quant-model-measure.mjs); llama.cpp's side is a Node process (tsx, koffi) timed
 * around the call (quant-model-child.ts), so its start-up is not counted. With --rounds R the two
 * alternate R times (on a shared machine load comes and goes) and the figures are the medians.
 * Goals (issue 18): wall ≤ 1× llama.cpp's, peak RSS ≤ 2×.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isQuantFileType } from '../../src-main/core/quant-recipes';
import { writeRandomModel } from '../../test/support/test-models';
import type { ChildResult } from './quant-model-child';

/** 5 layers of 768 × 2048: 37M weights, 145 MB of F32. */
const SHAPE = { nLayer: 5, nEmbd: 768, nFf: 2048, nHead: 12, seed: 18 };
const CHILD = fileURLToPath(new URL('./quant-model-child.ts', import.meta.url));
const MEASURE = fileURLToPath(new URL('./quant-model-measure.mjs', import.meta.url));
const GUFO = fileURLToPath(new URL('../../bin/gufo.mjs', import.meta.url));
const BUILT_CLI = fileURLToPath(new URL('../../out/cli/gufo.js', import.meta.url));
const GOALS = { wall: 1, rss: 2 } as const;

function flag(args: readonly string[], name: string, fallback: string): string {
  const i = args.indexOf(name);
  if (i < 0) return fallback;
  const value = args[i + 1];
  if (!value || value.startsWith('--')) throw new Error(`${name} needs a value`);
  return value;
}

/** The cached source model (written under a temporary name, then renamed: a killed run leaves no half file). */
async function sourceModel(): Promise<string> {
  const dir = join(tmpdir(), 'gufo-bench-quant-model');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `llama-${SHAPE.nLayer}x${SHAPE.nEmbd}x${SHAPE.nFf}-f32.gguf`);
  if (!existsSync(path)) {
    process.stderr.write(`writing ${path}\n`);
    await writeRandomModel(`${path}.part`, SHAPE);
    renameSync(`${path}.part`, path);
  }
  return path;
}

function runChild(side: 'ours' | 'llama', input: string, output: string, type: string, threads: number): ChildResult {
  const args =
    side === 'llama'
      ? ['--import', 'tsx', CHILD, input, output, type, String(threads)]
      : ['--import', MEASURE, GUFO, 'quantize', input, output, '--type', type, '--threads', String(threads)];
  // The built CLI, as users run it, not the sources.
  const { GUFO_DEV: _dev, ...rest } = process.env;
  // gufo quantize records its export in the app's database: a scratch one, not the user's.
  const env = { ...rest, GUFO_HOME: join(dirname(output), 'gufo-home') };
  const stdout = execFileSync(process.execPath, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], env });
  // The measurement is the last line (gufo prints its summary before it).
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as ChildResult;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Each figure's median over the rounds. */
function medians(results: ChildResult[]): ChildResult {
  return {
    seconds: median(results.map((r) => r.seconds)),
    cpuSeconds: median(results.map((r) => r.cpuSeconds)),
    peakRssBytes: median(results.map((r) => r.peakRssBytes)),
  };
}

export async function benchQuantModel({ json, args }: { json: boolean; args: readonly string[] }): Promise<void> {
  const type = flag(args, '--type', 'Q4_K_M').toUpperCase();
  if (!isQuantFileType(type)) throw new Error(`--type: unknown file type "${type}"`);
  const threads = Number(flag(args, '--threads', '2'));
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`--threads must be a whole number of at least 1, not "${flag(args, '--threads', '2')}"`);
  const rounds = Number(flag(args, '--rounds', '1'));
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number of at least 1, not "${flag(args, '--rounds', '1')}"`);
  if (!existsSync(BUILT_CLI)) throw new Error(`${BUILT_CLI} is missing: run npm run build:cli`);
  const input = await sourceModel();
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-quant-'));
  try {
    const runs: { llama: ChildResult; ours: ChildResult }[] = [];
    let same = true;
    for (let round = 0; round < rounds; round++) {
      // llama.cpp first warms the page cache for both.
      const llama = runChild('llama', input, join(dir, 'llama.gguf'), type, threads);
      const ours = runChild('ours', input, join(dir, 'ours.gguf'), type, threads);
      same &&= spawnSync('cmp', ['-s', join(dir, 'llama.gguf'), join(dir, 'ours.gguf')]).status === 0;
      for (const f of ['llama.gguf', 'ours.gguf']) rmSync(join(dir, f));
      runs.push({ llama, ours });
    }
    const ours = medians(runs.map((r) => r.ours));
    const llama = medians(runs.map((r) => r.llama));
    const result = {
      suite: 'quant-model',
      model: { path: input, bytes: statSync(input).size, shape: SHAPE },
      type,
      threads,
      rounds,
      ours,
      llama,
      wallRatio: ours.seconds / llama.seconds,
      cpuRatio: ours.cpuSeconds / llama.cpuSeconds,
      rssRatio: ours.peakRssBytes / llama.peakRssBytes,
      identical: same,
      goals: GOALS,
    };
    if (json) return console.log(JSON.stringify(result, null, 2));
    const mb = (b: number) => `${(b / 2 ** 20).toFixed(0)} MiB`;
    console.log(
      `${type}, ${threads} threads, ${mb(result.model.bytes)} F32 source (${input})${rounds > 1 ? `, medians of ${rounds} rounds` : ''}`,
    );
    const row = (name: string, wall: string, cpu: string, rss: string) =>
      console.log(`${name.padEnd(10)} ${wall.padStart(8)}  ${cpu.padStart(8)}  ${rss.padStart(9)}`);
    row('', 'wall', 'CPU', 'peak RSS');
    for (const [name, r] of [
      ['ours', ours],
      ['llama.cpp', llama],
    ] as const)
      row(name, `${r.seconds.toFixed(2)} s`, `${r.cpuSeconds.toFixed(2)} s`, mb(r.peakRssBytes));
    row(
      'ours/llama',
      `${result.wallRatio.toFixed(2)}×`,
      `${result.cpuRatio.toFixed(2)}×`,
      `${result.rssRatio.toFixed(2)}×`,
    );
    console.log(`goals: wall ≤ ${GOALS.wall}×, peak RSS ≤ ${GOALS.rss}×`);
    console.log(`output ${same ? 'byte-identical to' : 'DIFFERS from'} llama.cpp's`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
