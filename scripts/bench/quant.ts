/**
 * The `quant` suite: decode and encode throughput per ggml type, ours next to llama.cpp's
 * single-threaded functions (libggml-base: dequantize_row_*, ggml_quantize_chunk) on the same data
 * in the same process. Both sides write into preallocated outputs; runs alternate between them so
 * machine noise hits both, and the median of RUNS runs after one warm-up each is reported.
 * Decoding is timed as the app's callers run it: decoderFor(type)(src, dst, blocks) into a reused
 * buffer from decodedValues() (as the tensor-error comparison decodes, core/quality/tensor-error.ts),
 * and again into a plain Float32Array (copy-out: the WebAssembly decoders then copy their values out
 * of their memory, as callers that allocate their own arrays get).
 *   tsx scripts/bench.ts quant [--json] [--types Q4_K,Q8_0]
 * With --model, a whole model instead (quant-model.ts): tsx scripts/bench.ts quant --model [--threads N] [--type Q4_K_M]
 */
import { GGML_TYPES, ggmlRowBytes, ggmlTypeByName, type GgmlType } from '../../src-main/core/ggml-types';
import { decodedValues, decoderFor, hasDecoder } from '../../src-main/core/quants/decoders';
import { encoderFor, hasEncoder } from '../../src-main/core/quants/encoders';
import { ggml } from '../../test/support/ggml-oracle';
import { mulberry32 } from '../../test/support/random';

const RUNS = 9;
/** A timed sample repeats a call until it lasts about this long. */
const SAMPLE_MS = 20;
const ROW_LENGTH = 4096;
const ROWS = 256; // 1M values
const VALUES = ROWS * ROW_LENGTH;
/** Goals for ours/llama throughput. */
const GOALS = { decode: 0.7, encode: 0.25 } as const;
/** llama.cpp refuses (or badly quantizes) these without an importance matrix. */
const NEEDS_IMATRIX = new Set(['IQ2_XXS', 'IQ2_XS', 'IQ1_S', 'IQ1_M']);
const K_QUANTS = new Set(['Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K']);

type Op = 'decode' | 'encode';

interface Result {
  op: Op;
  type: string;
  imatrix: boolean;
  /** Megabytes (10^6) of f32 per second: decode output, encode input. */
  oursMBps: number;
  llamaMBps: number;
  /** ours / llama: above 1 means ours is faster. */
  ratio: number;
  /** Decode only: ours / llama when writing into a plain Float32Array instead of a decodedValues() buffer. */
  plainRatio?: number;
  goal: number;
  meetsGoal: boolean;
  /** Decode only: values where ours and llama.cpp's output differ bit for bit. */
  mismatches?: number;
}

interface Failure {
  op: Op;
  type: string;
  imatrix: boolean;
  error: string;
}

export async function benchQuant({ json, args }: { json: boolean; args: readonly string[] }): Promise<void> {
  if (args.includes('--model')) return (await import('./quant-model')).benchQuantModel({ json, args });
  const types = selectTypes(args);
  const rng = mulberry32(1234);
  const data = Float32Array.from({ length: VALUES }, rng.gaussian);
  // Mean squared activation per column with a heavy-tailed per-column scale, as llama-imatrix collects.
  const imatrix = Float32Array.from({ length: ROW_LENGTH }, () => Math.exp(2.4 * rng.gaussian()));

  const results: Result[] = [];
  const failures: Failure[] = [];
  const attempt = (op: Op, type: GgmlType, withImatrix: boolean, body: () => Result) => {
    log(`${op} ${type.name}${withImatrix ? ' (imatrix)' : ''}`);
    try {
      results.push(body());
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      log(`  failed: ${error}`);
      failures.push({ op, type: type.name, imatrix: withImatrix, error });
    }
  };

  for (const type of types.filter((t) => t.name !== 'F32' && hasDecoder(t))) {
    attempt('decode', type, false, () => benchDecode(type, data, imatrix));
  }
  for (const type of types.filter((t) => t.name !== 'F32' && hasEncoder(t))) {
    // Types llama.cpp refuses without an importance matrix are timed with one.
    const needs = NEEDS_IMATRIX.has(type.name);
    attempt('encode', type, needs, () => benchEncode(type, data, needs ? imatrix : null));
    if (K_QUANTS.has(type.name)) attempt('encode', type, true, () => benchEncode(type, data, imatrix));
  }

  if (json)
    console.log(
      JSON.stringify(
        { suite: 'quant', runs: RUNS, values: VALUES, rowLength: ROW_LENGTH, goals: GOALS, results, failures },
        null,
        2,
      ),
    );
  else printTable(results, failures);
}

