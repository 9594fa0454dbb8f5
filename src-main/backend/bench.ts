/**
 * Benchmarks: a model's prefill and decode speed on this machine's GPU, measured by the engine
 * (EngineHost.bench, as `gufo bench` does) as a 'bench' job, and kept in bench_runs so runs can
 * be compared over time, per model and adapter.
 */
import type { BenchApi, BenchRequest, BenchRun, ModelEntry } from '../../src-preload/api';
import { sha256File } from '../node/library/sha256-file';
import { BenchRunStore } from '../node/store/bench-runs';
import { requireModel, requireReadableModel, type BackendContext } from './context';
import type { JobContext } from './jobs';

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
    const known = requireModel(ctx, model.id).sha256;
    if (known) return known;
    const hashing = 'Hashing the model file';
    job.progress(2, STEPS, hashing);
    const sha256 = await sha256File(model.path, {
      signal: job.signal,
      onProgress: (bytes) => job.progress(2, STEPS, `${hashing}: ${Math.floor((bytes / model.bytes) * 100)}%`),
    });
    ctx.models.setSha256(model.id, sha256, model.mtimeMs);
    ctx.events.emit({ type: 'library-changed' });
    return sha256;
  }

  async function runBenchmark(job: JobContext, model: ModelEntry, promptTokens: number, genTokens: number): Promise<BenchRun> {
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
          const bench = await whileTicking(job, `Prefill ${promptTokens} tokens, then decode ${genTokens} tokens`, () => host.bench(promptTokens, genTokens));
          // The engine's own load time of this model: of this call's load, or of the earlier one
          // that left the model loaded (the pool keeps it), which loaded the same file.
          return { ...bench, loadMs: info.loadMs };
        },
      ),
      job.signal,
    );
    const fileSha = await fileSha256(model, job);
    job.signal.throwIfAborted();
    const { result, info } = measured;
    const run = runs.add({
      modelId: model.id,
      modelName: model.name,
      modelPath: model.path,
      fileSha256: fileSha,
      adapter: info.adapter.name,
      backend: info.adapter.backend,
      promptTokens: result.promptTokens,
      genTokens: result.genTokens,
      prefillTokS: result.prefillTokS,
      decodeTokS: result.decodeTokS,
      // The bench prefills from an empty KV cache and the engine's prefill rate is prompt tokens
      // over the time from the call to the first generated token: that time is the TTFT.
      ttftMs: (result.promptTokens * 1000) / result.prefillTokS,
      // A loaded model always has its load time.
      loadMs: measured.loadMs!,
      rooflineFraction: Number.isFinite(result.rooflineFraction) ? result.rooflineFraction : null,
      appVersion: ctx.version,
    });
    job.progress(STEPS, STEPS, null);
    return run;
  }

  return {
    async startBenchmark(request: BenchRequest) {
      const promptTokens = tokenCount(request.promptTokens, DEFAULT_PROMPT_TOKENS, 'promptTokens');
      const genTokens = tokenCount(request.genTokens, DEFAULT_GEN_TOKENS, 'genTokens');
      const model = requireReadableModel(ctx, request.modelId);
      return ctx.jobs.start(
        { kind: 'bench', title: `Benchmark ${model.name} (pp${promptTokens}, tg${genTokens})`, unit: 'steps', modelId: model.id },
        (job) => runBenchmark(job, model, promptTokens, genTokens),
      );
    },

    async listBenchmarks(modelId) {
      return runs.list(modelId);
    },

    async deleteBenchmark(id) {
      if (!runs.delete(id)) throw new Error(`no benchmark run with id ${id}`);
    },
  };
}

function tokenCount(value: number | undefined, fallback: number, field: string): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1 || value > MAX_TOKENS) throw new Error(`${field} must be a whole number from 1 to ${MAX_TOKENS}, got ${value}`);
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

/**
 * `promise`, or the abort as soon as `signal` fires. The engine cannot stop a benchmark midway;
 * the job ends at once and the engine's late answer is dropped (nothing is recorded).
 */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(signal.reason);
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', abort));
  });
}
