import { describe, expect, it } from 'vitest';
import { liveContextUsage, liveStatsItems, loadingText } from '../../src-renderer/lib/chat-live';

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
