import { describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import { comparableModels } from '../../src-renderer/lib/inspector-tensor-error.svelte';

const model = (id: number, architecture: string, parameters: number | null, notRunnable: string | null = null) =>
  ({ id, architecture, parameters, notRunnable }) as ModelEntry;

describe('tensor error: the models offered to compare with', () => {
  it('are the runnable ones of the same shape, not itself', () => {
    const self = model(1, 'llama', 260_000);
    const models = [
      self,
      model(2, 'llama', 260_000),
      model(3, 'llama', 1_100_000),
      model(4, 'qwen3', 260_000),
      model(5, 'llama', 260_000, 'vocabulary only'),
    ];
    expect(comparableModels(models, self).map((m) => m.id)).toEqual([2]);
    expect(comparableModels(models, undefined)).toEqual([]);
  });
});
