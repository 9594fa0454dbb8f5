/**
 * Vitest global setup: `gufo quantize` records its exports in the app's database, the OS
 * user-data folder's without GUFO_HOME. In tests that is a scratch folder, never the user's own
 * (~/.config/Gufo): made here, inherited by every test process, removed when the run ends.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export default function scratchConfigHome(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'gufo-test-config-'));
  process.env.XDG_CONFIG_HOME = dir;
  return () => rmSync(dir, { recursive: true, force: true });
}
