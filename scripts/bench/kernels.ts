/**
 * `npm run bench:kernels [-- --small] [--types Q4_K,Q8_0] [--runs 5] [--adapters swiftshader,lavapipe,native] [--gpu-prefill] [--json]`
 *
 * Each weight kernel (every type the GPU decodes) on large matrices, as a fraction of the copy
 * roofline of each adapter: decode (n = 1, the mat-vec kernel) and prefill (n = 64, the mat-mat
 * kernel). Bandwidth counts the weight bytes once per run, against the copy kernel's read + write
 * bytes per second (as `gufo bench` does); prefill also gets GFLOP/s. Timed with timestamp queries
 * around the one dispatch, the median of --runs runs after a warm-up run (which compiles).
 *
 * Shapes (rows × cols): 4096 × 4096 and 4096 × 14336 (an 8B model's attn_output and ffn_down);
 * --small: 1024 × 1024 and 1024 × 3584, for the slow software adapters. Weights are a few rows
 * encoded by Gufo's own encoders (random gaussians), repeated down the matrix.
 *
 * --gpu-prefill: prefill (n = 64) only, with the GPU shapes on every adapter, each type through both
 * GPU prefill kernels: matmul.wgsl's mat-mat (x reread per row) and matmat-tiled.wgsl's (the default).
 *
 * Each adapter runs in its own process (the Vulkan loader reads VK_ICD_FILENAMES once): the
 * software adapters whose driver is installed, and the machine's own driver with `native`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { GGML_TYPES, type GgmlType } from '../../src-main/core/ggml-types';
import { encoderFor, hasEncoder } from '../../src-main/core/quants/encoders';
import { measureCopyBandwidth } from '../../src-main/engine/gpu/bandwidth';
import { openGpu, type GpuContext } from '../../src-main/engine/gpu/device';
import { MatmulKernels, type TokenDispatch } from '../../src-main/engine/gpu/matmul';
import { LAVAPIPE_ICD, SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { supportsGpuType, uploadWeights } from '../../src-main/engine/gpu/weights';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { mulberry32 } from '../../test/support/random';

const SHAPES = {
  large: [
    [4096, 4096],
    [4096, 14336],
  ],
  small: [
    [1024, 1024],
    [1024, 3584],
  ],
} as const;
const TOKENS = [1, 64] as const;
/** Rows actually encoded; the matrix repeats them (the kernels' speed does not depend on the values). */
const ENCODED_ROWS = 8;

const ADAPTERS: Record<string, string | undefined> = {
  swiftshader: SWIFTSHADER_ICD,
  lavapipe: LAVAPIPE_ICD,
  native: undefined,
};

interface Row {
  adapter: string;
  /** The kernel that ran n > 1 (MatmulKernels.prefill). */
  kernel: string;
  type: string;
  rows: number;
  cols: number;
  tokens: number;
  ms: number;
  weightBytes: number;
  bytesPerSecond: number;
  copyBytesPerSecond: number;
  rooflineFraction: number;
  gflops: number;
}

const { values } = parseArgs({
  options: {
    small: { type: 'boolean' },
    types: { type: 'string' },
    runs: { type: 'string' },
    adapters: { type: 'string' },
    json: { type: 'boolean' },
    child: { type: 'string' },
    'gpu-prefill': { type: 'boolean' },
  },
});

function gpuTypes(): GgmlType[] {
  const all = GGML_TYPES.filter(supportsGpuType);
  if (!values.types) return all;
  return values.types.split(',').map((name) => {
    const t = all.find((a) => a.name === name.trim().toUpperCase());
    if (!t) throw new Error(`--types: ${name} has no GPU kernel (one of ${all.map((a) => a.name).join(', ')})`);
    return t;
  });
}

/** ENCODED_ROWS rows of `type`: random gaussians through Gufo's encoder (MXFP4, which has none: random codes, scale 1). */
function encodedRows(type: GgmlType, cols: number): Uint8Array {
  const rng = mulberry32(type.id + 1);
  const bytes = new Uint8Array((ENCODED_ROWS * cols * type.typeSize) / type.blockSize);
  if (hasEncoder(type)) {
    const values = Float32Array.from({ length: ENCODED_ROWS * cols }, () => rng.gaussian() * 0.02);
    encoderFor(type)(values, bytes, ENCODED_ROWS, cols, null);
    return bytes;
  }
  for (let i = 0; i < bytes.length; i++) bytes[i] = rng.int(256);
  const scale = type.layout.find((f) => f.name === 'e');
  if (!scale) throw new Error(`${type.name}: no encoder and no E8M0 scale to set`);
  for (let b = 0; b < bytes.length; b += type.typeSize) bytes[b + scale.offset] = 127;
  return bytes;
}

