/**
 * `npm run bench:attention -- [--depth 512,2048,4096] [--prefill N] [--heads 16/4] [--head-dim 64] [--cpu] [--cache-type-k f16] [--cache-type-v f16] [--runs 5] [--against DIR] [--json]`
 *
 * The decode attention kernel (one token over a KV cache of --depth positions, the split and merge
 * dispatches of OpKernels.attention) on the adapter VK_ICD_FILENAMES or GUFO_ADAPTER picks, as a
 * fraction of that adapter's copy bandwidth: the KV bytes a token reads (K and V rows of every
 * position, once) over the kernel's time, against the fastest of the 64 MiB copies (bandwidth.ts's
 * copies; `gufo bench` too takes its fastest copy) timed in the same runs as the kernel: five
 * copies timed before the runs read 1.5 to 2.9 GiB/s on SwiftShader from one run to the next.
 * --prefill N: a batch of N tokens after --depth cached positions instead (prefill attention),
 * reported as ms per layer and GFLOP/s (2 · headDim multiply-adds per query head and key seen, for
 * the scores and for the values).
 * Timed with the wall clock around one submission of 8 layers' dispatches, each over a cache of
 * its own (the median of --runs, after a warm-up that compiles), so the queue's submission
 * overhead counts as it does in decode; waited for as the engine waits (gpu/paced-wait.ts).
 * --cpu: the CPU adapters' split policy (the engine picks it for a fallback adapter); by default
 * the adapter's own. With the CPU shape, also reads alone (bandwidth.ts's rowReads): a kernel that
 * only reads as many bytes of such rows, in the cache's layout and the kernel's pattern, from a
 * buffer a layer, timed in the same runs and the same way as the kernel: its share of copy, and
 * the kernel's rate as a share of its rate (the median of the runs' ratios), what the kernel's
 * reads could reach at that depth and how near it comes. With F16 caches, also reads with
 * multiply-adds (bandwidth.ts's maddReads): the same bytes read the adapter's fastest way with
 * only the multiply-adds attention cannot skip (each half by every query head of its group),
 * timed the same way: what no attention kernel on this adapter can beat.
 * --against DIR: a copy of shaders/ with a variant kernel, timed beside the shipped one in the same
 * process (the two alternate, each going first in every other run), printed as its time and its
 * speed-up: the median of the runs' ratios, each of two submissions next to each other in time, so
 * a slow spell of a noisy machine slows both sides of a ratio. (GUFO_SHADERS cannot do this: it is
 * read once a process.)
 * Default shape: 16 query heads over 4 KV heads of 64, issue #27's model.
 */
import { parseArgs } from 'node:util';
import { kvCacheBytes } from '../../src-main/core/kv-cache-types';
import { isKvCacheType, KV_CACHE_TYPES } from '../../src-preload/api/kv-cache';
import { copies, maddReads, rowReads } from '../../src-main/engine/gpu/bandwidth';
import { openGpu } from '../../src-main/engine/gpu/device';
import { scoped } from '../../src-main/engine/gpu/error-scope';
import { OpKernels, opKernelShapes, Step, type Dispatch } from '../../src-main/engine/gpu/ops';
import { PacedWait } from '../../src-main/engine/gpu/paced-wait';
import { median } from './vs-llama-rows';

const { values } = parseArgs({
  options: {
    depth: { type: 'string', default: '512,2048,4096' },
    heads: { type: 'string', default: '16/4' },
    'head-dim': { type: 'string', default: '64' },
    cpu: { type: 'boolean' },
    'cache-type-k': { type: 'string', default: 'f16' },
    'cache-type-v': { type: 'string', default: 'f16' },
    prefill: { type: 'string', default: '1' },
    runs: { type: 'string', default: '5' },
    against: { type: 'string' },
    json: { type: 'boolean' },
  },
});

const LAYERS = 8;
const depths = values.depth.split(',').map(Number);
const [nHead, nKvHead] = values.heads.split('/').map(Number) as [number, number];
const headDim = Number(values['head-dim']);
const runs = Number(values.runs);
const tokens = Number(values.prefill);
if (!(Number.isInteger(tokens) && tokens >= 1)) throw new Error('usage: --prefill N (tokens, at least 1)');
if (
  depths.some((d) => !Number.isInteger(d) || d < 0) ||
  !(nHead % nKvHead === 0) ||
  !(headDim % 2 === 0) ||
  !(runs >= 1)
) {
  throw new Error('usage: --depth N[,N...] --heads Q/KV (Q a multiple of KV) --head-dim EVEN --runs N');
}

const kv = { k: values['cache-type-k'], v: values['cache-type-v'] };
if (!isKvCacheType(kv.k) || !isKvCacheType(kv.v))
  throw new Error(`usage: --cache-type-k/-v ${KV_CACHE_TYPES.join('|')}`);
