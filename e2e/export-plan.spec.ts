/**
 * Size and quality before exporting (issue 18 item 1; browser mode, stories260K): the Export
 * screen predicts every type's quality in the background, shows it on each card and as a
 * size–quality chart beside the cards. Screenshots go to the test's output folder.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { STORIES_260K } from '../test/support/paths';
import { startGufoServe, type GufoServe } from './support/gufo-serve';
import { collectProblems } from './support/watch-page';

test.describe.configure({ mode: 'serial', timeout: 180_000 });

let scratch: string;
let gufo: GufoServe;
let context: BrowserContext;
let page: Page;
let problems: string[];

test.beforeAll(async ({ browser }) => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-plan-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  gufo = await startGufoServe({ GUFO_HOME: join(scratch, 'home'), GUFO_MODELS_DIRS: models });
  context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  page = await context.newPage();
  problems = collectProblems(page);
  await page.goto(gufo.url.href);
});

test.afterAll(async () => {
  await context?.close();
  await gufo?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

test('Export shows each type predicted quality on its card and in a size–quality chart', async ({}, testInfo) => {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Export' }).click();
  const select = page.getByRole('combobox', { name: 'Source model' });
  const stories = async () => (await select.locator('option').allTextContents()).find((text) => text.trim().startsWith('stories260K'));
  await expect.poll(stories).toBeDefined(); // the models have loaded
  await select.selectOption({ label: (await stories())! });
  const chart = page.getByTestId('size-quality-chart');
  await expect(chart).toBeVisible({ timeout: 60_000 });
  await expect(chart.getByText('Size and predicted quality per type')).toBeVisible();
  await expect(chart.locator('circle')).toHaveCount(18);
  // The same figures as `gufo quantize --plan` (stories260K's Q8_0: 0.496%, SNR 46.1 dB).
  const q8 = page.locator('#export-type-Q8_0-facts');
  await expect(q8).toContainText('predicted error 0.496% · SNR 46.1 dB');
  await expect(page.locator('#export-type-Q4_K_M-facts')).toContainText(/predicted error 3\.2\d\d%/);
  await page.screenshot({ path: testInfo.outputPath('export-plan-light.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: testInfo.outputPath('export-plan-dark.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'light' });
  expect(problems, 'console errors, warnings and page errors').toEqual([]);
});
