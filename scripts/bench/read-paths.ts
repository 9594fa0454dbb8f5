/**
 * `npm run bench:read-paths -- [--depth 4096] [--heads 4] [--head-dim 64] [--runs 15] [--json]`
 *
 * What bounds decode attention's reads on a CPU adapter (issue #27): the K and V rows a token reads
 * at --depth (--heads KV heads of --head-dim F16 values, every position) read alone four ways, in
 * one process, rounds alternating: from a storage buffer in the kernel's pattern (copy.wgsl's
 * read_rows, bench:attention's "reads alone"), from an rgba32uint texture (read_rows_texture),
 * with every lane of a workgroup reading every word from one address made of push constants
 * (read-rows-immediates.wgsl: llvmpipe's one-load-for-all-lanes path; where the adapter has
 * immediates), and from uniform buffers, a window of at most maxUniformBufferBindingSize bytes a
 * binding and as many bindings a dispatch as the adapter allows (read-rows-uniform.wgsl; the time
 * of all its dispatches). Prints each path's median time, its share of the copy bandwidth
 * measured in the same run and its time against the buffer's. The paths must read the same words:
 * their sums are compared, and a path that disagrees fails the run.
 */
import { parseArgs } from 'node:util';
import { kvCacheBytes } from '../../src-main/core/kv-cache-types';
import { measureCopyBandwidth, rowReads, rowReadWorkgroups } from '../../src-main/engine/gpu/bandwidth';
import { openGpu } from '../../src-main/engine/gpu/device';
import { scoped } from '../../src-main/engine/gpu/error-scope';
import type { Dispatch } from '../../src-main/engine/gpu/ops';
import { PacedWait } from '../../src-main/engine/gpu/paced-wait';
import { readBack } from '../../src-main/engine/gpu/read-back';
import { cpuLanes } from '../../src-main/engine/gpu/row-groups';
import { shaderSource } from '../../src-main/engine/gpu/shader-source';
import { median } from './vs-llama-rows';

const { values } = parseArgs({
  options: {
    depth: { type: 'string', default: '4096' },
    heads: { type: 'string', default: '4' },
    'head-dim': { type: 'string', default: '64' },
    runs: { type: 'string', default: '15' },
    json: { type: 'boolean' },
  },
});
const depth = Number(values.depth);
const heads = Number(values.heads);
const headDim = Number(values['head-dim']);
const runs = Number(values.runs);
if (![depth, heads, headDim, runs].every(Number.isInteger) || depth < 0 || runs < 1 || heads < 1 || headDim % 8) {
  throw new Error('usage: --depth N --heads N --head-dim (a multiple of 8) --runs N');
}

const gpu = await openGpu(process.env.GUFO_ADAPTER);
const { device } = gpu;
const lanes = cpuLanes(gpu.info);
// K rows, then V rows: the positions of a token's KV reads at this depth.
const positions = 2 * (depth + 1);
const rowBytes = kvCacheBytes('f16', headDim);
const rowVec4 = rowBytes / 16;
const texels = positions * heads * rowVec4;
const groups = rowReadWorkgroups(heads);
const TEXELS_WIDE_LOG2 = 8;
// Positions the immediates path writes out a tile.
const TILE = 16;

const words = Uint32Array.from({ length: 4 * texels }, (_, i) => Math.imul(i + 1, 2654435761) >>> 0);
const bytes = words.byteLength;
const copy = await measureCopyBandwidth(gpu, { bytes: 64 * 2 ** 20, iterations: 5 });

interface Path {
  name: string;
  /** Encoded in order in one pass. */
  dispatches: readonly Dispatch[];
  sums: GPUBuffer;
  times: number[];
}

const rowConstants = { ROW_VEC4: rowVec4, HEADS: heads, READ_LANES: lanes };
const paths: Path[] = [];
const skipped: { name: string; why: string }[] = [];

