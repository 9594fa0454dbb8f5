/** What a new user sees first: models named by their files, files Gufo cannot run marked, and where /v1 is served. */
import type { ChildProcess } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { STORIES_260K } from '../test/support/paths';
import { startGufoServe } from './support/gufo-serve';

let gufo: { process: ChildProcess; url: URL; stop(): Promise<number | null> };
let scratch: string;

test.beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-identity-'));
  const home = join(scratch, 'home');
  const models = join(scratch, 'models');
  mkdirSync(home);
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  copyFileSync(join(STORIES_260K, '..', 'vocab', 'ggml-vocab-baichuan.gguf'), join(models, 'ggml-vocab-baichuan.gguf'));
  writeFileSync(join(models, 'broken.gguf'), 'XXXX not a model');
  gufo = await startGufoServe({
    GUFO_HOME: join(scratch, 'data'),
    GUFO_MODELS_DIRS: models,
    HOME: home,
    OLLAMA_MODELS: join(home, 'no-ollama'),
    HF_HOME: join(home, 'no-hf'),
  });
});

test.afterAll(async () => {
  await gufo.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test('names models by file, marks a vocabulary-only file, and offers only runnable models', async ({
  page,
}, testInfo) => {
  await page.goto(gufo.url.href);
  const rows = page.getByRole('table').getByRole('row');
  const stories = rows.filter({ hasText: 'stories260K.gguf' });
  await expect(stories.getByRole('button', { name: 'stories260K', exact: true })).toBeVisible();
  await expect(stories).toContainText('llama');
  await expect(stories).toContainText('F32 (guessed)');
  await expect(stories).toContainText('MiB');
  const vocab = rows.filter({ hasText: 'ggml-vocab-baichuan.gguf' });
  await expect(vocab).toContainText("can't run");
  // A file that is no GGUF: listed with its reason, marked as the vocabulary file is, and no model.
  const broken = rows.filter({ hasText: 'broken.gguf' });
  await expect(broken).toContainText("can't run");
  await expect(broken).toContainText('magic: not a GGUF file');
  await expect(broken.locator('.problem')).not.toContainText('broken.gguf');
  await expect(page.getByText(/^2 models and 1 unreadable file, /)).toBeVisible();
  await expect(vocab).toContainText('vocabulary only');
  await page.screenshot({ path: testInfo.outputPath('library-identity.png'), fullPage: true });

  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Benchmarks' }).click();
  const picker = page.getByRole('combobox').first();
  await expect(picker).toContainText('stories260K');
  await expect(picker).not.toContainText('ggml-vocab');
});

test('Settings says gufo serve serves the API on its port while the listener is off', async ({ page }, testInfo) => {
  await page.goto(gufo.url.href);
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
  const state = page.getByRole('status').filter({ hasText: '/v1' });
  await expect(state).toContainText(
    `Serving OpenAI's API at ${gufo.url.origin}/v1, Ollama's at ${gufo.url.origin} (gufo serve, on this page's port)`,
  );
  await expect(state).toContainText('the listener of their own is off');
  await expect(
    page.getByRole('checkbox', { name: /Also serve the APIs on a listener of their own/ }),
  ).not.toBeChecked();
  await expect(page.getByRole('status').filter({ hasText: /^Off\.$/ })).toHaveCount(0);
  await page.screenshot({ path: testInfo.outputPath('settings-server.png'), fullPage: true });
});
