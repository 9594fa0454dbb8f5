import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { _electron as electron, expect, test, type ElectronApplication, type Page } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../src-main/engine/gpu/software-driver';
import { ELECTRON_MISSING, electronBinaryPath } from '../scripts/electron-binary.mjs';
import { STORIES_260K } from '../test/support/paths';
import { appFlowTests } from './support/flow';
import { ROOT } from './support/gufo-serve';
import { collectProblems } from './support/watch-page';

const binary = electronBinaryPath();

// On machines where Electron cannot be downloaded, browser mode (app-flow.spec.ts) runs the same flow.
if (!binary) console.log(`electron.spec.ts skipped: ${ELECTRON_MISSING}.`);
test.skip(!binary, ELECTRON_MISSING);
test.describe.configure({ mode: 'serial', timeout: 240_000 });

let scratch: string;
let app: ElectronApplication;
let window: Page;
let offsite: string[];
let problems: string[];

test.beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-electron-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  app = await electron.launch({
    executablePath: binary!,
    // Chromium refuses to run as root with its OS sandbox (CI containers). Needs `npm run build`.
    args: [ROOT, ...(process.getuid?.() === 0 ? ['--no-sandbox'] : [])],
    cwd: ROOT,
    // A data folder of its own, not the user's.
    env: {
      ...process.env,
      GUFO_HOME: join(scratch, 'home'),
      GUFO_MODELS_DIRS: models,
      VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? SWIFTSHADER_ICD,
    },
  });
  window = await app.firstWindow();
  // The page is file:// — any request with a host has left the machine, unless it is loopback.
  offsite = [];
  window.on('request', (request) => {
    const url = new URL(request.url());
    if (url.host !== '' && url.hostname !== '127.0.0.1') offsite.push(request.url());
  });
  problems = collectProblems(window);
});

test.afterAll(async () => {
  await app?.close();
  rmSync(scratch, { recursive: true, force: true });
});

test.afterEach(() => {
  expect(offsite, 'requests that left 127.0.0.1 (Gufo is offline)').toEqual([]);
  expect(problems, 'console errors, warnings and page errors').toEqual([]);
});

test('the window shows the app in electron mode, with no Node in the page', async () => {
  await expect(window.getByRole('heading', { level: 1, name: 'Gufo' })).toBeVisible();
  await window.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
  await expect(window.locator('dt:text-is("Mode") + dd')).toHaveText('electron');
  expect(await window.evaluate(() => typeof (window as { require?: unknown }).require)).toBe('undefined');
});

appFlowTests('the flow in the Electron window', () => window);