// The buffer path is bench:attention's reads alone; the other paths read its buffer or copies of its words.
const bufferReads = await scoped(device, 'the buffer path', () =>
  Promise.resolve(rowReads(gpu, rowBytes, { bytes, heads })),
);
if (bufferReads.bytes !== bytes) throw new Error(`read paths: depth ${depth} is over a storage binding's limits`);
const source = bufferReads.sources[0]!;
device.queue.writeBuffer(source, 0, words);
paths.push({ name: 'buffer', dispatches: bufferReads.dispatches, sums: bufferReads.sums, times: [] });

const tall = Math.ceil(texels / 2 ** TEXELS_WIDE_LOG2);
if (tall <= device.limits.maxTextureDimension2D) {
  const texture = device.createTexture({
    size: [2 ** TEXELS_WIDE_LOG2, tall],
    format: 'rgba32uint',
    usage: GPUTextureUsage.TEXTURE_BINDING | GPUTextureUsage.COPY_DST,
  });
  const padded = new Uint32Array(4 * 2 ** TEXELS_WIDE_LOG2 * tall);
  padded.set(words);
  device.queue.writeTexture({ texture }, padded, { bytesPerRow: 16 * 2 ** TEXELS_WIDE_LOG2 }, [
    2 ** TEXELS_WIDE_LOG2,
    tall,
  ]);
  const module = device.createShaderModule({ label: 'copy', code: shaderSource('copy.wgsl', { WG: 256 }) });
  const constants = { ...rowConstants, TEXELS_WIDE_LOG2, POSITIONS: positions };
  paths.push(
    await path('texture', {
      module,
      entryPoint: 'read_rows_texture',
      constants,
      src: texture.createView(),
      srcBinding: 2,
    }),
  );
} else {
  skipped.push({
    name: 'texture',
    why: `${tall} texel rows, over the adapter's ${device.limits.maxTextureDimension2D}`,
  });
}

if (!gpu.info.wgslLanguageFeatures.includes('immediate_address_space') || device.limits.maxImmediateSize < 16) {
  skipped.push({ name: 'immediates', why: 'the adapter has no immediates (push constants)' });
} else if (positions >= 2 ** 20) {
  skipped.push({ name: 'immediates', why: `${positions} positions, over the 2^20 its lookups rebuild` });
} else {
  const code = shaderSource('read-rows-immediates.wgsl', { ...rowConstants, TILE });
  const module = device.createShaderModule({ label: 'read-rows-immediates', code });
  const immediates = new Uint32Array([0, 1, 2, 3]);
  paths.push(
    await path('immediates', { module, entryPoint: 'read_rows_immediates', src: { buffer: source }, immediates }),
  );
}

const windowed = uniformWindows();
if ('why' in windowed) skipped.push({ name: 'uniform', why: windowed.why });
else paths.push(await uniformPath(windowed));

/**
 * How the uniform path divides the rows: windows of whole positions that a uniform binding holds
 * and that start at an offset it may be bound at.
 */
interface Windows {
  /** Positions a window holds (the last may hold fewer), and its bytes. */
  positions: number;
  bytes: number;
  count: number;
  perDispatch: number;
}

function uniformWindows(): Windows | { why: string } {
  const positionBytes = heads * rowVec4 * 16;
  const { maxUniformBufferBindingSize, minUniformBufferOffsetAlignment, maxUniformBuffersPerShaderStage } =
    device.limits;
  let windowPositions = Math.floor(maxUniformBufferBindingSize / positionBytes);
  while (windowPositions > 0 && (windowPositions * positionBytes) % minUniformBufferOffsetAlignment) windowPositions--;
  if (windowPositions === 0) return { why: `a position's ${positionBytes} bytes, over a uniform binding's limits` };
  const count = Math.ceil(positions / windowPositions);
  const perDispatch = Math.min(maxUniformBuffersPerShaderStage, count);
  return { positions: windowPositions, bytes: windowPositions * positionBytes, count, perDispatch };
}

