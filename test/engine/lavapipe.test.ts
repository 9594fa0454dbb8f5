/**
 * The engine on Mesa lavapipe, the software adapter with shader-f16 (SwiftShader, which the other
 * GPU tests use, has none): stories260K's greedy continuation is llama.cpp's, token for token.
 * lavapipe compiles pipelines lazily, so the first token pays for every kernel's compilation:
 * the prompt and continuation are kept short.
 */
import { existsSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import type { Engine as EngineType } from '../../src-main/engine/engine';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../src-main/engine/gpu/software-driver';
import { llamaPromptIds } from '../support/llama';
import { STORIES_260K } from '../support/paths';
import { llamaGreedy } from './llama-reference';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { Engine } = await import('../../src-main/engine/engine');

let engine: EngineType | undefined;
afterAll(() => engine?.destroy());

describe('Mesa lavapipe', () => {
  it('is installed', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
  });

  it('runs stories260K greedily exactly as llama.cpp, with shader-f16', async () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    engine = await Engine.open();
    const adapter = engine.gpu.info;
    expect(adapter.name).toMatch(/llvmpipe/);
    expect(engine.gpu.hasF16).toBe(true);

    const prompt = await llamaPromptIds(STORIES_260K, 'Once upon a time');
    const ref = await llamaGreedy(STORIES_260K, prompt, 24);

    await engine.load(STORIES_260K, { ctx: 64 });
    const ours = await engine.generate(prompt, { maxTokens: 24, stop: [] });
    console.log(
      `lavapipe (${adapter.name}): stories260K greedy, ttft ${ours.timings.ttftMs.toFixed(0)} ms, decode ${ours.timings.decodeTokS.toFixed(1)} tok/s`,
    );
    expect(ours.ids).toEqual(ref.ids);
  }, 240_000);
});
