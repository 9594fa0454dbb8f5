/** Sampling presets in the chat settings form: which one the fields match, and what was changed. */
import type { SamplingPresetName, SamplingSettings } from '../../src-preload/api';

export type SamplingPresets = Record<SamplingPresetName, SamplingSettings>;

export const PRESET_LABELS: Record<SamplingPresetName, string> = {
  precise: 'Precise',
  balanced: 'Balanced',
  creative: 'Creative',
};

/** The preset `sampling` equals, or null when a value was edited ("Custom"). */
export function matchingPreset(presets: SamplingPresets, sampling: SamplingSettings): SamplingPresetName | null {
  const names = Object.keys(presets) as SamplingPresetName[];
  return names.find((name) => samplingChanges(presets[name], sampling) === null) ?? null;
}

/** The fields of `edited` that differ from `base`; null when none do. */
export function samplingChanges(base: SamplingSettings, edited: SamplingSettings): Partial<SamplingSettings> | null {
  const changes: Partial<SamplingSettings> = {};
  for (const key of Object.keys(base) as (keyof SamplingSettings)[])
    if (edited[key] !== base[key]) Object.assign(changes, { [key]: edited[key] });
  return Object.keys(changes).length === 0 ? null : changes;
}
