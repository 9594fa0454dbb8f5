import { describe, expect, it } from 'vitest';
import type { GpuAdapter } from '../../src-preload/api';
import {
  budgetBits,
  budgetCaption,
  budgetFit,
  budgetLabel,
  budgetPlacement,
  memoryBudget,
  overBudget,
} from '../../src-renderer/lib/export-budget';

const GIB = 2 ** 30;
const MIB = 2 ** 20;

const adapter = (software: boolean, memoryBytes: number | null): GpuAdapter => ({
  name: software ? 'llvmpipe (LLVM 19)' : 'NVIDIA GeForce RTX 4090',
  vendor: 'mesa',
  backend: 'vulkan',
  software,
  shaderF16: true,
  subgroups: null,
  memoryBytes,
});

/** A type's card as far as the budget goes: its file's size. */
const option = (predictedBytes: number | null) => ({ predictedBytes });

describe('the GPU memory budget', () => {
  it('is the setting first, in GiB, whatever the adapter says', () => {
    expect(memoryBudget(7.5, { status: 'ready', adapter: adapter(true, 64 * GIB) })).toEqual({
      bytes: 7.5 * GIB,
      source: 'Settings',
    });
  });

  it("is a software adapter's RAM when the setting is automatic", () => {
    expect(memoryBudget(null, { status: 'ready', adapter: adapter(true, 64 * GIB) })).toEqual({
      bytes: 64 * GIB,
      source: 'RAM of the software GPU llvmpipe (LLVM 19)',
    });
  });

  it('is none for a real GPU (WebGPU reports no size), without an adapter, or before it is known', () => {
    expect(memoryBudget(null, { status: 'ready', adapter: adapter(false, null) })).toBeNull();
    expect(memoryBudget(null, { status: 'none', reason: 'no WebGPU adapter found' })).toBeNull();
    expect(memoryBudget(null, null)).toBeNull();
  });
});

describe('types against the budget', () => {
  it('leaves the budget less the KV cache for the file, and marks the types whose file needs more', () => {
    const fit = budgetFit({ bytes: 10 * MIB, source: 'Settings' }, { bytes: 4 * MIB, context: 2048 });
    expect(fit.fileBytes).toBe(6 * MIB);
    expect(overBudget(option(6 * MIB + 1), fit)).toBe(true);
    expect(overBudget(option(6 * MIB), fit)).toBe(false);
    expect(overBudget(option(null), fit)).toBe(false); // a type the recipe cannot plan
    expect(overBudget(option(100 * GIB), null)).toBe(false); // no budget
  });

  it('says where the figure comes from, and whether the KV cache is counted', () => {
    const budget = { bytes: 8 * GIB, source: 'Settings' };
    expect(budgetLabel(budgetFit(budget, { bytes: 512 * MIB, context: 32768 }))).toBe(
      'GPU memory budget 8.00 GiB (Settings), less the KV cache at 32,768 tokens (512 MiB): 7.50 GiB for the file',
    );
    expect(budgetLabel(budgetFit(budget, null))).toBe(
      'GPU memory budget 8.00 GiB (Settings): file size only (no KV cache estimate for this model)',
    );
  });
});

describe('the budget on the bits-per-weight axis', () => {
  // 1M weights: tensor bytes = bits × 2^20 / 8, plus 10 000 bytes of metadata in every file.
  const file = (bits: number) => ({ bits, bytes: (bits * MIB) / 8 + 10_000 });

  it('is where a file would just fill it, on the line through the types with the fewest and most bits', () => {
    const points = [file(8.5), file(4.5), file(16), file(6.5625)];
    expect(budgetBits(points, (6 * MIB) / 8 + 10_000)).toBeCloseTo(6, 9);
    expect(budgetBits(points, (20 * MIB) / 8 + 10_000)).toBeCloseTo(20, 9);
  });

  it('is unknown without two types of different sizes', () => {
    expect(budgetBits([file(8.5)], MIB)).toBeNull();
    expect(budgetBits([file(8.5), file(8.5)], MIB)).toBeNull();
  });

  it('is on the axis, past its end, before 0 (the KV cache alone fills it), or unknown', () => {
    expect(budgetPlacement(6, 20)).toBe('inside');
    expect(budgetPlacement(0, 20)).toBe('inside');
    expect(budgetPlacement(21, 20)).toBe('above');
    expect(budgetPlacement(-3, 20)).toBe('below');
    expect(budgetPlacement(null, 20)).toBe('unknown');
  });

  it('says under the chart when the budget is off the axis, every type fitting or none', () => {
    const fit = budgetFit({ bytes: 8 * GIB, source: 'Settings' }, null);
    expect(budgetCaption(fit, 'inside')).toBe(budgetLabel(fit));
    expect(budgetCaption(fit, 'above')).toBe(`${budgetLabel(fit)}; every type fits`);
    expect(budgetCaption(fit, 'below')).toBe(`${budgetLabel(fit)}; no type fits`);
  });
});