const kvTypes = { k: kv.k, v: kv.v };

const gpu = await openGpu(process.env.GUFO_ADAPTER);
const { device } = gpu;
const cpuShape = values.cpu ?? gpu.info.cpuShapes;
const ops = new OpKernels(device, kvTypes, opKernelShapes(gpu.info, cpuShape));
const variant = values.against
  ? new OpKernels(device, kvTypes, { ...opKernelShapes(gpu.info, cpuShape), shaders: values.against })
  : undefined;
// The yardstick, as `gufo bench` measures it: a 64 MiB copy.
const copy = copies(gpu, { bytes: 64 * 2 ** 20 });
const kRowBytes = kvCacheBytes(kvTypes.k, headDim);
const measuresReads = cpuShape && kRowBytes % 16 === 0;
// The multiply-adds' bound reads halves: F16 caches only.
const measuresMadds = measuresReads && kvTypes.k === 'f16' && kvTypes.v === 'f16';
// Waited for as the engine waits for its steps (on a CPU adapter, without spinning on a core the kernels need).
const waits = new PacedWait(gpu.pacesWaits);
const kvStride = nKvHead * headDim;
const storage = GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST;
const filled = (floats: number) => {
  const data = Float32Array.from({ length: floats }, (_, i) => Math.sin(i * 0.7));
  const b = device.createBuffer({ size: data.byteLength, usage: storage });
  device.queue.writeBuffer(b, 0, data);
  return b;
};
const rope = { table: filled(4), nRot: 0, neox: false };

/** Multiply-adds of a batch's attention: each query head scores every key it sees and weighs its value row. */
const flopsOf = (depth: number) => {
  let keys = 0;
  for (let t = 0; t < tokens; t++) keys += depth + t + 1;
  return 2 * 2 * headDim * nHead * keys;
};

const rows: Awaited<ReturnType<typeof measure>>[] = [];
for (const depth of depths) {
  // A kernel Dawn refuses runs nothing, fast: fail rather than print its time.
  rows.push(await scoped(device, `at depth ${depth}`, () => measure(depth)));
  process.stderr.write(`depth ${depth}: ${rows.at(-1)!.ms.toFixed(3)} ms\n`);
}

async function measure(depth: number) {
  const total = depth + tokens;
  const fill = new Step(device);
  fill.set(0, total);
  const source = filled(total * kvStride);
  const step = new Step(device);
  const q = filled(tokens * nHead * headDim);
  const out = device.createBuffer({ size: tokens * nHead * headDim * 4, usage: GPUBufferUsage.STORAGE });
  // A cache of its own for every layer, as in a model: one shared by all would be read from the
  // CPU's cache after the first layer on a CPU adapter, faster than a model's decode reads it.
  const caches = Array.from({ length: LAYERS }, () => ({
    kCache: device.createBuffer({ size: ops.kvCacheBytes('k', total, kvStride), usage: storage }),
    vCache: device.createBuffer({ size: ops.kvCacheBytes('v', total, kvStride), usage: storage }),
  }));
  const stores = caches.map((c) => ops.storeKv({ ...c, k: source, v: source, step: fill, kvStride, headDim, rope }));
  const layersOf = (kernels: OpKernels) =>
    caches.map((c) =>
      kernels.attention({
        q,
        ...c,
        out,
        step,
        nHead,
        nKvHead,
        headDim,
        scale: 1 / Math.sqrt(headDim),
        rope,
      }),
    );
  const layers = layersOf(ops);
  const variantLayers = variant && layersOf(variant);
  const submit = async (kind: string, dispatches: readonly Dispatch[]) => {
    const encoder = device.createCommandEncoder();
    const pass = encoder.beginComputePass();
    for (const d of dispatches) d.encode(pass);
    pass.end();
    device.queue.submit([encoder.finish()]);
    await waits.wait(kind, () => device.queue.onSubmittedWorkDone());
  };
  await submit('store', stores);
  step.set(depth, tokens);
  const kvBytes = kvCacheBytes(kvTypes.k, total * kvStride) + kvCacheBytes(kvTypes.v, total * kvStride);
  const reads = measuresReads
    ? rowReads(gpu, kRowBytes, { bytes: kvBytes, heads: nKvHead, sources: LAYERS })
    : undefined;
  const madds = measuresMadds ? maddReads(gpu, { bytes: kvBytes, group: nHead / nKvHead, sources: LAYERS }) : undefined;
  // What each run times, in this order, and in the reverse order every other run: each side's
  // dispatches and the bytes they read (moved, for the copy) in one submission.
  const side = (kind: string, dispatches: readonly Dispatch[], bytes: number) => ({
    kind,
    dispatches,
    bytes,
    times: [] as number[],
  });
  const kernel = side(`depth ${depth}`, layers, LAYERS * kvBytes);
  const variantSide = variantLayers && side(`depth ${depth} variant`, variantLayers, LAYERS * kvBytes);
  const copySide = side('copy', [copy.dispatch], copy.bytesMoved);
  const readSide = reads && side(`depth ${depth} reads alone`, reads.dispatches, LAYERS * reads.bytes);
  const maddSide = madds && side(`depth ${depth} reads with multiply-adds`, madds.dispatches, LAYERS * madds.bytes);
  const sides = [kernel, variantSide, copySide, readSide, maddSide].filter((x) => x !== undefined);
  // Untimed, and a kind of its own: the driver may compile at a pipeline's first dispatch.
  for (const x of sides) await submit(`warm-up ${x.kind}`, x.dispatches);
  for (let r = 0; r < runs; r++) {
    for (const x of r % 2 === 0 ? sides : [...sides].reverse()) {
      const started = performance.now();
      await submit(x.kind, x.dispatches);
      x.times.push(performance.now() - started);
    }
  }
  const copyBytesPerSecond = copySide.bytes / (Math.min(...copySide.times) / 1000);
  const ofCopy = (x: typeof kernel) => x.bytes / (median(x.times) / 1000) / copyBytesPerSecond;
  const ms = median(kernel.times) / LAYERS;
  const bytesPerSecond = kvBytes / (ms / 1000);
  const against = variantSide && {
    ms: median(variantSide.times) / LAYERS,
    speedup: median(kernel.times.map((t, r) => t / variantSide.times[r]!)),
  };
  for (const b of [...caches.flatMap((c) => [c.kCache, c.vCache]), source, q, out]) b.destroy();
  reads?.destroy();
  madds?.destroy();
  return {
    depth,
    ms,
    kvBytes,
    bytesPerSecond,
    copyBytesPerSecond,
    copyFraction: ofCopy(kernel),
    readsAloneCopyFraction: readSide && ofCopy(readSide),
    kernelShareOfReadsAlone:
      readSide && median(kernel.times.map((t, r) => kernel.bytes / t / (readSide.bytes / readSide.times[r]!))),
    readsWithMaddsCopyFraction: maddSide && ofCopy(maddSide),
    gflops: flopsOf(depth) / (ms / 1000) / 1e9,
    against,
  };
}

