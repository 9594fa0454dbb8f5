/**
 * The device's pipeline cache (pipeline-cache.ts): loading a model again compiles nothing, and the
 * reused pipelines (compiled against the first load's layouts) give the first load's tokens.
 */
import { afterAll, expect, it } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { pipelineCache } from '../../src-main/engine/gpu/pipeline-cache';
import { STORIES_260K } from '../support/paths';

const engine = await Engine.open();
afterAll(() => engine.destroy());

const PROMPT = [1, 403, 407, 261, 1078]; // BOS "Once upon a time"

it('a second load of a model reuses every pipeline the first compiled, with the same greedy tokens', async () => {
  const cache = pipelineCache(engine.gpu.device);
  await engine.load(STORIES_260K, { ctx: 64 });
  const first = await engine.generate(PROMPT, { maxTokens: 8, stop: [] });
  const compiled = cache.compiled;
  expect(compiled).toBeGreaterThan(0);

  await engine.load(STORIES_260K, { ctx: 64 });
  const again = await engine.generate(PROMPT, { maxTokens: 8, stop: [] });
  expect(cache.compiled).toBe(compiled);
  expect(again.ids).toEqual(first.ids);
}, 120_000);

// Issue #30 item 2(b): load compiles every pipeline the first prefill and decode use, so the
// first generate compiles none (measured here for stories260K on the test adapter only).
it('the first generate after a first load compiles no pipeline', async () => {
  const fresh = await Engine.open();
  try {
    const cache = pipelineCache(fresh.gpu.device);
    const before = cache.compiled;
    await fresh.load(STORIES_260K, { ctx: 64 });
    const atLoad = cache.compiled;
    expect(atLoad).toBeGreaterThan(before);
    await fresh.generate(PROMPT, { maxTokens: 2, stop: [] });
    expect(cache.compiled).toBe(atLoad);
  } finally {
    fresh.destroy();
  }
}, 120_000);
