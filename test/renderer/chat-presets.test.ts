import { describe, expect, it } from 'vitest';
import type { SamplingSettings } from '../../src-preload/api';
import { matchingPreset, samplingChanges, type SamplingPresets } from '../../src-renderer/lib/chat-presets';

const precise: SamplingSettings = {
  temperature: 0.2,
  topK: 40,
  topP: 0.9,
  minP: 0.05,
  repeatPenalty: 1.1,
  seed: null,
  maxTokens: 1024,
};
const PRESETS: SamplingPresets = {
  precise,
  balanced: { ...precise, temperature: 0.7, topP: 0.95 },
  creative: { ...precise, temperature: 1.1, topP: 0.98, minP: 0 },
};

describe('matchingPreset', () => {
  it('names the preset whose values the settings have', () => {
    expect(matchingPreset(PRESETS, { ...PRESETS.balanced })).toBe('balanced');
    expect(matchingPreset(PRESETS, { ...PRESETS.creative })).toBe('creative');
  });

  it('is null once any value differs (custom settings)', () => {
    expect(matchingPreset(PRESETS, { ...PRESETS.balanced, seed: 42 })).toBeNull();
    expect(matchingPreset(PRESETS, { ...PRESETS.precise, maxTokens: 1025 })).toBeNull();
  });
});

describe('samplingChanges', () => {
  it('lists only the fields that were changed', () => {
    expect(samplingChanges(precise, { ...precise, temperature: 0, seed: 7 })).toEqual({ temperature: 0, seed: 7 });
  });

  it('is null when nothing changed', () => {
    expect(samplingChanges(precise, { ...precise })).toBeNull();
  });
});
