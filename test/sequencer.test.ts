import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { REPO_ROOT } from './support/paths';
import { SLOW_FIRST } from './support/sequencer';

it('every file the test sequencer starts first exists (a renamed file would silently lose its place)', () => {
  for (const file of SLOW_FIRST) expect(existsSync(join(REPO_ROOT, file)), file).toBe(true);
});
