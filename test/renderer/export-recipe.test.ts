import { describe, expect, it } from 'vitest';
import { parseLayerRange, recipeFromChoices, rolePattern } from '../../src-renderer/lib/export-recipe';

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
