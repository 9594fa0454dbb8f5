/** Which messages each context overflow policy may keep (backend/chat/overflow.ts), without a model. */
import { describe, expect, it } from 'vitest';
import type { MessageRole } from '../../src-preload/api';
import { keptMessages, leftOutCount } from '../../src-main/backend/chat/overflow';

/** user, assistant, user, ... of length n. */
const line = (n: number): MessageRole[] => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 'user' : 'assistant'));

describe('context overflow policies', () => {
  it('"stop" never leaves anything out', () => {
    expect(keptMessages(line(9), 'stop')).toEqual([{ head: 0, start: 0 }]);
  });

  it('a rolling window leaves out the oldest exchanges, the first one too, down to the newest', () => {
    expect(keptMessages(line(7), 'rolling-window')).toEqual([
      { head: 0, start: 0 },
      { head: 0, start: 2 },
      { head: 0, start: 4 },
      { head: 0, start: 6 },
    ]);
  });

  it('truncating the middle keeps the first exchange while it can, then the newest exchange alone', () => {
    const kept = keptMessages(line(7), 'truncate-middle');
    expect(kept).toEqual([
      { head: 0, start: 0 },
      { head: 2, start: 4 },
      { head: 2, start: 6 },
      { head: 0, start: 6 },
    ]);
    expect(kept.map(leftOutCount)).toEqual([0, 2, 4, 6]);
    // Two exchanges: nothing lies between the first and the newest.
    expect(keptMessages(line(3), 'truncate-middle')).toEqual(keptMessages(line(3), 'rolling-window'));
  });

  it('starts a kept part only at a user message: tool results stay with the call they answer, a greeting with the first exchange', () => {
    const roles: MessageRole[] = ['assistant', 'user', 'assistant', 'tool', 'assistant', 'user', 'assistant', 'user'];
    expect(keptMessages(roles, 'rolling-window')).toEqual([
      { head: 0, start: 0 },
      { head: 0, start: 1 },
      { head: 0, start: 5 },
      { head: 0, start: 7 },
    ]);
    expect(keptMessages(roles, 'truncate-middle')).toEqual([
      { head: 0, start: 0 },
      { head: 5, start: 7 },
      { head: 0, start: 7 },
    ]);
  });

  it('each choice leaves out at least what the one before did, so the prompts never grow along the list', () => {
    for (const overflow of ['rolling-window', 'truncate-middle'] as const) {
      for (let n = 1; n <= 12; n++) {
        const kept = keptMessages(line(n), overflow);
        const outs = kept.map(({ head, start }) => new Set(Array.from({ length: start - head }, (_, i) => head + i)));
        for (let i = 1; i < outs.length; i++)
          for (const out of outs[i - 1]!) expect(outs[i]!.has(out), `${overflow} n=${n} choice ${i}`).toBe(true);
        // The newest message is always kept.
        for (const { start } of kept) expect(start).toBeLessThan(n);
      }
    }
  });
});
