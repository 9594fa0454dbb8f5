/**
 * Decode deep into the context against llama.cpp (node-llama-cpp on the CPU, no flash attention,
 * its default F16 KV cache): after a prompt of 2,100 tokens, greedy decode — every step's
 * attention split across workgroups over all those keys — gives llama.cpp's tokens, parting only
 * at a near-tie of the reference (top-2 log-probability gap < 0.1), on random F32 models with
 * grouped-query heads, a sliding window (gemma2) and attention sinks (gpt-oss). long-context.test.ts
 * runs them on SwiftShader; on lavapipe, by hand (its cold pipeline compilation takes ~7 minutes on
 * a 2-core machine, too long for CI; 8 s with Mesa's shader cache warm):
 *   VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json npx vitest run test/engine/long-context.test.ts
 */
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Engine } from '../../src-main/engine/engine';
import { mulberry32 } from '../support/random';
import { TEST_VOCAB, writeRandomModel, type ModelShape } from '../support/test-models';
import { llamaGreedy } from './llama-reference';

export const PROMPT = 2100;
const GENERATED = 12;
const CTX = PROMPT + GENERATED + 8;

export const LONG_CONTEXT_SHAPES: Record<string, ModelShape> = {
  // 4 query heads per KV head. Small: the prefill before it attends a workgroup per (head, token).
  'llama, GQA': {
    arch: 'llama',
    nLayer: 1,
    nEmbd: 128,
    nFf: 256,
    nHead: 4,
    nHeadKv: 1,
    scale: 0.06,
    randomNorms: true,
    seed: 41,
    contextLength: 4096,
  },
  // Every other layer windowed to 512 positions, soft-capped scores.
  'gemma2, sliding window': {
    arch: 'gemma2',
    nLayer: 2,
    nEmbd: 128,
    nFf: 256,
    nHead: 4,
    nHeadKv: 2,
    scale: 0.06,
    randomNorms: true,
    seed: 42,
    contextLength: 4096,
    slidingWindow: 512,
    attnSoftcap: 1.5,
    finalSoftcap: 4,
  },
  // Sinks in every layer, layer 0 windowed to 128 positions.
  'gpt-oss, sinks': {
    arch: 'gpt-oss',
    nLayer: 2,
    nEmbd: 128,
    nFf: 128,
    nFfExp: 128,
    nHead: 4,
    nHeadKv: 2,
    headDim: 32,
    nExpert: 4,
    nExpertUsed: 2,
    slidingWindow: 128,
    scale: 0.06,
    randomNorms: true,
    randomBiases: true,
    seed: 43,
    contextLength: 4096,
  },
};

/** Writes `shape` into `dir` and checks the engine's greedy decode after PROMPT tokens against llama.cpp's. */
export async function expectLongContextGreedy(
  engine: Engine,
  dir: string,
  name: string,
  shape: ModelShape,
): Promise<void> {
  const path = join(dir, `${name.replace(/\W+/g, '-')}.gguf`);
  await writeRandomModel(path, shape);
  const rng = mulberry32(shape.seed!);
  const prompt = [1, ...Array.from({ length: PROMPT - 1 }, () => 3 + rng.int(TEST_VOCAB - 3))];
  const ref = await llamaGreedy(path, prompt, GENERATED, CTX);
  await engine.load(path, { ctx: CTX });
  const ours = await engine.generate(prompt, { maxTokens: GENERATED, stop: [] });
  const parted = ours.ids.findIndex((id, i) => id !== ref.ids[i]);
  console.log(
    `${engine.gpu.info.name}, ${name}: ${parted === -1 ? `equal for ${GENERATED} tokens` : `parts at ${parted} (reference gap ${ref.gaps[parted]!.toFixed(3)})`}, prefill ${ours.timings.prefillTokS.toFixed(0)} tok/s`,
  );
  expect(ours.ids.length).toBe(GENERATED);
  if (parted !== -1) expect(ref.gaps[parted]!).toBeLessThan(0.1);
}
