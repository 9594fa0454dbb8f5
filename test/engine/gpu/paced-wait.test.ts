// PacedWait on Node's timers (faked, so the times are exact): when each wait starts to poll.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PacedWait, pacesWaits } from '../../../src-main/engine/gpu/paced-wait';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'performance'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** Runs one wait of `kind` whose work takes `workMs` from the wait's start; resolves to when it began to poll (ms after the start). */
async function waitOnce(waits: PacedWait, kind: string, workMs: number): Promise<number> {
  const began = performance.now();
  let polledAt = -1;
  const done = waits.wait(kind, () => {
    polledAt = performance.now() - began;
    const left = Math.max(0, workMs - polledAt);
    return new Promise<void>((resolve) => setTimeout(resolve, left));
  });
  await vi.runAllTimersAsync();
  await done;
  return polledAt;
}

describe('PacedWait', () => {
  it('polls at once until it knows the kind, then sleeps 3/4 of the shortest recent wait', async () => {
    const waits = new PacedWait(true);
    expect(await waitOnce(waits, 'step of 1', 40)).toBe(0);
    expect(await waitOnce(waits, 'step of 1', 48)).toBe(30);
    expect(await waitOnce(waits, 'step of 1', 60)).toBe(30);
    // Another kind (more rows, or a prompt chunk) keeps its own.
    expect(await waitOnce(waits, 'step of 4', 100)).toBe(0);
    expect(await waitOnce(waits, 'step of 4', 100)).toBe(75);
  });

  it('follows a kind that got faster, and forgets a short wait after 8 more', async () => {
    const waits = new PacedWait(true);
    await waitOnce(waits, 'step', 64);
    // The work was done during the sleep: it took at most the sleep, and is taken for half of it.
    expect(await waitOnce(waits, 'step', 0)).toBe(48);
    expect(await waitOnce(waits, 'step', 40)).toBe(18);

    const fresh = new PacedWait(true);
    await waitOnce(fresh, 'step', 1);
    for (let i = 0; i < 7; i++) expect(await waitOnce(fresh, 'step', 40)).toBe(0);
    // The 1 ms wait is still among the last 8: too short to sleep for; then it is forgotten.
    expect(await waitOnce(fresh, 'step', 40)).toBe(0);
    expect(await waitOnce(fresh, 'step', 40)).toBe(30);
  });

  it('outgrows one long wait (a busy host, a driver compiling) within a few steps', async () => {
    const waits = new PacedWait(true);
    await waitOnce(waits, 'step', 400);
    // Each sleep finds its 8 ms of work done: 300, 112.5, 42.2, 15.8, then it polls at 5.9 ms.
    // Kept at the length of each sleep, the fifth would still sleep 95 ms and the tenth 22.
    const polled: number[] = [];
    for (let i = 0; i < 5; i++) polled.push(await waitOnce(waits, 'step', 8));
    expect(polled[4]).toBeLessThan(8);
    expect(polled.reduce((a, b) => a + b)).toBeLessThan(500);
  });

  it('does not sleep when not paced, or for waits too short for a timer', async () => {
    const unpaced = new PacedWait(false);
    await waitOnce(unpaced, 'step', 40);
    expect(await waitOnce(unpaced, 'step', 40)).toBe(0);
    const paced = new PacedWait(true);
    await waitOnce(paced, 'step', 2);
    expect(await waitOnce(paced, 'step', 2)).toBe(0);
  });

  it("sleeps through most of a step as short as SwiftShader's stories260K steps", async () => {
    const waits = new PacedWait(true);
    await waitOnce(waits, 'step', 8);
    expect(await waitOnce(waits, 'step', 8)).toBe(6);
  });
});

describe('PacedWait polling (real timers)', () => {
  /** Work that ends `workMs` from now, settled as the webgpu package settles it: polled from setImmediate. */
  function work(workMs: number) {
    const end = performance.now() + workMs;
    const w = {
      polls: 0,
      settle: () =>
        new Promise<void>((resolve) => {
          const poll = () => {
            w.polls++;
            if (performance.now() >= end) resolve();
            else setImmediate(poll);
          };
          setImmediate(poll);
        }),
    };
    return w;
  }

  it('after a sleep, polls with naps between the polls rather than back to back', async () => {
    vi.useRealTimers();
    const waits = new PacedWait(true);
    // The kind's first wait does not sleep, and polls back to back.
    const first = work(40);
    await waits.wait('step', first.settle);
    // The next sleeps 30 ms, then polls about every 0.5 ms for the last 10.
    const second = work(40);
    await waits.wait('step', second.settle);
    expect(second.polls).toBeLessThan(40);
    expect(first.polls).toBeGreaterThan(4 * second.polls);
  });
});

describe('pacesWaits', () => {
  it('paces on CPU adapters unless GUFO_PACED_WAITS says otherwise, and names a bad value', () => {
    expect(pacesWaits(true, {})).toBe(true);
    expect(pacesWaits(false, {})).toBe(false);
    expect(pacesWaits(true, { GUFO_PACED_WAITS: '0' })).toBe(false);
    expect(pacesWaits(false, { GUFO_PACED_WAITS: '1' })).toBe(true);
    expect(() => pacesWaits(true, { GUFO_PACED_WAITS: 'yes' })).toThrow('GUFO_PACED_WAITS=yes is not 0 or 1');
  });
});
