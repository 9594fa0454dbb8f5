import { describe, expect, it } from 'vitest';
import { kvCacheStatsItem, kvCacheTypeLabel, kvCacheTypesText, savedText } from '../../src-renderer/lib/kv-cache';

describe('KV cache types in the UI', () => {
  it('names one type for K and V alike, both when they differ', () => {
    expect(kvCacheTypesText({ k: 'q8_0', v: 'q8_0' })).toBe('q8_0');
    expect(kvCacheTypesText({ k: 'q8_0', v: 'f16' })).toBe('K q8_0, V f16');
    expect(kvCacheTypeLabel('q4_0')).toBe('q4_0 (about a quarter of f16)');
  });

  it("states an answer's cache only when it was not the default f16", () => {
    expect(kvCacheStatsItem(undefined)).toBeNull();
    expect(kvCacheStatsItem({ k: 'f16', v: 'f16' })).toBeNull();
    expect(kvCacheStatsItem({ k: 'q8_0', v: 'q8_0' })).toBe('KV cache q8_0');
    expect(kvCacheStatsItem({ k: 'f16', v: 'q4_0' })).toBe('KV cache K f16, V q4_0');
  });

  it('says what a type saves against f16, and what f32 costs', () => {
    const f16 = 4 * 2 ** 20;
    const row = (type: 'f16' | 'q8_0' | 'f32', kvBytes: number | null) => ({
      type,
      kvBytes,
      savedBytes: kvBytes === null ? null : f16 - kvBytes,
      problem: null,
    });
    expect(savedText(row('f16', f16), f16)).toBe('—');
    expect(savedText(row('q8_0', (f16 / 64) * 34), f16)).toBe('1.88 MiB (47%)');
    expect(savedText(row('f32', 2 * f16), f16)).toBe('4.00 MiB more (100%)');
    expect(savedText(row('q8_0', null), f16)).toBe('—');
  });
});