/** Median GPU milliseconds of `dispatch`, each run its own timed pass, after one warm-up run. */
async function timeDispatch(ctx: GpuContext, dispatch: TokenDispatch, runs: number): Promise<number> {
  const { device } = ctx;
  const querySet = device.createQuerySet({ type: 'timestamp', count: 2 * runs });
  const resolve = device.createBuffer({
    size: 16 * runs,
    usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC,
  });
  const readback = device.createBuffer({ size: 16 * runs, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  try {
    const warm = device.createCommandEncoder();
    const pass = warm.beginComputePass();
    dispatch.encode(pass);
    pass.end();
    device.queue.submit([warm.finish()]);
    await device.queue.onSubmittedWorkDone();
    // One submission per run: a software adapter would otherwise overlap nothing anyway, and a GPU could.
    for (let i = 0; i < runs; i++) {
      const encoder = device.createCommandEncoder();
      const timed = encoder.beginComputePass({
        timestampWrites: { querySet, beginningOfPassWriteIndex: 2 * i, endOfPassWriteIndex: 2 * i + 1 },
      });
      dispatch.encode(timed);
      timed.end();
      device.queue.submit([encoder.finish()]);
      await device.queue.onSubmittedWorkDone();
    }
    const encoder = device.createCommandEncoder();
    encoder.resolveQuerySet(querySet, 0, 2 * runs, resolve, 0);
    encoder.copyBufferToBuffer(resolve, 0, readback, 0, 16 * runs);
    device.queue.submit([encoder.finish()]);
    await readback.mapAsync(GPUMapMode.READ);
    const t = new BigUint64Array(readback.getMappedRange());
    const ms = Array.from({ length: runs }, (_, i) => Number(t[2 * i + 1]! - t[2 * i]!) / 1e6).sort((a, b) => a - b);
    readback.unmap();
    return ms[Math.floor(runs / 2)]!;
  } finally {
    querySet.destroy();
    resolve.destroy();
    readback.destroy();
  }
}

/** One adapter, in this process: every type × shape × token count. Progress on stderr. */
async function measureAdapter(adapter: string): Promise<Row[]> {
  const runs = Number(values.runs ?? 5);
  if (!Number.isInteger(runs) || runs < 1)
    throw new Error(`--runs ${values.runs}: expected a whole number of runs, at least 1`);
  const ctx = await openGpu();
  if (!ctx.hasTimestamps) throw new Error(`${ctx.info.name} has no timestamp-query: kernels cannot be timed`);
  const kernelSets = values['gpu-prefill']
    ? [new MatmulKernels(ctx, { cpuShapes: false, prefill: 'matmat' }), new MatmulKernels(ctx, { cpuShapes: false })]
    : [new MatmulKernels(ctx)];
  const tokenCounts = values['gpu-prefill'] ? [64] : TOKENS;
  const copy = (await measureCopyBandwidth(ctx)).bytesPerSecond;
  const dir = mkdtempSync(join(tmpdir(), 'gufo-bench-kernels-'));
  const rows: Row[] = [];
  const maxTokens = Math.max(...TOKENS);
  try {
    for (const [nRows, cols] of values.small ? SHAPES.small : SHAPES.large) {
      const rng = mulberry32(cols);
      const x = ctx.device.createBuffer({
        size: maxTokens * cols * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
      });
      ctx.device.queue.writeBuffer(
        x,
        0,
        Float32Array.from({ length: maxTokens * cols }, () => rng.gaussian()),
      );
      const y = ctx.device.createBuffer({ size: maxTokens * nRows * 4, usage: GPUBufferUsage.STORAGE });
      for (const type of gpuTypes()) {
        const path = join(dir, `${type.name}.gguf`);
        const tile = encodedRows(type, cols);
        await writeGguf(path, { kvs: [], tensors: [{ name: 'w', ne: [cols, nRows], type }] }, function* () {
          // Every shape's row count is a multiple of ENCODED_ROWS.
          for (let r = 0; r < nRows; r += ENCODED_ROWS) yield tile;
        });
        const file = openGguf(path);
        const weight = (await uploadWeights(ctx, file.gguf, ['w'])).get('w')!;
        file.file.close();
        rmSync(path);
        for (const [tokens, kernels] of tokenCounts.flatMap((n) => kernelSets.map((k) => [n, k] as const))) {
          const dispatch = kernels.matmul(weight, x, y, tokens);
          const ms = await timeDispatch(ctx, dispatch, runs);
          const bytesPerSecond = weight.residentBytes / (ms / 1000);
          const row: Row = {
            adapter,
            kernel: tokens === 1 ? 'matvec' : kernels.prefill,
            type: type.name,
            rows: nRows,
            cols,
            tokens,
            ms,
            weightBytes: weight.residentBytes,
            bytesPerSecond,
            copyBytesPerSecond: copy,
            rooflineFraction: bytesPerSecond / copy,
            gflops: (2 * nRows * cols * tokens) / (ms / 1000) / 1e9,
          };
          rows.push(row);
          process.stderr.write(
            `${adapter} ${row.kernel} ${type.name} ${nRows}×${cols} n=${tokens}: ${ms.toFixed(2)} ms, ${(row.rooflineFraction * 100).toFixed(1)}% of copy\n`,
          );
        }
        weight.destroy();
      }
      x.destroy();
      y.destroy();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
    ctx.destroy();
  }
  return rows;
}

/** Runs this script per adapter in a child process with that adapter's driver. */
function runAdapters(): Row[] {
  const names = (
    values.adapters ??
    Object.keys(ADAPTERS)
      .filter((a) => a !== 'native')
      .join(',')
  ).split(',');
  const rows: Row[] = [];
  for (const name of names) {
    if (!(name in ADAPTERS)) throw new Error(`--adapters: ${name} is not one of ${Object.keys(ADAPTERS).join(', ')}`);
    const icd = ADAPTERS[name];
    if (icd && !existsSync(icd)) {
      process.stderr.write(`${name}: skipped, its driver ${icd} is not installed\n`);
      continue;
    }
    const args = [
      ...(values.small ? ['--small'] : []),
      ...(values['gpu-prefill'] ? ['--gpu-prefill'] : []),
      ...(values.types ? ['--types', values.types] : []),
      ...(values.runs ? ['--runs', values.runs] : []),
    ];
    const env = { ...process.env, ...(icd ? { VK_ICD_FILENAMES: icd } : {}) };
    if (!icd) delete env.VK_ICD_FILENAMES;
    const child = spawnSync(
      process.execPath,
      ['--import', 'tsx', fileURLToPath(import.meta.url), ...args, '--child', name],
      {
        env,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 64 * 2 ** 20,
      },
    );
    if (child.status !== 0) throw new Error(`${name}: the benchmark process failed (exit ${child.status})`);
    rows.push(...(JSON.parse(child.stdout) as Row[]));
  }
  return rows;
}

function table(rows: Row[]): string {
  const head = ['adapter', 'kernel', 'type', 'rows×cols', 'n', 'ms', 'weight GB/s', 'of copy', 'GFLOP/s'];
  const lines = rows.map((r) => [
    r.adapter,
    r.kernel,
    r.type,
    `${r.rows}×${r.cols}`,
    String(r.tokens),
    r.ms.toFixed(2),
    (r.bytesPerSecond / 1e9).toFixed(2),
    `${(r.rooflineFraction * 100).toFixed(1)}%`,
    r.gflops.toFixed(1),
  ]);
  const copies = [...new Map(rows.map((r) => [r.adapter, r.copyBytesPerSecond])).entries()].map(
    ([a, c]) => `${a}: copy ${(c / 1e9).toFixed(2)} GB/s`,
  );
  const widths = head.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => (i < 3 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [fmt(head), ...lines.map(fmt), '', ...copies].join('\n') + '\n';
}

if (values.child) {
  process.stdout.write(JSON.stringify(await measureAdapter(values.child)));
} else {
  const rows = runAdapters();
  process.stdout.write(values.json ? JSON.stringify(rows, null, 2) + '\n' : table(rows));
}
