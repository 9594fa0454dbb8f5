import { benchRunRecord } from '../../backend/bench-record';
import { BenchRunStore } from '../../node/store/bench-runs';
import { log, printJson, CliError, integerOption, type Command } from '../command';
import { formatBytes } from '../format';
import { progressBar } from '../progress';
import { STORE_HELP, storeResults } from '../results-store';
import type { KernelShapes, StepProfile } from '../../engine-wire/protocol';
import { adapterJson, KV_CACHE_HELP, KV_CACHE_OPTIONS, kvCacheOptions, memoryJson, startEngine } from './run';

const HELP = `Usage: gufo bench <model> [-p 512] [-n 128] [-d 0] [--cache-type-k T] [--cache-type-v T]
                  [--profile] [--json]

Measures the engine like llama-bench: prompt processing (prefill) of -p tokens, then generation
(decode) of -n tokens, greedy, on the GPU. Also reports what decode speed means for memory
traffic: the weight and KV cache bytes each decoded token reads (of a mixture-of-experts model's
expert tensors, only the share of the experts a token runs), and that traffic as a fraction of
this adapter's copy bandwidth, measured by a copy kernel in the same run (the roofline). Also
counts what one decode step costs the CPU: kernel launches (dispatches), queue submissions, and
the time to encode and submit it (measured apart from the GPU's time).

Options:
  -p N      prompt tokens (default 512)
  -n N      generated tokens (default 128)
  -d N      depth: N tokens fill the context first, untimed, then the prompt and the generated
            tokens are measured after them (llama-bench's -d; default 0)
${KV_CACHE_HELP}
  --profile then time every kernel of 4 more decode steps on the GPU (timestamp queries, each
            dispatch in its own pass): GPU ms per token per kernel, the bytes weight kernels
            read, their GB/s and fraction of the copy bandwidth
  --json    one JSON document on stdout: { depth, promptTokens, genTokens, prefillTokS, decodeTokS,
            bytesPerToken, achievedBytesPerSecond, copyBytesPerSecond, rooflineFraction,
            dispatchesPerToken, submitsPerToken, hostMsPerToken, kernelShapes: { family,
            matvec: { workgroup, rows, threadRows, xStaged, tunedFor }, batchTokens, prefill,
            subgroups, f16, foldsNorm, intDot }, adapter, memory }; with
            --profile also profile: { tokens, gpuMsPerToken, kernels: [{ kernel,
            dispatchesPerToken, gpuMsPerToken, bytesPerToken, bytesPerSecond,
            rooflineFraction }] } (slowest first; bytes are null for kernels that read no weights)

${STORE_HELP} A run with -d or a KV cache type other than f16 is not stored.

GUFO_ADAPTER picks the GPU adapter by name. On a GPU, the decode mat-vec's threads and rows a
workgroup follow the adapter's vendor (tunedFor); GUFO_MATVEC_SHAPE=THREADSxROWS (e.g. 32x4)
tries another. Where the adapter has integer dot products, the K-quant, Q4_0 and Q8_0 mat-vecs take x
as q8_1 (intDot); GUFO_INT_DOT=0 keeps x as f32.
`;

