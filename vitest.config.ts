import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SWIFTSHADER_ICD } from './src-main/engine/gpu/software-driver';
import SlowFirstSequencer from './test/support/sequencer';
import { sharedProcessFiles } from './test/support/shared-process';

/**
 * GPU tests run on SwiftShader (Debian's chromium ships it) so they behave the same on every
 * machine, with or without a GPU; GUFO_TEST_GPU=native uses the machine's own driver instead.
 */
const gpuEnv: Record<string, string> =
  process.env.GUFO_TEST_GPU !== 'native' && existsSync(SWIFTSHADER_ICD) ? { VK_ICD_FILENAMES: SWIFTSHADER_ICD } : {};

/**
 * Files that share their worker processes and loaded modules (isolate: false): test/core's and
 * test/renderer's, but those that run llama.cpp (test/support/shared-process.ts), where a process
 * and fresh imports per file cost more than the tests (`npx vitest run test/core test/renderer`
 * on 2 cores: 208 → 131 s). A file that needs fresh module state imports after
 * vi.resetModules() (iq-grids-lazy.test.ts).
 */
const SHARED_PROCESS = sharedProcessFiles();

export default defineConfig({
  test: {
    projects: [
      { extends: true, test: { name: 'shared', include: SHARED_PROCESS, isolate: false } },
      { extends: true, test: { name: 'isolated', include: ['test/**/*.test.ts'], exclude: SHARED_PROCESS } },
    ],
    environment: 'node',
    // The CLI the tests spawn is built once from this tree first (see test/support/build-cli.ts);
    // XDG_CONFIG_HOME is a scratch folder for the whole run (test/support/scratch-config.ts).
    globalSetup: ['test/support/build-cli.ts', 'test/support/scratch-config.ts'],
    env: { ...gpuEnv, XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? '/tmp' },
    // Some tests run llama.cpp (node-llama-cpp) as the reference implementation.
    testTimeout: 60_000,
    // The few files that run longest start first (test/support/sequencer.ts).
    sequence: { sequencer: SlowFirstSequencer },
    // Separate processes: native addons (koffi, llama.cpp) do not mix well with worker threads.
    pool: 'forks',
    // Two files at once at least: vitest's default (CPUs − 1) runs one at a time on a 2-core CI
    // machine, where two measured about 8% faster on GPU-heavy files (SwiftShader already spreads
    // over both cores) and about 24% faster on test/core + test/backend (issue #31 item 2).
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
