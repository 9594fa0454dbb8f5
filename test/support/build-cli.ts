/**
 * Vitest global setup: builds the CLI (out/cli, scripts/build-cli.mjs, about a second) once
 * before any test file runs, so every test that spawns `gufo` runs what `npm install` builds —
 * fresh from this tree's sources, and without paying tsx's start-up in each of ~100 spawns.
 * Tests that exercise the sources through tsx pass GUFO_DEV=1 themselves.
 */
import { spawnSync } from 'node:child_process';
import { REPO_ROOT } from './paths';

export default function buildCli(): void {
  const r = spawnSync(process.execPath, ['scripts/build-cli.mjs'], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`scripts/build-cli.mjs failed:\n${r.stderr}`);
}