export const benchCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    p: { type: 'string', short: 'p' },
    n: { type: 'string', short: 'n' },
    d: { type: 'string', short: 'd' },
    json: { type: 'boolean' },
    profile: { type: 'boolean' },
    ...KV_CACHE_OPTIONS,
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo bench --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const p = integerOption(args, 'p', 512);
    const n = integerOption(args, 'n', 128);
    const depth = integerOption(args, 'd', 0);
    if (p < 1 || n < 1) throw new CliError('-p and -n must be at least 1');
    const json = args.values.json === true;
    const kvTypes = kvCacheOptions(args);
    const { host } = await startEngine(path, depth + p + n, json, { kvTypes });
    let measured: Awaited<ReturnType<typeof host.bench>>;
    const bar = progressBar('benchmarking');
    try {
      measured = await host.bench(p, n, {
        profile: args.values.profile === true,
        depth,
        onProgress: (done, total) => bar.update(done / total, benchStage(done, depth, p)),
      });
    } finally {
      bar.done();
      await host.close();
    }
    const { result, info } = measured;
    if (json) {
      printJson({ ...result, adapter: adapterJson(info), memory: memoryJson(info) });
    } else {
      const model = info.model!;
      const experts = model.experts ? `, ${model.experts} experts per layer (${model.expertsUsed} per token)` : '';
      log(
        `${model.path}: ${model.architecture}, ${model.layers} layers${experts}, ${formatBytes(info.memory!.residentWeightBytes)} of weights`,
      );
      const rows: [string, string][] = [
        ['adapter', `${info.adapter.name} (${info.adapter.backend})`],
        ['kernels', shapesLine(result.kernelShapes)],
        [`prefill (pp${p}${at(depth)})`, `${result.prefillTokS.toFixed(1)} tok/s`],
        [`decode (tg${result.genTokens}${at(depth)})`, `${result.decodeTokS.toFixed(1)} tok/s`],
        ['bytes per token', formatBytes(result.bytesPerToken)],
        ['achieved', `${formatBytes(result.achievedBytesPerSecond)}/s`],
        ['copy bandwidth', `${formatBytes(result.copyBytesPerSecond)}/s`],
        ['roofline fraction', `${(result.rooflineFraction * 100).toFixed(1)}%`],
        ['dispatches/token', result.dispatchesPerToken.toFixed(0)],
        ['submits/token', result.submitsPerToken.toFixed(2)],
        ['host ms/token', result.hostMsPerToken.toFixed(3)],
      ];
      process.stdout.write(rows.map(([k, v]) => `${k.padEnd(20)}${v}\n`).join(''));
      if (result.profile) process.stdout.write(profileTable(result.profile));
    }
    // The Benchmarks screen compares runs from an empty context and the default cache: a run at depth, or with another cache, is not one of them.
    if (depth > 0 || kvTypes.k !== 'f16' || kvTypes.v !== 'f16') return;
    await storeResults(async (store) => {
      const { entry, sha256 } = await store.model(path);
      // A loaded model always has its load time.
      new BenchRunStore(store.db).add(
        benchRunRecord(entry, sha256, { result, info, loadMs: info.loadMs! }, store.appVersion),
      );
    });
  },
};

/**
 * The kernel shapes in a line: "cpu shapes: mat-vec 8 threads × 64 rows (8 a thread), batches of 4,
 * prefill tiled, subgroups", or on a GPU "gpu shapes: mat-vec 64 threads × 4 rows (nvidia's), x
 * staged, prefill wgtiled, …".
 */
function shapesLine(s: KernelShapes): string {
  const { workgroup, rows, threadRows, xStaged, tunedFor } = s.matvec;
  const whose = threadRows > 0 ? ` (${threadRows} a thread)` : ` (${tunedFor}'s)`;
  const parts = [
    `${s.family} shapes: mat-vec ${workgroup} threads × ${rows} rows${whose}`,
    ...(xStaged ? ['x staged'] : []),
    ...(s.batchTokens > 0 ? [`batches of ${s.batchTokens}`] : []),
    `prefill ${s.prefill}`,
    ...(s.subgroups ? ['subgroups'] : []),
    ...(s.f16 ? ['f16'] : []),
    ...(s.foldsNorm ? ['norm folded'] : []),
    ...(s.intDot ? ['integer dots'] : []),
  ];
  return parts.join(', ');
}

/** llama-bench's suffix for a depth: " @ d2048". */
function at(depth: number): string {
  return depth > 0 ? ` @ d${depth}` : '';
}

/** The profile as a table: one kernel per line, slowest first. */
function profileTable(profile: StepProfile): string {
  const head = `\nGPU time per token by kernel (${profile.tokens} decode steps, ${profile.gpuMsPerToken.toFixed(2)} ms per token in all)\n`;
  const lines = profile.kernels.map((k) => {
    const share = profile.gpuMsPerToken > 0 ? (k.gpuMsPerToken / profile.gpuMsPerToken) * 100 : 0;
    const bandwidth =
      k.bytesPerSecond === null
        ? ''
        : `  ${formatBytes(k.bytesPerSecond)}/s, ${((k.rooflineFraction ?? 0) * 100).toFixed(1)}% of copy`;
    return `${k.kernel.padEnd(32)}${k.gpuMsPerToken.toFixed(3).padStart(10)} ms ${share.toFixed(1).padStart(5)}%  ×${k.dispatchesPerToken}${bandwidth}\n`;
  });
  return head + lines.join('');
}

/** What the bench is doing once `done` tokens are in: filling the depth, the prompt, or decoding. */
function benchStage(done: number, depth: number, p: number): string {
  if (done < depth) return `filling ${depth} tokens of depth`;
  if (done < depth + p) return `prefill pp${p}`;
  return `decode: ${done - depth - p} tokens`;
}
