/**
 * The order vitest starts test files in. Without timings of an earlier run (a fresh clone, as in
 * CI) vitest starts the largest files first, so a short file that runs for minutes (lavapipe's
 * cold pipeline compiles, long llama.cpp comparisons) can start last and leave the other worker
 * idle while it finishes. SLOW_FIRST starts those first; the rest keep vitest's order. The order
 * only changes how long the run takes, never what it tests.
 */
import { relative } from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { REPO_ROOT } from './paths';

/**
 * The longest small files in a vitest run from an empty shader cache, slowest first (2026-12-07,
 * 2 cores: 88 s down to 27 s; test/sequencer.test.ts checks they exist). lavapipe.test.ts also
 * leaves stories260K's lavapipe pipelines in Mesa's shader cache before
 * test/cli/gpu-adapter.test.ts runs the same model on lavapipe.
 */
export const SLOW_FIRST: readonly string[] = [
  'test/engine/exactness.test.ts',
  'test/backend/openai-responses.test.ts',
  'test/node/quantize-low-bit.test.ts',
  'test/engine/gpu/gpu-shapes-lavapipe.test.ts',
  'test/scripts/device-kit.test.ts',
  'test/cli/imatrix-quality.test.ts',
  'test/engine/kv-cache-types.test.ts',
  'test/engine/long-context.test.ts',
  'test/engine/lavapipe.test.ts',
];

export default class SlowFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const i = SLOW_FIRST.indexOf(relative(REPO_ROOT, file.moduleId));
      return i < 0 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: files outside the list keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
