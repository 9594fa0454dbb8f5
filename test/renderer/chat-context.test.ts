import { describe, expect, it } from 'vitest';
import type { GenerationStats } from '../../src-preload/api';
import { contextOverflowSummary } from '../../src-preload/api';
import { contextNotices } from '../../src-renderer/lib/chat-context';

const stats: GenerationStats = {
  promptTokens: 10,
  reusedTokens: 0,
  generatedTokens: 5,
  ttftMs: 1,
  decodeTokS: 1,
  prefillTokS: 1,
  stopReason: 'stop',
  seed: 1,
};

describe('context notices under an answer', () => {
  it('say how many earliest messages were left out, in the context the answer was written in', () => {
    expect(contextNotices({ ...stats, contextSize: 4096, leftOutMessages: 3 }, 512)).toEqual([
      '3 earliest messages left out to fit the 4,096-token context.',
    ]);
    expect(contextNotices({ ...stats, leftOutMessages: 1 }, 512)).toEqual([
      '1 earliest message left out to fit the 512-token context.',
    ]);
    expect(contextNotices(stats, 512)).toEqual([]);
  });

  it('say the context is full and what to do when the answer ended there', () => {
    const [full] = contextNotices({ ...stats, stopReason: 'context', contextSize: 64 }, 512);
    expect(full).toMatch(
      /^The context is full \(64 tokens\): the answer stops here\. Raise the context size, start a new chat, or choose a policy/,
    );
    expect(contextNotices({ ...stats, stopReason: 'length', contextSize: 64 }, 512)).toEqual([]);
  });

  it('state each policy as "When the context is full: ..."', () => {
    expect(contextOverflowSummary('truncate-middle')).toMatch(
      /^When the context is full: truncate the middle \(keep the system prompt and the first exchange/,
    );
    expect(contextOverflowSummary('rolling-window')).toMatch(
      /^When the context is full: rolling window \(keep the system prompt and leave out the oldest messages/,
    );
    expect(contextOverflowSummary('stop')).toMatch(/^When the context is full: stop at the limit \(leave nothing out/);
  });
});
