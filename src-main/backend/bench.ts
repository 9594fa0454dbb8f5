/**
 * Benchmarks: a model's prefill and decode speed on this machine's GPU, measured by the engine
 * (EngineHost.bench, as `gufo bench` does) as a 'bench' job, and kept in bench_runs so runs can
 * be compared over time, per model and adapter.
 */
import type { BenchApi, BenchRequest, BenchRun, ModelEntry } from '../../src-preload/api';
import { modelSha256 } from '../node/library/model-sha256';
import { BenchRunStore } from '../node/store/bench-runs';
import { benchRunRecord } from './bench-record';
import { requireReadableModel, type BackendContext } from './context';
import { untilAborted, type JobContext } from './jobs';
import { promised } from './promised';

const DEFAULT_PROMPT_TOKENS = 512;
const DEFAULT_GEN_TOKENS = 128;
/** Tokens per phase at most: the engine allocates a KV cache for prompt + generated tokens. */
const MAX_TOKENS = 65_536;

/** The job's steps, for its progress: load, prefill + decode, hash (when the library has no hash yet). */
const STEPS = 3;

export function createBenchApi(ctx: BackendContext): BenchApi {
  const runs = new BenchRunStore(ctx.db);

  /** The file's sha256: the library's, else computed now (and given to the library). */
  async function fileSha256(model: ModelEntry, job: JobContext): Promise<string> {
    const { sha256, computed } = await modelSha256(ctx.models, model, {
      signal: job.signal,
      onProgress: (bytes) =>
        job.progress(2, STEPS, `Hashing the model file: ${Math.floor((bytes / model.bytes) * 100)}%`),
    });
    if (computed) ctx.events.emit({ type: 'library-changed' });
    return sha256;
  }

  async function runBenchmark(
    job: JobContext,
    model: ModelEntry,
    promptTokens: number,
    genTokens: number,
  ): Promise<BenchRun> {
    const loading = `Loading ${model.name}`;
    job.progress(0, STEPS, loading);
    const measured = await untilAborted(
      ctx.engines.withModel(
        {
          path: model.path,
          ctx: promptTokens + genTokens,
          onProgress: (done, total) => job.progress(0, STEPS, `${loading}: ${Math.floor((done / total) * 100)}%`),
        },
        async ({ host, info }) => {
          // Cancelled while waiting for the engine or loading: start no benchmark nobody waits for.
          job.signal.throwIfAborted();
          const bench = await whileTicking(job, `Prefill ${promptTokens} tokens, then decode ${genTokens} tokens`, () =>
            host.bench(promptTokens, genTokens),
          );
          // The engine's own load time of this model: of this call's load, or of the earlier one
          // that left the model loaded (the pool keeps it), which loaded the same file.
          return { ...bench, loadMs: info.loadMs };
        },
      ),
      job.signal,
    );
    const fileSha = await fileSha256(model, job);
    job.signal.throwIfAborted();
    // A loaded model always has its load time.
    const run = runs.add(benchRunRecord(model, fileSha, { ...measured, loadMs: measured.loadMs! }, ctx.version));
    job.progress(STEPS, STEPS, null);
    return run;
  }

  return promised<BenchApi>({
    startBenchmark(request: BenchRequest) {
      const promptTokens = tokenCount(request.promptTokens, DEFAULT_PROMPT_TOKENS, 'promptTokens');
      const genTokens = tokenCount(request.genTokens, DEFAULT_GEN_TOKENS, 'genTokens');
      const model = requireReadableModel(ctx, request.modelId);
      return ctx.jobs.start(
        {
          kind: 'bench',
          title: `Benchmark ${model.name} (pp${promptTokens}, tg${genTokens})`,
          unit: 'steps',
          modelId: model.id,
        },
        (job) => runBenchmark(job, model, promptTokens, genTokens),
      );
    },

    listBenchmarks(modelId) {
      return runs.list(modelId);
    },

    deleteBenchmark(id) {
      if (!runs.delete(id)) throw new Error(`no benchmark run with id ${id}`);
    },
  });
}

function tokenCount(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > MAX_TOKENS)
    throw new Error(`${field} must be a whole number from 1 to ${MAX_TOKENS}, got ${value}`);
  return value;
}

/**
 * Runs step 1 (the measurement), reporting its elapsed seconds every half second: the engine
 * reports nothing until it is done, and the time is what the user can watch meanwhile.
 */
async function whileTicking<T>(job: JobContext, what: string, work: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const tick = () => job.progress(1, STEPS, `${what}: ${Math.floor((Date.now() - started) / 1000)} s`);
  tick();
  const timer = setInterval(tick, 500);
  try {
    return await work();
  } finally {
    clearInterval(timer);
  }
}
