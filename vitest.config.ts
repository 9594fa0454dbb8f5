import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    // Some tests run llama.cpp (node-llama-cpp) as the reference implementation.
    testTimeout: 60_000,
    // Separate processes: native addons (koffi, llama.cpp) do not mix well with worker threads.
    pool: 'forks',
  },
});
