import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Throttle } from '../../src-main/backend/throttle';

describe('Throttle', () => {
  beforeEach(() => void vi.useFakeTimers());
  afterEach(() => void vi.useRealTimers());

  it('sends the first value at once, then only the newest once per interval, and drops it when cancelled', () => {
    const sent: number[] = [];
    const throttle = new Throttle<number>(250, (n) => sent.push(n));
    throttle.push(1);
    throttle.push(2);
    throttle.push(3);
    expect(sent).toEqual([1]);
    vi.advanceTimersByTime(250);
    expect(sent).toEqual([1, 3]);
    vi.advanceTimersByTime(1000); // nothing new: nothing sent
    expect(sent).toEqual([1, 3]);
    throttle.push(4);
    expect(sent).toEqual([1, 3, 4]);
    throttle.push(5);
    throttle.cancel();
    vi.advanceTimersByTime(1000);
    expect(sent).toEqual([1, 3, 4]);
  });
});
