// Greedy decode after a 2,100-token prompt against llama.cpp, on SwiftShader (long-context-cases.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, it } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { expectLongContextGreedy, LONG_CONTEXT_SHAPES, PROMPT } from './long-context-cases';

const engine = await Engine.open();
const dir = mkdtempSync(join(tmpdir(), 'gufo-long-context-'));
afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

describe(`greedy decode after ${PROMPT} tokens equals llama.cpp's`, () => {
  for (const [name, shape] of Object.entries(LONG_CONTEXT_SHAPES)) {
    it(name, () => expectLongContextGreedy(engine, dir, name, shape), 300_000);
  }
});
