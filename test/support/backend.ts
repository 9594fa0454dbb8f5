import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { onTestFinished } from 'vitest';
import type { GufoEvent } from '../../src-preload/api';
import { createBackend, type Backend, type BackendOptions } from '../../src-main/backend/index';
import { tempDir } from './temp';

export interface TestBackend extends Backend {
  /** Every event emitted since the back end was made. */
  seen: GufoEvent[];
}

/**
 * A real back end (SQLite file, engine processes) over a fresh data dir, closed when the test
 * finishes. `modelDirs` become GUFO_MODELS_DIRS.
 */
export function testBackend(options: Partial<BackendOptions> & { modelDirs?: string[] } = {}): TestBackend {
  const dataDir = options.dataDir ?? join(tempDir(), 'home');
  mkdirSync(dataDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, GUFO_MODELS_DIRS: (options.modelDirs ?? []).join(process.platform === 'win32' ? ';' : ':') };
  delete env.GUFO_HOME;
  const backend = createBackend({ mode: 'browser', ...options, dataDir, env });
  const events: GufoEvent[] = [];
  backend.events.subscribe((event) => events.push(event));
  onTestFinished(() => backend.close());
  return Object.assign(backend, { seen: events });
}
