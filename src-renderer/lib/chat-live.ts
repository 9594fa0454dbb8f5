/**
 * What an answer being written shows while it streams, from its 'chat-progress' events: the model
 * load, then the tokens so far and the speed. Its GenerationStats replace these once it ends.
 */
import type { AnswerProgress, ContextUsage, GenerationStats } from '../../src-preload/api';
import { formatMs, formatRate } from './format';
import { kvCacheStatsItem } from './kv-cache';

export type LoadingProgress = Extract<AnswerProgress, { phase: 'loading' }>;
export type PreparingProgress = Extract<AnswerProgress, { phase: 'preparing' }>;
export type GeneratingProgress = Extract<AnswerProgress, { phase: 'generating' }>;

/** The context bar's numbers while an answer is written: the prompt and the tokens generated so far. */
export function liveContextUsage(usage: ContextUsage, progress: AnswerProgress | undefined): ContextUsage {
  if (progress?.phase !== 'generating') return usage;
  return { ...usage, usedTokens: Math.min(usage.contextSize, progress.promptTokens + progress.generatedTokens) };
}

/** "Loading model… 42%"; without the share until the engine has opened the file. */
export function loadingText(progress: LoadingProgress): string {
  if (progress.totalBytes <= 0) return 'Loading model…';
  return `Loading model… ${Math.floor((progress.doneBytes / progress.totalBytes) * 100)}%`;
}

/** "Preparing GPU kernels… 3 of 20": each kernel's first run, compiled on the way. */
export function preparingText(progress: PreparingProgress): string {
  return `Preparing GPU kernels… ${progress.doneKernels} of ${progress.totalKernels}`;
}

export function tokenCount(tokens: number): string {
  return `${tokens} ${tokens === 1 ? 'token' : 'tokens'}`;
}

/** The statistics line while tokens stream: the speed so far (from the second token on) and the tokens. */
export function liveStatsItems(progress: GeneratingProgress): string[] {
  const speed = progress.decodeTokS === null ? [] : [`${formatRate(progress.decodeTokS)} so far`];
  return [...speed, tokenCount(progress.generatedTokens)];
}

/** Why an answer ended, when it is not the model's own end: the limit it reached names itself. */
const ENDINGS: Record<GenerationStats['stopReason'], string | null> = {
  stop: null,
  length: 'reached the answer length limit',
  context: 'the context is full',
  // The message's own badge says it was stopped.
  cancelled: null,
  error: 'ended by an error',
};

/**
 * The statistics line of an ended answer. Stopped before its first token, it says how far the
 * prompt was read and leaves out the speed and time to a token that never came.
 */
export function finishedStatsItems(stats: GenerationStats): string[] {
  const reused = stats.reusedTokens > 0 ? ` (${stats.reusedTokens} reused)` : '';
  const read = stats.promptReadTokens;
  const prompt =
    read === undefined
      ? `prompt ${stats.promptTokens} tokens${reused} at ${formatRate(stats.prefillTokS)}`
      : `stopped reading the prompt at ${read} of ${stats.promptTokens} tokens${reused}`;
  const answered = stats.generatedTokens > 0;
  return [
    answered ? formatRate(stats.decodeTokS) : null,
    answered ? tokenCount(stats.generatedTokens) : 'no answer yet',
    answered ? `${formatMs(stats.ttftMs)} to first token` : null,
    prompt,
    `seed ${stats.seed}`,
    kvCacheStatsItem(stats.kvCacheTypes),
    ENDINGS[stats.stopReason],
  ].filter((item) => item !== null);
}