/** The uniform path: a dispatch for each perDispatch windows, each window a binding of a padded copy of the rows. */
async function uniformPath(w: Windows): Promise<Path> {
  const padded = device.createBuffer({
    size: w.count * w.bytes,
    usage: GPUBufferUsage.UNIFORM | GPUBufferUsage.COPY_DST,
  });
  device.queue.writeBuffer(padded, 0, words);
  // Each dispatch's first window and its windows' positions, at an offset a storage binding may start at.
  const infoBytes = 4 * (1 + w.perDispatch);
  const infoStride =
    Math.ceil(infoBytes / device.limits.minStorageBufferOffsetAlignment) *
    device.limits.minStorageBufferOffsetAlignment;
  const dispatchCount = Math.ceil(w.count / w.perDispatch);
  const info = new Uint32Array((dispatchCount * infoStride) / 4);
  const infoBuffer = device.createBuffer({
    size: info.byteLength,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST,
  });
  const sums = device.createBuffer({
    size: 16 * lanes * heads * w.count,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  const code = shaderSource('read-rows-uniform.wgsl', {
    ...rowConstants,
    WINDOW_POSITIONS: w.positions,
    WINDOWS: w.perDispatch,
  });
  const module = device.createShaderModule({ label: 'read-rows-uniform', code });
  return scoped(device, 'the uniform path', () => {
    const pipeline = device.createComputePipeline({
      label: 'uniform',
      layout: 'auto',
      compute: { module, entryPoint: 'read_rows_uniform' },
    });
    const dispatches = Array.from({ length: dispatchCount }, (_, d) => {
      const first = d * w.perDispatch;
      const windows = Math.min(w.perDispatch, w.count - first);
      const at = (d * infoStride) / 4;
      info[at] = first;
      for (let j = 0; j < windows; j++) info[at + 1 + j] = Math.min(w.positions, positions - (first + j) * w.positions);
      const entries: GPUBindGroupEntry[] = [
        { binding: 0, resource: { buffer: infoBuffer, offset: d * infoStride, size: infoBytes } },
        { binding: 1, resource: { buffer: sums } },
      ];
      // A dispatch with fewer windows binds its last window again in the slots it leaves empty (they read no positions).
      for (let j = 0; j < w.perDispatch; j++) {
        const window = Math.min(first + j, w.count - 1);
        entries.push({ binding: 2 + j, resource: { buffer: padded, offset: window * w.bytes, size: w.bytes } });
      }
      const group = device.createBindGroup({ layout: pipeline.getBindGroupLayout(0), entries });
      return {
        encode(pass) {
          pass.setPipeline(pipeline);
          pass.setBindGroup(0, group);
          pass.dispatchWorkgroups(windows * heads);
        },
      } satisfies Dispatch;
    });
    device.queue.writeBuffer(infoBuffer, 0, info);
    return Promise.resolve({ name: 'uniform', dispatches, sums, times: [] });
  });
}

/**
 * A path of one dispatch: `entryPoint` of `module` reading `src` at binding `srcBinding` (default
 * 0), its own sums at 1, with `immediates` set where given.
 */
async function path(
  name: string,
  o: {
    module: GPUShaderModule;
    entryPoint: string;
    constants?: Record<string, number>;
    src: GPUBindingResource;
    srcBinding?: number;
    immediates?: Uint32Array<ArrayBuffer>;
  },
): Promise<Path> {
  const sums = device.createBuffer({
    size: 16 * lanes * groups,
    usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC,
  });
  return scoped(device, `the ${name} path`, () => {
    const pipeline = device.createComputePipeline({
      label: name,
      layout: 'auto',
      compute: { module: o.module, entryPoint: o.entryPoint, constants: o.constants ?? {} },
    });
    const group = device.createBindGroup({
      layout: pipeline.getBindGroupLayout(0),
      entries: [
        { binding: o.srcBinding ?? 0, resource: o.src },
        { binding: 1, resource: { buffer: sums } },
      ],
    });
    const dispatch: Dispatch = {
      encode(pass) {
        pass.setPipeline(pipeline);
        if (o.immediates) pass.setImmediates(0, o.immediates);
        pass.setBindGroup(0, group);
        pass.dispatchWorkgroups(groups);
      },
    };
    return Promise.resolve({ name, dispatches: [dispatch], sums, times: [] });
  });
}

// Waited for as the engine waits (on a CPU adapter, without spinning on a core the reads need).
const waits = new PacedWait(gpu.pacesWaits);
const querySet = gpu.hasTimestamps ? device.createQuerySet({ type: 'timestamp', count: 2 }) : undefined;
const resolved = querySet
  ? device.createBuffer({ size: 16, usage: GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC })
  : undefined;

/** One dispatch of `p`'s reads, in milliseconds: timestamped where the adapter can, else the wall clock. */
async function time(p: Path): Promise<number> {
  const encoder = device.createCommandEncoder();
  const pass = encoder.beginComputePass(
    querySet ? { timestampWrites: { querySet, beginningOfPassWriteIndex: 0, endOfPassWriteIndex: 1 } } : {},
  );
  for (const d of p.dispatches) d.encode(pass);
  pass.end();
  if (querySet && resolved) encoder.resolveQuerySet(querySet, 0, 2, resolved, 0);
  const started = performance.now();
  device.queue.submit([encoder.finish()]);
  await waits.wait(p.name, () => device.queue.onSubmittedWorkDone());
  const wall = performance.now() - started;
  if (!resolved) return wall;
  const [begin, end] = new BigUint64Array(await readBack(device, resolved));
  return Number(end! - begin!) / 1e6;
}

await scoped(device, 'the reads', async () => {
  // Untimed first: a driver may compile at a pipeline's first dispatch.
  for (const p of paths) await time(p);
  for (let r = 0; r < runs; r++) {
    for (let i = 0; i < paths.length; i++) {
      const p = paths[(r + i) % paths.length]!;
      p.times.push(await time(p));
    }
  }
});

// Every word read once per workgroup, so the wrapping sums of all lanes' sums agree across paths.
const totals = await Promise.all(
  paths.map(async (p) => new Uint32Array(await readBack(device, p.sums)).reduce((s, x) => (s + x) >>> 0, 0)),
);
const disagree = paths.filter((_, i) => totals[i] !== totals[0]);
if (disagree.length > 0)
  throw new Error(`read paths: ${disagree.map((p) => p.name).join(', ')} read other words than the buffer path`);

const bufferMs = median(paths[0]!.times);
const rows = paths.map((p) => {
  const ms = median(p.times);
  const bytesPerSecond = bytes / (ms / 1000);
  return {
    path: p.name,
    ms,
    bytesPerSecond,
    copyFraction: bytesPerSecond / copy.bytesPerSecond,
    vsBuffer: ms / bufferMs,
  };
});
const adapter = `${gpu.info.name} (${gpu.info.backend})`;
if (values.json) {
  const shape = { depth, heads, headDim, lanes, bytes, copyBytesPerSecond: copy.bytesPerSecond };
  process.stdout.write(JSON.stringify({ adapter, ...shape, rows, skipped }, null, 2) + '\n');
} else {
  const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB/s`;
  process.stdout.write(
    `${adapter}: K and V rows of ${heads} KV heads of ${headDim} at depth ${depth}, ${(bytes / 2 ** 20).toFixed(1)} MiB; ` +
      `${lanes} lanes; copy ${gib(copy.bytesPerSecond)}; medians of ${runs}\n`,
  );
  process.stdout.write('path          ms        read         of copy   time against the buffer\n');
  for (const r of rows) {
    process.stdout.write(
      `${r.path.padEnd(12)}${r.ms.toFixed(3).padStart(7)}   ${gib(r.bytesPerSecond).padStart(12)}   ${(100 * r.copyFraction).toFixed(0).padStart(5)}%   ${r.vsBuffer.toFixed(2)}×\n`,
    );
  }
  for (const s of skipped) process.stdout.write(`${s.name.padEnd(12)}skipped: ${s.why}\n`);
}
gpu.destroy();
