import { describe, expect, it } from 'vitest';
import type { QualityPrediction } from '../../src-preload/api';
import { shownWhileLoading } from '../../src-renderer/lib/export-prediction.svelte';

const prediction = (modelId: number, imatrix: string | null) =>
  ({ modelId, sha256: 'x', imatrix, cached: true, computedAt: '', types: [] }) as QualityPrediction;

describe("the Export cards' predictions", () => {
  it("keep the model's prediction while another (with an importance matrix) is computed, not another model's", () => {
    const without = prediction(3, null);
    expect(shownWhileLoading(without, 3)).toBe(without);
    expect(shownWhileLoading(without, 4)).toBeNull();
    expect(shownWhileLoading(null, 3)).toBeNull();
    expect(shownWhileLoading(without, null)).toBeNull();
  });
});