function selectTypes(args: readonly string[]): GgmlType[] {
  const i = args.findIndex((a) => a === '--types' || a.startsWith('--types='));
  if (i < 0) return [...GGML_TYPES];
  const list = args[i]!.includes('=') ? args[i]!.slice('--types='.length) : args[i + 1];
  if (!list) throw new Error('--types needs a comma-separated list, e.g. --types Q4_K,Q8_0');
  return list.split(',').map((name) => {
    const t = ggmlTypeByName(name.trim());
    if (!t) throw new Error(`unknown ggml type ${name}`);
    if (!hasDecoder(t) && !hasEncoder(t)) throw new Error(`${t.name}: neither a decoder nor an encoder to measure`);
    return t;
  });
}

// ---------------------------------------------------------------- llama.cpp (preallocated outputs)

const quantizeChunk = (): ((...args: unknown[]) => unknown) =>
  ggml.fn(
    'size_t ggml_quantize_chunk(int type, const void *src, void *dst, int64_t start, int64_t nrows, int64_t n_per_row, const void *imatrix)',
  );

function llamaEncoder(type: GgmlType): (src: Float32Array, dst: Uint8Array, imatrix: Float32Array | null) => void {
  ggml.fn('void ggml_quantize_init(int type)')(type.id);
  const quantize = quantizeChunk();
  return (src, dst, imatrix) => {
    const written = Number(quantize(type.id, src, dst, 0, ROWS, ROW_LENGTH, imatrix));
    if (written !== dst.byteLength)
      throw new Error(`ggml_quantize_chunk wrote ${written} bytes, expected ${dst.byteLength}`);
  };
}

function llamaDecoder(type: GgmlType): (src: Uint8Array, dst: Float32Array) => void {
  const name = ggml.typeName(type.id);
  const f = ggml.fn(
    name === 'f16'
      ? 'void ggml_fp16_to_fp32_row(const void *x, void *y, int64_t k)'
      : name === 'bf16'
        ? 'void ggml_bf16_to_fp32_row(const void *x, void *y, int64_t k)'
        : `void dequantize_row_${name}(const void *x, void *y, int64_t k)`,
  );
  return (src, dst) => void f(src, dst, dst.length);
}

/** What llama.cpp makes of `data` in `type`: the bytes both decoders are timed on. */
function llamaBytes(type: GgmlType, data: Float32Array, imatrix: Float32Array): Uint8Array {
  const dst = new Uint8Array(ggmlRowBytes(type, VALUES));
  // ggml_quantize_chunk cannot write Q8_K (an intermediate type for dot products).
  if (type.name === 'Q8_K')
    ggml.fn('void quantize_row_q8_K_ref(const float *x, void *y, int64_t k)')(data, dst, VALUES);
  else llamaEncoder(type)(data, dst, NEEDS_IMATRIX.has(type.name) ? imatrix : null);
  return dst;
}

// ---------------------------------------------------------------- measurements

function benchDecode(type: GgmlType, data: Float32Array, imatrix: Float32Array): Result {
  const src = llamaBytes(type, data, imatrix);
  const blocks = VALUES / type.blockSize;
  const decode = decoderFor(type);
  const llama = llamaDecoder(type);
  const ours = decodedValues(VALUES);
  const plain = new Float32Array(VALUES);
  const theirs = new Float32Array(VALUES);
  const [oursMs, llamaMs, plainMs] = timeAll(
    () => decode(src, ours, blocks),
    () => llama(src, theirs),
    () => decode(src, plain, blocks),
  );
  const b = new Uint32Array(theirs.buffer);
  let mismatches = 0;
  for (const values of [ours, plain]) {
    const a = new Uint32Array(values.buffer, values.byteOffset, VALUES);
    for (let i = 0; i < VALUES; i++) if (a[i] !== b[i]) mismatches++;
  }
  if (mismatches) log(`  warning: ${mismatches} of ${2 * VALUES} values decode differently from llama.cpp`);
  return {
    ...result('decode', type, false, oursMs, llamaMs),
    plainRatio: llamaMs / plainMs,
    ...(mismatches ? { mismatches } : {}),
  };
}

