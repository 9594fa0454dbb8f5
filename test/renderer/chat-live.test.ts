import { describe, expect, it } from 'vitest';
import { finishedStatsItems, liveContextUsage, liveStatsItems, loadingText } from '../../src-renderer/lib/chat-live';

const usage = {
  usedTokens: 12,
  contextSize: 100,
  droppedMessages: 0,
  overflow: 'rolling-window' as const,
  policy: 'oldest first',
};

describe('live answer numbers', () => {
  it('counts the prompt and the tokens generated so far in the context bar, up to the context size', () => {
    expect(liveContextUsage(usage, undefined)).toBe(usage);
    expect(liveContextUsage(usage, { phase: 'loading', doneBytes: 1, totalBytes: 2 })).toBe(usage);
    expect(
      liveContextUsage(usage, { phase: 'generating', promptTokens: 20, generatedTokens: 7, decodeTokS: 3 }),
    ).toEqual({ ...usage, usedTokens: 27 });
    expect(
      liveContextUsage(usage, { phase: 'generating', promptTokens: 90, generatedTokens: 30, decodeTokS: 3 }).usedTokens,
    ).toBe(100);
  });

  it('says how much of the model is loaded, once the engine knows its size', () => {
    expect(loadingText({ phase: 'loading', doneBytes: 0, totalBytes: 0 })).toBe('Loading model…');
    expect(loadingText({ phase: 'loading', doneBytes: 429, totalBytes: 1000 })).toBe('Loading model… 42%');
    expect(loadingText({ phase: 'loading', doneBytes: 1000, totalBytes: 1000 })).toBe('Loading model… 100%');
  });

  it('shows the speed once there are two tokens', () => {
    expect(liveStatsItems({ phase: 'generating', promptTokens: 5, generatedTokens: 1, decodeTokS: null })).toEqual([
      '1 token',
    ]);
    expect(liveStatsItems({ phase: 'generating', promptTokens: 5, generatedTokens: 40, decodeTokS: 123.45 })).toEqual([
      '123.5 tok/s so far',
      '40 tokens',
    ]);
  });
});

describe("an ended answer's numbers", () => {
  const stats = {
    promptTokens: 1046,
    reusedTokens: 456,
    generatedTokens: 0,
    ttftMs: 900,
    decodeTokS: 0,
    prefillTokS: 300,
    stopReason: 'cancelled' as const,
    seed: 7,
  };

  it('stopped before its first token: how far the prompt was read, no speed or time to a token', () => {
    expect(finishedStatsItems({ ...stats, promptReadTokens: 712 })).toEqual([
      'no answer yet',
      'stopped reading the prompt at 712 of 1046 tokens (456 reused)',
      'seed 7',
    ]);
  });

  it('a whole answer: speed, tokens, time to first token, the prompt and the limit it reached', () => {
    const items = finishedStatsItems({ ...stats, generatedTokens: 20, decodeTokS: 10, stopReason: 'context' });
    expect(items[1]).toBe('20 tokens');
    expect(items).toContain('prompt 1046 tokens (456 reused) at 300.0 tok/s');
    expect(items.at(-1)).toBe('the context is full');
  });
});
