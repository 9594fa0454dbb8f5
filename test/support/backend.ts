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

/** Variables that point Gufo at this machine's other apps (their model stores, Ollama, Hugging Face). */
const MACHINE_VARIABLES = [
  'GUFO_HOME',
  'OLLAMA_MODELS',
  'OLLAMA_HOST',
  'HF_HOME',
  'HF_HUB_CACHE',
  'HF_ENDPOINT',
  'XDG_CACHE_HOME',
  'XDG_DATA_HOME',
  'APPDATA',
  'LOCALAPPDATA',
];

/**
 * An environment in which `home` is the user's home and nothing points at the machine's own
 * model stores (blank values count as unset), for back ends and `gufo` processes in tests.
 */
export function isolatedEnv(home: string): NodeJS.ProcessEnv {
  return {
    ...Object.fromEntries(MACHINE_VARIABLES.map((name) => [name, ''])),
    HOME: home,
    USERPROFILE: home,
    // Ollama's Linux service keeps models outside the home: point Ollama at the home too.
    OLLAMA_MODELS: join(home, '.ollama', 'models'),
  };
}

/**
 * A real back end (SQLite file, engine processes) over a fresh data dir, closed when the test
 * finishes. `modelDirs` become GUFO_MODELS_DIRS. The home folder is a fresh empty one (so the
 * machine's own Ollama or Hugging Face models stay out), unless `env` says otherwise.
 */
export function testBackend(options: Partial<BackendOptions> & { modelDirs?: string[] } = {}): TestBackend {
  const dataDir = options.dataDir ?? join(tempDir(), 'home');
  mkdirSync(dataDir, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, ...isolatedEnv(tempDir()) };
  Object.assign(env, options.env, {
    GUFO_MODELS_DIRS: (options.modelDirs ?? []).join(process.platform === 'win32' ? ';' : ':'),
  });
  const backend = createBackend({ mode: 'browser', ...options, dataDir, env });
  const events: GufoEvent[] = [];
  backend.events.subscribe((event) => events.push(event));
  onTestFinished(() => backend.close());
  return Object.assign(backend, { seen: events });
}
