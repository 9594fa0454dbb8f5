/**
 * `npm run bench:vs-llama -- [--model FILE | --shape 335mb|1b|tiny|gqa-1024] [--type Q4_K_M|Q8_0] [-p 64] [-n 16]
 *   [--depth 0] [--threads 2] [--runs 3] [--adapters lavapipe,swiftshader] [--json]`
 *
 * Gufo against llama.cpp on the CPU, side by side in one run, on the same file with the same prompt
 * length and token count: `gufo bench --json` (the sources, GUFO_DEV=1) on each software Vulkan
 * adapter that is installed, and llama.cpp through node-llama-cpp's prebuilt CPU build with
 * --threads threads (scripts/device-kit/llama-decode.mjs), both after --depth tokens already in the
 * context (llama-bench's -d; llama.cpp without flash attention). Each engine runs in its own process,
 * --runs times, the engines taking turns; rows are medians. Prints a table, or the rows as JSON.
 *
 * Without --model, the model is a random llama written by the device kit's make-model (Gufo's
 * writer and encoders): the 335 MB one of issue #16 or a Llama-3.2-1B shape, in --type, cached in
 * ~/.cache/gufo-bench (XDG_CACHE_HOME) under a name that changes when make-model.ts does.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs } from 'node:util';
import { isQuantFileType } from '../../src-main/core/quant-recipes';
import { LAVAPIPE_ICD, SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { REPO_ROOT } from '../../test/support/paths';
import { vsLlamaRows, vsLlamaTable, type EngineRun, type Measured } from './vs-llama-rows';

const ADAPTERS: Record<string, string> = { lavapipe: LAVAPIPE_ICD, swiftshader: SWIFTSHADER_ICD };
/** --shape's names for make-model's shapes. */
const SHAPES: Record<string, string> = { '335mb': '335mb', '1b': 'llama-3.2-1b', tiny: 'tiny', 'gqa-1024': 'gqa-1024' };
const MAKE_MODEL = join(REPO_ROOT, 'scripts/device-kit/make-model.ts');
const LLAMA_DECODE = join(REPO_ROOT, 'scripts/device-kit/llama-decode.mjs');

const { values } = parseArgs({
  options: {
    model: { type: 'string' },
    shape: { type: 'string', default: '335mb' },
    type: { type: 'string', default: 'Q4_K_M' },
    p: { type: 'string', short: 'p', default: '64' },
    n: { type: 'string', short: 'n', default: '16' },
    depth: { type: 'string', default: '0' },
    threads: { type: 'string', default: '2' },
    runs: { type: 'string', default: '3' },
    adapters: { type: 'string', default: Object.keys(ADAPTERS).join(',') },
    json: { type: 'boolean' },
  },
});

function positive(name: string, min: number): number {
  const x = Number(values[name as keyof typeof values]);
  if (!Number.isInteger(x) || x < min)
    throw new Error(`--${name} ${values[name as keyof typeof values]}: expected a whole number ≥ ${min}`);
  return x;
}

/** Runs node with `args`; its stdout, or an Error naming `what` with the end of its stderr. */
function node(args: string[], what: string, env: NodeJS.ProcessEnv = process.env): string {
  process.stderr.write(`${what}...\n`);
  const r = spawnSync(process.execPath, args, {
    cwd: REPO_ROOT,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    maxBuffer: 64 * 2 ** 20,
  });
  if (r.status !== 0)
    throw new Error(
      `${what} failed (exit ${r.status ?? r.signal}): ${(r.stderr ?? '').trim().split('\n').slice(-5).join(' | ')}`,
    );
  return r.stdout;
}

/** `node`'s stdout as the one JSON document it should be. */
function nodeJson(args: string[], what: string, env?: NodeJS.ProcessEnv): Record<string, unknown> {
  const out = node(args, what, env);
  try {
    return JSON.parse(out) as Record<string, unknown>;
  } catch {
    throw new Error(`${what} printed no JSON document on stdout: ${JSON.stringify(out.slice(0, 300))}`);
  }
}

/** The cached random model of --shape and --type, written first if missing. */
function generatedModel(): string {
  const shape = SHAPES[values.shape];
  if (!shape) throw new Error(`--shape ${values.shape}: expected one of ${Object.keys(SHAPES).join(', ')}`);
  if (!isQuantFileType(values.type))
    throw new Error(`--type ${values.type}: not a llama.cpp file type (e.g. Q4_K_M, Q8_0)`);
  const version = createHash('sha256').update(readFileSync(MAKE_MODEL)).digest('hex').slice(0, 8);
  const cache = join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'gufo-bench');
  const file = join(cache, `${values.shape}-${values.type}-${version}.gguf`);
  if (existsSync(file)) return file;
  mkdirSync(cache, { recursive: true });
  // Written aside and renamed: an interrupted write never leaves a cached half model.
  const partial = `${file}.partial`;
  try {
    node(
      ['--import', 'tsx', MAKE_MODEL, values.type, partial, shape],
      `writing a random ${values.shape} ${values.type} to ${file}`,
    );
    renameSync(partial, file);
  } finally {
    rmSync(partial, { force: true });
  }
  return file;
}

function modelFile(): string {
  if (values.model === undefined) return generatedModel();
  if (!existsSync(values.model)) throw new Error(`--model ${values.model}: no such file`);
  return values.model;
}

function adapters(): string[] {
  return values.adapters.split(',').filter((name) => {
    if (!(name in ADAPTERS)) throw new Error(`--adapters: ${name} is not one of ${Object.keys(ADAPTERS).join(', ')}`);
    if (existsSync(ADAPTERS[name]!)) return true;
    process.stderr.write(`${name}: skipped, its driver ${ADAPTERS[name]} is not installed\n`);
    return false;
  });
}

const file = modelFile();
const [p, n, depth, threads, runs] = [
  positive('p', 1),
  positive('n', 2),
  positive('depth', 0),
  positive('threads', 1),
  positive('runs', 1),
];
const gufo: Measured[] = adapters().map((adapter) => ({ adapter, device: '', runs: [] }));
const llama: Measured = { adapter: 'cpu', device: '', runs: [] };
for (let run = 1; run <= runs; run++) {
  for (const m of gufo) {
    const env = { ...process.env, GUFO_DEV: '1', VK_ICD_FILENAMES: ADAPTERS[m.adapter] };
    const out = nodeJson(
      ['bin/gufo.mjs', 'bench', file, '-p', String(p), '-n', String(n), '-d', String(depth), '--json'],
      `run ${run}/${runs}: gufo bench on ${m.adapter}`,
      env,
    );
    m.device = (out.adapter as { name: string }).name;
    m.runs.push(out as unknown as EngineRun);
  }
  const out = nodeJson(
    [LLAMA_DECODE, file, String(p), String(n), String(threads), `--depth=${depth}`],
    `run ${run}/${runs}: llama.cpp, CPU, ${threads} threads`,
  );
  llama.device = out.adapter as string;
  llama.runs.push(out as unknown as EngineRun);
}
const rows = vsLlamaRows(basename(file), gufo, llama);
process.stdout.write(
  values.json
    ? JSON.stringify(rows, null, 2) + '\n'
    : `-p ${p} -n ${n}${depth ? ` -d ${depth}` : ''}\n${vsLlamaTable(rows)}`,
);
