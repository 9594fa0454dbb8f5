/**
 * The test files that share worker processes and loaded modules (vitest.config.ts, project
 * `shared`, isolate: false): those of SHARED_PROCESS_FOLDERS, pure code where a process and fresh
 * imports per file cost more than the tests. What one of them changes, the next file sees: so none
 * mocks modules or changes the environment or globals (test/shared-process.test.ts), and files
 * that run llama.cpp keep a process of their own: node-llama-cpp's native library holds
 * process-wide state (its logger, log-level overrides left by an unfinished call).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { REPO_ROOT } from './paths';

export const SHARED_PROCESS_FOLDERS: readonly string[] = ['test/core', 'test/renderer'];

/** Whether `file` (a .ts file of the repository) imports node-llama-cpp, itself or through test modules. */
function runsLlamaCpp(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(join(REPO_ROOT, file), 'utf8');
  if (/from 'node-llama-cpp'/.test(text)) return true;
  // Only test code imports it (src-main never does: docs/architecture.md), so only imports within test/ are followed.
  return [...text.matchAll(/from '(\.[^']+)'/g)].some(([, spec]) => {
    const target = relative(REPO_ROOT, resolve(REPO_ROOT, dirname(file), spec!));
    return target.startsWith('test/') && runsLlamaCpp(target.endsWith('.ts') ? target : `${target}.ts`, seen);
  });
}

/** The test files of `folder` (relative to the repository, recursively). */
export function testFilesIn(folder: string): string[] {
  return readdirSync(join(REPO_ROOT, folder), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name.endsWith('.test.ts'))
    .map((e) => relative(REPO_ROOT, join(e.parentPath, e.name)));
}

/** The files that share processes: those of SHARED_PROCESS_FOLDERS that do not run llama.cpp. */
export function sharedProcessFiles(): string[] {
  return SHARED_PROCESS_FOLDERS.flatMap(testFilesIn).filter((file) => !runsLlamaCpp(file));
}
