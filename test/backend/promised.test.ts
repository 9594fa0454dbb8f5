import { describe, expect, it } from 'vitest';
import { promised } from '../../src-main/backend/promised';

interface Api {
  double(n: number): Promise<number>;
  later(n: number): Promise<number>;
  check(n: number): Promise<void>;
}

describe('promised', () => {
  const api = promised<Api>({
    double: (n) => n * 2,
    later: (n) => new Promise((resolve) => setTimeout(() => resolve(n + 1), 1)),
    check(n) {
      if (n < 0) throw new Error(`${n} is negative`);
    },
  });

  it('answers a value at once as a promise of it, and passes a promise on', async () => {
    const doubled = api.double(21);
    expect(doubled).toBeInstanceOf(Promise);
    expect(await doubled).toBe(42);
    expect(await api.later(1)).toBe(2);
  });

  it('turns a throw into a rejection, as an async method would: the call itself never throws', async () => {
    let call: Promise<void> | undefined;
    expect(() => (call = api.check(-1))).not.toThrow();
    await expect(call).rejects.toThrow('-1 is negative');
    await expect(api.check(1)).resolves.toBeUndefined();
  });
});
