import { describe, expect, it } from 'vitest';
import { describeImatrix } from '../../src-renderer/lib/export-imatrix.svelte';
import { parseLayerRange, predictedQualityText, recipeFromChoices, rolePattern } from '../../src-renderer/lib/export-recipe';

describe('export recipe editor', () => {
  it('turns role choices into tensor-type patterns, over every layer or a range', () => {
    expect(recipeFromChoices({}, null)).toBeUndefined();
    expect(recipeFromChoices({ attn_v: 'Q8_0', output: 'Q6_K' }, { first: 1, last: 3 })).toEqual({
      tensorTypes: [
        { pattern: '^blk\\.(?:1|2|3)\\.attn_v(?:_exps|_shexp)?\\.weight$', type: 'Q8_0' },
        { pattern: '^output\\.weight$', type: 'Q6_K' },
      ],
    });
    const all = new RegExp(rolePattern('ffn_down', null));
    expect(['blk.0.ffn_down.weight', 'blk.11.ffn_down_exps.weight'].every((n) => all.test(n))).toBe(true);
    expect(all.test('blk.0.ffn_down_norm.weight')).toBe(false);
    const some = new RegExp(rolePattern('attn_q', { first: 2, last: 2 }));
    expect(some.test('blk.2.attn_q.weight')).toBe(true);
    expect(some.test('blk.12.attn_q.weight')).toBe(false);
  });

  it('reads a layer range, with errors for ranges that are not', () => {
    expect(parseLayerRange('', '', 5)).toBeNull();
    expect(parseLayerRange('1', '', 5)).toEqual({ first: 1, last: 4 });
    expect(parseLayerRange('3', '1', 5)).toBe('Layers: give a first and a last layer, first ≤ last.');
    expect(parseLayerRange('0', '5', 5)).toBe('Layers: this model has layers 0 to 4.');
  });
});

describe('recipe prediction and importance matrix lines', () => {
  it('says the predicted quality, or what it waits for', () => {
    const p = { elements: 100, sampledElements: 50, rmse: 0.01, relativeError: 0.03242, snrDb: 29.78 };
    expect(predictedQualityText(p)).toBe('predicted error 3.242% · SNR 29.8 dB');
    expect(predictedQualityText({ ...p, snrDb: null })).toBe('predicted error 3.242%');
    expect(predictedQualityText(null)).toBe('predicted quality: once each type’s quality has been measured');
  });

  it('says what an importance matrix was computed from', () => {
    const view = { modelId: 1, path: '/d/m.imatrix.gguf', label: 'built-in text v1', entries: 35, chunks: 2, chunkSize: 283, cached: false };
    expect(describeImatrix(view)).toBe('built-in text v1: 35 matrices from 2 chunks of 283 tokens');
    expect(describeImatrix({ ...view, cached: true })).toBe('built-in text v1: 35 matrices from 2 chunks of 283 tokens (computed before, reused)');
    expect(describeImatrix({ ...view, label: '/m.dat', chunks: null, chunkSize: null })).toBe('/m.dat: 35 matrices');
  });
});
