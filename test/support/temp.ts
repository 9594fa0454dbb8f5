import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';

/** A fresh temporary folder, removed when the calling test finishes. */
export function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'gufo-test-'));
  onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
