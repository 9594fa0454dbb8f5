/**
 * Benchmarks: `tsx scripts/bench.ts <suite> [--json]` (`npm run bench:gguf`, `bench:quant`, `bench:tokenize`, `bench:cli`;
 * `npm run bench -- perplexity`, `npm run bench -- exactness`, `npm run bench -- first-run`, `npm run bench -- compile`, `npm run bench -- paced-waits`).
 * Progress goes to stderr so `--json` output on stdout stays parseable.
 */
import { execFile } from 'node:child_process';
import { closeSync, ftruncateSync, openSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { constants, tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ggmlTypeByName, type GgmlType } from '../src-main/core/ggml-types';
import { layoutGguf, type GgufHeaderSpec, type GgufTensorSpec } from '../src-main/core/gguf/writer';
import { GgufType, StringArray, type GgufKv } from '../src-main/core/gguf/values';

interface Options {
  json: boolean;
  /** All command-line arguments, for a suite's own flags. */
  args: readonly string[];
}

const SUITES: Record<string, (options: Options) => Promise<void>> = {
  gguf: benchGguf,
  // Loaded on demand: it pulls in every codec and llama.cpp's library, which the gguf suite needs not.
  quant: async (options) => (await import('./bench/quant')).benchQuant(options),
  tokenize: async (options) => (await import('./bench/tokenize')).benchTokenize(options),
  cli: async (options) => (await import('./bench/cli')).benchCli(options),
  perplexity: async (options) => (await import('./bench/perplexity')).benchPerplexity(options),
  exactness: async (options) => (await import('./bench/exactness')).benchExactness(options),
  'first-run': async (options) => (await import('./bench/first-run')).benchFirstRun(options),
  compile: async (options) => (await import('./bench/compile')).benchCompile(options),
  'paced-waits': async (options) => (await import('./bench/paced-waits')).benchPacedWaits(options),
};

const REPO = fileURLToPath(new URL('..', import.meta.url));
const MODELS = resolve(REPO, '..', 'shared', 'models');
const WORKER = fileURLToPath(new URL('./bench/gguf-open-worker.ts', import.meta.url));
/** Timed parses per (parser, file), after one warm-up parse; the median is reported. */
const RUNS = 7;
/** `ours` opens lazily (strings decoded on first access); `ours-full` decodes every string, as `hf` does. */
const PARSERS = ['ours', 'ours-full', 'hf'] as const;
type Parser = (typeof PARSERS)[number];

type Cell = { ms: number; peakRssDeltaBytes: number } | { error: string };
interface Row {
  file: string;
  bytes: number;
  ours: Cell;
  oursFull: Cell;
  hf: Cell;
  /** hf ms / ours ms (lazy open against full decode): above 1 means ours is faster. */
  ratio?: number;
  /** hf ms / ours-full ms: both decode every string, like for like. */
  ratioFull?: number;
}

// ---------------------------------------------------------------- gguf suite

async function benchGguf({ json }: Options): Promise<void> {
  const files = readdirSync(MODELS, { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.gguf'))
    .sort()
    .map((f) => join(MODELS, f));
  const rows: Row[] = [];
  await withSparseLlama(async (big) => {
    for (const path of [...files, big]) {
      log(`measuring ${path}`);
      const cells = {} as Record<Parser, Cell>;
      // Sequential on purpose: concurrent children would skew both times and memory.
      for (const parser of PARSERS) cells[parser] = await measure(parser, path);
      const { ours, 'ours-full': oursFull, hf } = cells;
      const ratio = msRatio(hf, ours);
      const ratioFull = msRatio(hf, oursFull);
      const file = path === big ? 'synthetic llama, sparse (tmp)' : relative(MODELS, path);
      rows.push({
        file,
        bytes: statSync(path).size,
        ours,
        oursFull,
        hf,
        ...(ratio ? { ratio } : {}),
        ...(ratioFull ? { ratioFull } : {}),
      });
    }
  });
  const geomeanRatio = geomean(rows.flatMap((r) => (r.ratio ? [r.ratio] : [])));
  const geomeanRatioFull = geomean(rows.flatMap((r) => (r.ratioFull ? [r.ratioFull] : [])));
  if (json) console.log(JSON.stringify({ suite: 'gguf', runs: RUNS, rows, geomeanRatio, geomeanRatioFull }, null, 2));
  else printTable(rows, geomeanRatio, geomeanRatioFull);
}

const msRatio = (slow: Cell, fast: Cell): number | undefined =>
  'ms' in slow && 'ms' in fast ? slow.ms / fast.ms : undefined;
const geomean = (xs: number[]): number => Math.exp(xs.reduce((s, x) => s + Math.log(x), 0) / xs.length);

/** Runs one parser on one file in a fresh process (see the worker for what it measures). */
async function measure(parser: Parser, path: string): Promise<Cell> {
  try {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', WORKER, parser, path, String(RUNS)],
      {
        cwd: REPO,
      },
    );
    const r = JSON.parse(stdout) as { error: string } | { ms: number; maxRssBytes: number; baselineRssBytes: number };
    return 'error' in r ? { error: r.error } : { ms: r.ms, peakRssDeltaBytes: r.maxRssBytes - r.baselineRssBytes };
  } catch (err) {
    // The worker itself died (out of memory, killed): its last stderr line says why.
    const stderr = (err as { stderr?: string }).stderr?.trim().split('\n').at(-1);
    return { error: stderr || (err as Error).message };
  }
}

/**
 * Calls `body` with a ~20 GB llama-like GGUF that holds only its header on disk (the tensor data
 * is a hole made by ftruncate), so a parser that reads past the header shows up at once. The file
 * is removed afterwards, also on an error, Ctrl-C or SIGTERM.
 */
async function withSparseLlama(body: (path: string) => Promise<void>): Promise<void> {
  const path = join(tmpdir(), `gufo-bench-${process.pid}.gguf`);
  const remove = () => rmSync(path, { force: true });
  const onSignal = (signal: NodeJS.Signals) => process.exit(128 + constants.signals[signal]);
  process.on('exit', remove);
  process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
  try {
    const layout = layoutGguf(sparseLlamaSpec());
    const fd = openSync(path, 'wx');
    try {
      writeFileSync(fd, layout.header);
      ftruncateSync(fd, layout.fileBytes);
    } finally {
      closeSync(fd);
    }
    await body(path);
  } finally {
    remove();
    process.off('exit', remove).off('SIGINT', onSignal).off('SIGTERM', onSignal);
  }
}

/**
 * A Llama-2-70B-shaped model cut to 40 layers (≈20.6 GB of Q4_K) with a 150k-token BPE vocabulary:
 * the header (≈11.6 MB, mostly tokens and merges) is what a parser has to get through.
 */
function sparseLlamaSpec(): GgufHeaderSpec {
  const [VOCAB, DIM, KV_DIM, FFN, LAYERS] = [150_000, 8192, 1024, 28672, 40];
  const q4k = type('Q4_K');
  const f32 = type('F32');
  const tensors: GgufTensorSpec[] = [{ name: 'token_embd.weight', type: q4k, ne: [DIM, VOCAB] }];
  for (let i = 0; i < LAYERS; i++) {
    const blk = (name: string, t: GgmlType, ne: number[]) =>
      tensors.push({ name: `blk.${i}.${name}.weight`, type: t, ne });
    blk('attn_norm', f32, [DIM]);
    blk('attn_q', q4k, [DIM, DIM]);
    blk('attn_k', q4k, [DIM, KV_DIM]);
    blk('attn_v', q4k, [DIM, KV_DIM]);
    blk('attn_output', q4k, [DIM, DIM]);
    blk('ffn_norm', f32, [DIM]);
    blk('ffn_gate', q4k, [DIM, FFN]);
    blk('ffn_up', q4k, [DIM, FFN]);
    blk('ffn_down', q4k, [FFN, DIM]);
  }
  tensors.push(
    { name: 'output_norm.weight', type: f32, ne: [DIM] },
    { name: 'output.weight', type: q4k, ne: [DIM, VOCAB] },
  );

  const tokens = syntheticVocab(VOCAB);
  const merges = tokens.slice(256).map((t, i) => `${tokens[256 + ((i * 7919) % (VOCAB - 256))]} ${t}`);
  const tokenTypes = new Int32Array(VOCAB).fill(1).fill(6, 0, 256); // 6 = byte tokens, 1 = normal
  const scores = Float32Array.from({ length: VOCAB }, (_, i) => -i);
  const u32 = (key: string, value: number): GgufKv => ({ key, type: GgufType.UINT32, value });
  const f32kv = (key: string, value: number): GgufKv => ({ key, type: GgufType.FLOAT32, value });
  const str = (key: string, value: string): GgufKv => ({ key, type: GgufType.STRING, value });
  const strings = (key: string, items: string[]): GgufKv => ({
    key,
    type: GgufType.ARRAY,
    value: { itemType: GgufType.STRING, items: StringArray.fromStrings(items) },
  });
  const kvs: GgufKv[] = [
    str('general.architecture', 'llama'),
    str('general.name', 'Gufo Bench Synthetic 34B'),
    u32('general.file_type', 15), // MOSTLY_Q4_K_M
    u32('general.quantization_version', 2),
    u32('llama.vocab_size', VOCAB),
    u32('llama.context_length', 8192),
    u32('llama.embedding_length', DIM),
    u32('llama.block_count', LAYERS),
    u32('llama.feed_forward_length', FFN),
    u32('llama.rope.dimension_count', 128),
    u32('llama.attention.head_count', DIM / 128),
    u32('llama.attention.head_count_kv', KV_DIM / 128),
    f32kv('llama.attention.layer_norm_rms_epsilon', 1e-5),
    f32kv('llama.rope.freq_base', 500_000),
    str('tokenizer.ggml.model', 'gpt2'),
    str('tokenizer.ggml.pre', 'llama-bpe'),
    strings('tokenizer.ggml.tokens', tokens),
    { key: 'tokenizer.ggml.scores', type: GgufType.ARRAY, value: { itemType: GgufType.FLOAT32, items: scores } },
    { key: 'tokenizer.ggml.token_type', type: GgufType.ARRAY, value: { itemType: GgufType.INT32, items: tokenTypes } },
    strings('tokenizer.ggml.merges', merges),
    u32('tokenizer.ggml.bos_token_id', 1),
    u32('tokenizer.ggml.eos_token_id', 2),
    str('tokenizer.chat_template', "{% for m in messages %}<|{{ m['role'] }}|>{{ m['content'] }}{% endfor %}"),
  ];
  return { version: 3, kvs, tensors };
}

function type(name: string): GgmlType {
  const t = ggmlTypeByName(name);
  if (!t) throw new Error(`unknown ggml type ${name}`);
  return t;
}

/** 256 byte tokens, then deterministic tokens of 1–8 pieces (some multi-byte) plus a unique suffix. */
function syntheticVocab(n: number): string[] {
  const pieces = ['Ġ', '▁', 'e', 't', 'a', 'o', 'in', 'er', 'th', 'an', 're', 'on', 'é', 'ст', 'の', '的', '_', '0'];
  let seed = 42;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
  const tokens = Array.from({ length: 256 }, (_, b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
  for (let i = tokens.length; i < n; i++) {
    const length = 1 + (next() % 8);
    tokens.push(Array.from({ length }, () => pieces[next() % pieces.length]).join('') + i.toString(36));
  }
  return tokens;
}

// ---------------------------------------------------------------- output

function printTable(rows: Row[], geomeanRatio: number, geomeanRatioFull: number): void {
  const cell = (c: Cell, f: (c: { ms: number; peakRssDeltaBytes: number }) => string) =>
    'error' in c ? `failed: ${c.error}` : f(c);
  const times = (r?: number) => (r ? `${r.toFixed(1)}×` : '-');
  const table = [
    [
      'file',
      'size',
      'ours ms',
      'ours-full ms',
      'hf ms',
      'hf/ours',
      'hf/ours-full',
      'ours ΔRSS',
      'ours-full ΔRSS',
      'hf ΔRSS',
    ],
    ...rows.map((r) => [
      r.file,
      bytes(r.bytes),
      cell(r.ours, (c) => c.ms.toFixed(2)),
      cell(r.oursFull, (c) => c.ms.toFixed(2)),
      cell(r.hf, (c) => c.ms.toFixed(2)),
      times(r.ratio),
      times(r.ratioFull),
      cell(r.ours, (c) => bytes(c.peakRssDeltaBytes)),
      cell(r.oursFull, (c) => bytes(c.peakRssDeltaBytes)),
      cell(r.hf, (c) => bytes(c.peakRssDeltaBytes)),
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table)
    console.log(row.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  '));
  console.log(
    `\nmedian of ${RUNS} parses after a warm-up; ΔRSS = peak RSS minus RSS before the first parse, fresh process each`,
  );
  console.log('ours: lazy open (strings decoded on first access); ours-full and hf: every string decoded');
  console.log(
    `geometric mean over the files (>1: ours faster): hf/ours ${geomeanRatio.toFixed(2)}×, hf/ours-full ${geomeanRatioFull.toFixed(2)}× (like for like)`,
  );
}

function bytes(n: number): string {
  const units = ['B', 'KB', 'MB', 'GB'];
  let i = 0;
  for (; Math.abs(n) >= 1000 && i < units.length - 1; i++) n /= 1000;
  return `${n.toFixed(i ? 1 : 0)} ${units[i]}`;
}

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}

// ---------------------------------------------------------------- main

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const name = args.find((a) => !a.startsWith('--'));
  const suite = name === undefined ? undefined : SUITES[name];
  if (!suite)
    throw new Error(
      `${name ? `unknown suite "${name}"` : 'no suite given'}; suites: ${Object.keys(SUITES).join(', ')}`,
    );
  await suite({ json: args.includes('--json'), args });
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exitCode = 1;
});
