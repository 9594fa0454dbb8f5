import { describe, expect, it } from 'vitest';
import type { MemoryEstimate } from '../../src-preload/api';
import { bytesAt, CONTEXT_CHOICES, contextChoices } from '../../src-renderer/lib/memory-contexts';

const MIB = 2 ** 20;
/** 100 MiB of weights and 1 MiB of scratch, and a KV cache of 8 KiB per token (16 MiB at 2,048). */
const estimate = {
  context: 2048,
  weightBytes: 100 * MIB,
  kvBytes: 16 * MIB,
  kvBytesPerToken: 8192,
  totalBytes: 117 * MIB,
} as MemoryEstimate;

describe('Memory tab context choices (issue #30 item 12)', () => {
  it('warns past the trained context and says which contexts fit the GPU memory budget', () => {
    const budget = { bytes: 200 * MIB, source: 'Settings' };
    const choices = contextChoices(2048, estimate, budget);
    expect(choices.map((c) => c.tokens)).toEqual([...CONTEXT_CHOICES]);
    expect(choices.map((c) => c.pastTrained)).toEqual([false, true, true, true, true]);
    // 101 MiB + 8 KiB × tokens: 117 and 133 and 165 MiB fit 200 MiB; 357 and 1125 MiB do not.
    expect(choices.map((c) => c.fits)).toEqual([true, true, true, false, false]);
    expect(choices[0]!.note).toBe('117 MiB fits the GPU memory budget of 200 MiB (Settings).');
    expect(choices[3]!.note).toBe(
      'Past the 2,048 tokens the model was trained on: its answers degrade there. 357 MiB is over the GPU memory budget of 200 MiB (Settings).',
    );
  });

  it('says nothing of a budget there is not, nor of a trained context the file does not give', () => {
    const choices = contextChoices(null, estimate, null);
    expect(choices.every((c) => !c.pastTrained && c.fits === null && c.note === '')).toBe(true);
    expect(bytesAt({ ...estimate, kvBytesPerToken: null }, 4096)).toBeNull();
    expect(
      contextChoices(2048, { ...estimate, kvBytes: null, kvBytesPerToken: null }, { bytes: MIB, source: 'x' })[0],
    ).toMatchObject({ fits: null, note: '' });
  });
});
