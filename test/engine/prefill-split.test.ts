/**
 * A prefill's submissions (prefill-split.ts): layer groups of bounded work, and the engine's
 * tokens unchanged when a prefill runs as several submissions (forced here on SwiftShader, where
 * the default budget has no bound, with a small LoadOptions.submitFlops).
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { layerFlops, prefillLayerGroups, SUBMIT_FLOPS, type LayerWork } from '../../src-main/engine/prefill-split';
import { STORIES_260K } from '../support/paths';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

/** Llama-3-8B: 32 layers; Q, K, V, O (4096 × 4096, 1024 × 4096 twice) and gate, up, down (14336 × 4096). */
const LLAMA_8B: LayerWork = {
  nLayer: 32,
  layerWeights: 4096 * (4096 + 1024 + 1024 + 4096) + 3 * 4096 * 14336,
  attentionWidth: 4096,
};

describe('prefillLayerGroups', () => {
  it("cuts an 8B model's 64-token chunk into groups of whole layers, each within a second of a slow GPU", () => {
    const groups = prefillLayerGroups(LLAMA_8B, 0, 64);
    // 64 tokens × (2 × 218M + attention) ≈ 2.8e10 FLOP a layer: 3 layers a submission, 11 submissions.
    expect(groups).toHaveLength(11);
    expect(groups[0]).toEqual({ from: 0, to: 3 });
    expect(groups.at(-1)).toEqual({ from: 30, to: 32 });
    groups.forEach((g, i) => expect(g.from).toBe(i === 0 ? 0 : groups[i - 1]!.to));
    for (const g of groups) expect((g.to - g.from) * layerFlops(LLAMA_8B, 64, 64)).toBeLessThanOrEqual(SUBMIT_FLOPS);
  });

  it('counts attention over the keys so far: deep in a context, fewer layers a submission', () => {
    // At position 32000, attention adds 4 × 32064 × 4096 FLOP per token and layer (more than the weights' 2 × 218M).
    expect(prefillLayerGroups(LLAMA_8B, 32000, 64).length).toBeGreaterThan(prefillLayerGroups(LLAMA_8B, 0, 64).length);
  });

  it('a small model: one submission; a layer over the budget alone: one layer each', () => {
    const small: LayerWork = { nLayer: 16, layerWeights: 2048 * 2048 * 5, attentionWidth: 2048 };
    expect(prefillLayerGroups(small, 0, 64)).toEqual([{ from: 0, to: 16 }]);
    expect(prefillLayerGroups(LLAMA_8B, 0, 64, 1e9)).toHaveLength(32);
  });
});

describe('a prefill in several submissions', () => {
  const engine = Engine.open();
  afterAll(async () => (await engine).destroy());

  it("submits each layer group apart and gives llama.cpp's greedy tokens", async () => {
    const e = await engine;
    // stories260K: 5 layers of about 45K weights; 20 tokens ≈ 1.9e6 FLOP a layer, so 2 layers fit 4e6.
    await e.load(STORIES_260K, { ctx: 64, maxBatch: 20, submitFlops: 4e6 });
    const prompt = [...STORIES_PROMPT, ...STORIES_GREEDY.slice(0, 15)];
    const submit = vi.spyOn(e.gpu.device.queue, 'submit');
    try {
      const out = await e.generate(prompt, { maxTokens: 3, stop: [] });
      expect(out.ids).toEqual(STORIES_GREEDY.slice(15, 18));
      // The 20-token prefill: layers [0, 2), [2, 4), [4, 5) with the head: 3 submissions; then 2 decode steps, one each.
      expect(submit.mock.calls.length).toBe(3 + 2);
    } finally {
      submit.mockRestore();
    }
  });
});
