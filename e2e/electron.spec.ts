import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { _electron as electron, expect, test } from '@playwright/test';
import { ELECTRON_MISSING, electronBinaryPath } from '../scripts/electron-binary.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const binary = electronBinaryPath();

// On machines where Electron cannot be downloaded, browser mode (app-shell.spec.ts) covers the UI.
if (!binary) console.log(`electron.spec.ts skipped: ${ELECTRON_MISSING}.`);
test.skip(!binary, ELECTRON_MISSING);

test('opens the window with the real app info, in electron mode (needs `npm run build`)', async () => {
  const home = mkdtempSync(join(tmpdir(), 'gufo-electron-'));
  const app = await electron.launch({
    executablePath: binary!,
    // Chromium refuses to run as root with its OS sandbox (CI containers).
    args: [root, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
    cwd: root,
    // A data folder of its own, not the user's.
    env: { ...process.env, GUFO_HOME: home },
  });
  try {
    const window = await app.firstWindow();
    await expect(window.getByRole('heading', { level: 1, name: 'Gufo' })).toBeVisible();
    await window.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
    await expect(window.locator('dt:text-is("Mode") + dd')).toHaveText('electron');
    // The page sees GufoApi and nothing of Node.
    expect(await window.evaluate(() => typeof (window as { require?: unknown }).require)).toBe('undefined');
  } finally {
    await app.close();
    rmSync(home, { recursive: true, force: true });
  }
});