const adapter = `${gpu.info.name} (${gpu.info.backend})`;
if (values.json) {
  process.stdout.write(
    JSON.stringify(
      {
        adapter,
        nHead,
        nKvHead,
        headDim,
        tokens,
        kvTypes,
        rows,
      },
      null,
      2,
    ) + '\n',
  );
} else if (tokens > 1) {
  process.stdout.write(
    `${adapter}: ${tokens}-token batches, ${nHead} query heads over ${nKvHead} KV heads of ${headDim}, ${kvTypes.k}/${kvTypes.v} cache\n`,
  );
  process.stdout.write('depth     ms/layer   GFLOP/s\n');
  for (const r of rows)
    process.stdout.write(
      `${String(r.depth).padEnd(10)}${r.ms.toFixed(1).padStart(8)}   ${r.gflops.toFixed(2).padStart(7)}\n`,
    );
} else {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB/s`;
  const percent = (fraction: number) => `${(fraction * 100).toFixed(1).padStart(5)}%`;
  process.stdout.write(
    `${adapter}: ${nHead} query heads over ${nKvHead} KV heads of ${headDim}, ${kvTypes.k}/${kvTypes.v} cache\n`,
  );
  process.stdout.write(
    `depth     ms/layer   KV read          copy      of copy${measuresReads ? '   reads alone   kernel of reads alone' : ''}${measuresMadds ? '   reads + multiply-adds' : ''}\n`,
  );
  for (const r of rows)
    process.stdout.write(
      `${String(r.depth).padEnd(10)}${r.ms.toFixed(3).padStart(8)}   ${gib(r.bytesPerSecond).padStart(12)}   ${gib(r.copyBytesPerSecond).padStart(10)}   ${percent(r.copyFraction)}` +
        (r.readsAloneCopyFraction !== undefined
          ? `        ${percent(r.readsAloneCopyFraction)}        ${(r.kernelShareOfReadsAlone! * 100).toFixed(0).padStart(3)}%`
          : '') +
        (r.readsWithMaddsCopyFraction !== undefined ? `          ${percent(r.readsWithMaddsCopyFraction)}` : '') +
        '\n',
    );
}
if (values.against && !values.json) {
  process.stdout.write(
    `against ${values.against} (speed-up: the median of the runs' ratios, above 1 the variant is faster)\n`,
  );
  for (const r of rows) {
    process.stdout.write(
      `${String(r.depth).padEnd(10)}${r.against!.ms.toFixed(3).padStart(8)} ms/layer   ×${r.against!.speedup.toFixed(2)}\n`,
    );
  }
}
variant?.destroy();
copy.destroy();
ops.destroy();
gpu.destroy();
