import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from './support/paths';
import { SHARED_PROCESS_FOLDERS, sharedProcessFiles, testFilesIn } from './support/shared-process';

/** What would leak from one file into the next in a shared process. */
const LEAKS: readonly [RegExp, string][] = [
  [/\bvi\.(mock|doMock|stubEnv|stubGlobal|useFakeTimers)\(/, 'mocks or stubs'],
  [/\bprocess\.env(\.\w+|\[[^\]]+\])\s*=(?!=)|\bdelete process\.env\b/, 'changes process.env'],
  [/\bglobalThis\.\w+\s*=(?!=)/, 'sets a global'],
];

it('files that share a process (vitest.config.ts, project shared) leave nothing behind for the next file', () => {
  const files = sharedProcessFiles();
  expect(files.length).toBeGreaterThan(50);
  const found: string[] = [];
  for (const file of files) {
    const text = readFileSync(join(REPO_ROOT, file), 'utf8');
    for (const [pattern, what] of LEAKS) if (pattern.test(text)) found.push(`${file} ${what}`);
  }
  expect(found).toEqual([]);
});

it('files of those folders that run llama.cpp, directly or through test modules, keep a process of their own', () => {
  const shared = new Set(sharedProcessFiles());
  const own = SHARED_PROCESS_FOLDERS.flatMap(testFilesIn).filter((file) => !shared.has(file));
  // model-summary imports test/support/llama.ts; bpe.test.ts reaches it through tokenizer-parity.ts.
  expect(own).toEqual(expect.arrayContaining(['test/core/model-summary.test.ts', 'test/core/tokenizer/bpe.test.ts']));
  expect(shared).toContain('test/core/quants/iq-grids-lazy.test.ts');
});
