// Greedy decode after a 2,100-token prompt against llama.cpp, on Mesa lavapipe (long-context-cases.ts).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LAVAPIPE_ICD, LAVAPIPE_INSTALL } from '../../src-main/engine/gpu/software-driver';
import { expectLongContextGreedy, LONG_CONTEXT_SHAPES, PROMPT } from './long-context-cases';

// Each test file runs in its own process (pool: 'forks'): this one's Vulkan loader sees only lavapipe.
process.env.VK_ICD_FILENAMES = LAVAPIPE_ICD;
const { Engine } = await import('../../src-main/engine/engine');

const engine = await Engine.open();
const dir = mkdtempSync(join(tmpdir(), 'gufo-long-context-lavapipe-'));
afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe(`lavapipe: greedy decode after ${PROMPT} tokens equals llama.cpp's`, () => {
  it('runs on lavapipe', () => {
    expect(existsSync(LAVAPIPE_ICD), `${LAVAPIPE_ICD} is missing: ${LAVAPIPE_INSTALL}`).toBe(true);
    expect(engine.gpu.info.name).toMatch(/llvmpipe/);
  });
  for (const [name, shape] of Object.entries(LONG_CONTEXT_SHAPES)) {
    it(name, () => expectLongContextGreedy(engine, dir, name, shape), 300_000);
  }
});
