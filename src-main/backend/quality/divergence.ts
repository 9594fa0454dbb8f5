/**
 * Perplexity windows over a text and the KL divergence of a quantized model against its base: the
 * one implementation behind `gufo perplexity`, `gufo kld` and the app's quality reports, which
 * differ only in how they get an engine (a fresh process, or the app's pool) and show progress.
 *
 * The base model runs first and writes its log-probabilities (f32, vocabulary × scored positions)
 * to a temporary file; the quantized model's run reads them back one position at a time, inside
 * the engine process, so distributions never cross the IPC channel and memory stays bounded.
 */
import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { DivergenceStats, vocabularyMismatch, type DivergenceSummary } from '../../core/quality/divergence';
import { perplexityWindows, QualityError, scoredIn, type WindowPlan } from '../../core/quality/perplexity';
import { createTokenizer, readVocab } from '../../core/tokenizer/index';
import type { EngineHost } from '../../engine-wire/host';
import type { EngineInfo, EvaluateRequest, GpuInfo, WindowScores } from '../../engine-wire/protocol';
import { openGguf } from '../../node/gguf-io';

/** llama-perplexity's window size. */
const DEFAULT_WINDOW = 512;

export interface QualityText {
  text: string;
  /** Names the text in errors and reports: a file's path, "built-in text v1". */
  label: string;
}

/** The window size unless one is asked for: 512 tokens, or the model's training context when smaller. */
export function defaultWindow(trainedContext: number | null | undefined): number {
  return Math.min(DEFAULT_WINDOW, trainedContext ?? DEFAULT_WINDOW);
}

/** The windows of `text` for the model in `gguf`, tokenized with BOS when its vocabulary adds one. */
export function planTextWindows(gguf: GgufFile, text: QualityText, ctx: number): WindowPlan {
  const vocab = readVocab(gguf);
  const tokens = createTokenizer(vocab).tokenize(text.text, { addBos: true });
  try {
    return perplexityWindows(tokens, ctx, vocab.addBos ? vocab.bos : null);
  } catch (err) {
    if (err instanceof QualityError) throw new QualityError(`${text.label}: ${err.message}`);
    throw err;
  }
}

/**
 * The base's windows over the text (of the size `ctx` picks for the base's file), once every
 * compared file is known to share the base's vocabulary (the first that does not is named).
 */
export function planComparison(
  basePath: string,
  quantPaths: readonly string[],
  text: QualityText,
  ctx: (base: GgufFile) => number,
): WindowPlan {
  const base = openGguf(basePath);
  try {
    const baseVocab = readVocab(base.gguf);
    for (const quantPath of quantPaths) {
      const quant = openGguf(quantPath);
      try {
        const mismatch = vocabularyMismatch(baseVocab, readVocab(quant.gguf));
        if (mismatch) throw new QualityError(mismatch);
      } finally {
        quant.file.close();
      }
    }
    return planTextWindows(base.gguf, text, ctx(base.gguf));
  } finally {
    base.file.close();
  }
}

/** Runs `work` with the model at `path` loaded with a context of at least `ctx` tokens. */
export type EngineRunner = <T>(
  path: string,
  ctx: number,
  work: (host: EngineHost, info: EngineInfo) => Promise<T>,
) => Promise<T>;

/**
 * Evaluates every window in order, stopping between windows when `signal` fires; `extra` adds
 * log-probability files to the request for a window whose first scored position has index
 * `position` over the whole text. `onWindow` hears how many windows are done.
 */
export async function scoreWindows(
  host: EngineHost,
  plan: WindowPlan,
  signal: AbortSignal,
  extra: (position: number) => Pick<EvaluateRequest, 'saveLogProbs' | 'baseLogProbs'>,
  onScores: (scores: WindowScores) => void,
  onWindow?: (done: number, total: number) => void,
): Promise<void> {
  const n = plan.windows.length;
  let position = 0;
  for (const [i, w] of plan.windows.entries()) {
    signal.throwIfAborted();
    onWindow?.(i, n);
    onScores(await host.evaluate({ ids: [...w.ids], first: w.first, ...extra(position) }));
    position += scoredIn(w);
  }
  onWindow?.(n, n);
}

export type ComparedModel = 'base' | 'quantized';

export interface DivergenceRun {
  basePath: string;
  quantPath: string;
  plan: WindowPlan;
  signal: AbortSignal;
  runEngine: EngineRunner;
  /** Windows done of the model being evaluated. */
  onProgress?: (model: ComparedModel, done: number, total: number) => void;
}

/** Several quantized files against one base: the base runs once, each file after it in order. */
export interface DivergencesRun extends Omit<DivergenceRun, 'quantPath' | 'onProgress'> {
  quantPaths: readonly string[];
  /** Windows done of the model being evaluated; `index` is the quantized file's, null for the base. */
  onProgress?: (index: number | null, done: number, total: number) => void;
}

export interface DivergenceResult {
  summary: DivergenceSummary;
  /** The adapter the quantized model ran on (the base's, unless the engine moved). */
  adapter: GpuInfo;
}

export async function measureDivergence(run: DivergenceRun): Promise<DivergenceResult> {
  const { quantPath, onProgress, ...rest } = run;
  const [result] = await measureDivergences({
    ...rest,
    quantPaths: [quantPath],
    onProgress: (index, done, total) => onProgress?.(index === null ? 'base' : 'quantized', done, total),
  });
  return result!;
}

/**
 * One result per quantized file, in order. The base's log-probabilities are computed once and
 * read back by every file's run, over the same windows; the first file that fails stops the rest.
 */
export async function measureDivergences(run: DivergencesRun): Promise<DivergenceResult[]> {
  const { basePath, quantPaths, plan, signal } = run;
  const baseScores: WindowScores[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'gufo-kld-'));
  const logProbs = join(dir, 'base.logprobs');
  try {
    writeFileSync(logProbs, '');
    const vocab = await run.runEngine(basePath, plan.ctx, async (host, info) => {
      const n = info.model!.vocab;
      checkSpace(dir, plan.scored * n * 4);
      await scoreWindows(
        host,
        plan,
        signal,
        (position) => ({ saveLogProbs: { path: logProbs, position } }),
        (s) => baseScores.push(s),
        (done, total) => run.onProgress?.(null, done, total),
      );
      return n;
    });
    const results: DivergenceResult[] = [];
    for (const [index, quantPath] of quantPaths.entries()) {
      const stats = new DivergenceStats();
      for (const s of baseScores) stats.addBase(s);
      const adapter = await run.runEngine(quantPath, plan.ctx, async (host, info) => {
        if (info.model!.vocab !== vocab) {
          throw new QualityError(
            `${quantPath}: its output has ${info.model!.vocab} logits per token, ${basePath}'s has ${vocab}; KL divergence needs the same vocabulary`,
          );
        }
        await scoreWindows(
          host,
          plan,
          signal,
          (position) => ({ baseLogProbs: { path: logProbs, position } }),
          (s) => stats.addCompared(s),
          (done, total) => run.onProgress?.(index, done, total),
        );
        return info.adapter;
      });
      results.push({ summary: stats.summary(), adapter });
    }
    return results;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Refuses to start when the temporary folder cannot hold the base's log-probabilities. */
function checkSpace(dir: string, bytes: number): void {
  const { bavail, bsize } = statfsSync(dir);
  const free = bavail * bsize;
  if (free < bytes) {
    const n = (v: number) => v.toLocaleString('en-US');
    throw new QualityError(
      `${dir}: the base's log-probabilities need ${n(bytes)} bytes of temporary space, only ${n(free)} are free (set TMPDIR, or use a shorter text)`,
    );
  }
}