function benchEncode(type: GgmlType, data: Float32Array, imatrix: Float32Array | null): Result {
  const encode = encoderFor(type);
  const llama = llamaEncoder(type);
  const ours = new Uint8Array(ggmlRowBytes(type, VALUES));
  const theirs = new Uint8Array(ours.length);
  const [oursMs, llamaMs] = timeAll(
    () => encode(data, ours, ROWS, ROW_LENGTH, imatrix),
    () => llama(data, theirs, imatrix),
  );
  return result('encode', type, imatrix !== null, oursMs, llamaMs);
}

/**
 * Median ms per call of each function over RUNS samples after a warm-up, the order reversed every
 * other run. A sample repeats a fast call until it lasts about SAMPLE_MS, so timer granularity and
 * one-off hiccups do not dominate.
 */
/** The median time of each of `fs`, in order (a tuple as long as `fs`). */
function timeAll<F extends (() => void)[]>(...fs: F): { [K in keyof F]: number } {
  const sides = fs.map((f) => {
    f(); // warm-up (JIT, page faults)
    const t0 = performance.now();
    f();
    const reps = Math.min(1000, Math.max(1, Math.ceil(SAMPLE_MS / (performance.now() - t0))));
    return { f, reps, ms: [] as number[] };
  });
  for (let i = 0; i < RUNS; i++) {
    for (const side of i % 2 ? [...sides].reverse() : sides) {
      const t0 = performance.now();
      for (let r = 0; r < side.reps; r++) side.f();
      side.ms.push((performance.now() - t0) / side.reps);
    }
  }
  return sides.map((side) => median(side.ms)) as { [K in keyof F]: number };
}

function median(xs: number[]): number {
  const s = [...xs].sort((x, y) => x - y);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

function result(op: Op, type: GgmlType, imatrix: boolean, oursMs: number, llamaMs: number): Result {
  const mbps = (ms: number) => (VALUES * 4) / 1e6 / (ms / 1000);
  const ratio = llamaMs / oursMs;
  const goal = GOALS[op];
  return {
    op,
    type: type.name,
    imatrix,
    oursMBps: mbps(oursMs),
    llamaMBps: mbps(llamaMs),
    ratio,
    goal,
    meetsGoal: ratio >= goal,
  };
}

// ---------------------------------------------------------------- output

function printTable(results: Result[], failures: Failure[]): void {
  const table = [
    ['op', 'type', 'ours MB/s', 'llama MB/s', 'ours/llama', 'goal', '', 'copy-out/llama'],
    ...results.map((r) => [
      r.op + (r.imatrix ? '+imatrix' : ''),
      r.type,
      r.oursMBps.toFixed(0),
      r.llamaMBps.toFixed(0),
      `${r.ratio.toFixed(2)}×`,
      `≥${r.goal}×`,
      r.meetsGoal ? 'ok' : 'MISS',
      r.plainRatio === undefined ? '' : `${r.plainRatio.toFixed(2)}×`,
    ]),
  ];
  const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
  for (const row of table)
    console.log(
      row
        .map((v, i) => (i < 2 || i === 6 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    );
  console.log(
    `\n${VALUES} gaussian f32 values in rows of ${ROW_LENGTH}; MB/s of f32 (decode: output, encode: input), single thread;`,
  );
  console.log(
    `median of ${RUNS} runs after a warm-up, ours and llama.cpp alternating. Decode: decoderFor(type) into a reused`,
  );
  console.log(
    'decodedValues() buffer, as the tensor-error comparison decodes; copy-out: into a plain Float32Array (values copied',
  );
  console.log('out of WebAssembly memory).');
  const missed = results.filter((r) => !r.meetsGoal);
  console.log(
    `${results.length - missed.length} of ${results.length} meet their goal${missed.length ? `; missed: ${missed.map(label).join(', ')}` : ''}`,
  );
  const differing = results.filter((r) => r.mismatches);
  if (differing.length)
    console.log(
      `decoded differently from llama.cpp: ${differing.map((r) => `${r.type} (${r.mismatches} values)`).join(', ')}`,
    );
  for (const f of failures) console.log(`FAILED ${label(f)}: ${f.error}`);
}

const label = (r: { op: Op; type: string; imatrix: boolean }): string =>
  `${r.op} ${r.type}${r.imatrix ? '+imatrix' : ''}`;

function log(message: string): void {
  process.stderr.write(`${message}\n`);
}
