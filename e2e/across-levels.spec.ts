/**
 * Quality across quantization levels (issue 18, item 4; browser mode, stories260K on SwiftShader):
 * exports to Q8_0 and Q4_K_M, each followed by its quality report, appear on the Export screen in
 * one table, smallest first, with their sizes and mean KL, and as points of one chart.
 * Screenshots go to the test's output folder.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../src-main/engine/gpu/software-driver';
import { formatBytes } from '../src-preload/api';
import { STORIES_260K } from '../test/support/paths';
import { startGufoServe, type GufoServe } from './support/gufo-serve';
import { collectProblems } from './support/watch-page';

/** Two exports, each with a quality report of two models over the built-in text, on a software GPU. */
test.describe.configure({ mode: 'serial', timeout: 900_000 });

let scratch: string;
let gufo: GufoServe;
let context: BrowserContext;
let page: Page;
let problems: string[];

test.beforeAll(async ({ browser }) => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-levels-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  gufo = await startGufoServe({
    GUFO_HOME: join(scratch, 'home'),
    GUFO_MODELS_DIRS: models,
    VK_ICD_FILENAMES: SWIFTSHADER_ICD,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir(),
  });
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

test.afterEach(() => {
  expect(problems, 'console errors, warnings and page errors').toEqual([]);
});

test('Q8_0 and Q4_K_M exports of stories260K side by side: size and mean KL, smallest first, in a table and a chart', async ({}, testInfo) => {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Export' }).click();
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  await expect.poll(async () => (await source.locator('option').allTextContents()).some((t) => t.includes('stories260K'))).toBe(true);
  await source.selectOption((await source.locator('option').filter({ hasText: 'stories260K' }).first().getAttribute('value'))!);

  const history = page.getByRole('table', { name: 'Past exports' });
  for (const type of ['Q8_0', 'Q4_K_M']) {
    await form.getByRole('radiogroup', { name: 'Target type' }).getByRole('radio', { name: type, exact: true }).check();
    await expect(form.getByRole('combobox', { name: 'Quality report after the export' })).toHaveValue('builtin');
    await form.getByRole('button', { name: 'Export' }).click();
    await expect(history.getByRole('row').filter({ hasText: `stories260K-${type}.gguf` })).toBeVisible({ timeout: 120_000 });
    await expect(form.getByRole('button', { name: 'Export' })).toBeEnabled({ timeout: 120_000 });
  }

  const levels = page.getByRole('table', { name: 'Quality across quantization levels' });
  const row = (type: string) => levels.getByRole('row').filter({ has: page.getByRole('rowheader', { name: type, exact: true }) });
  // Columns after the type: file, size, decode, mean KL, same top token, measured on.
  const meanKl = async (type: string) => {
    const cell = row(type).getByRole('cell').nth(3);
    await expect(cell).not.toHaveText('—', { timeout: 600_000 });
    return Number(await cell.textContent());
  };
  const q8 = await meanKl('Q8_0');
  const q4 = await meanKl('Q4_K_M');
  expect(q8 > 0 && q8 < 1e-3, `Q8_0 mean KL ${q8}`).toBe(true);
  expect(q4, 'Q4_K_M mean KL').toBeGreaterThan(q8);
  for (const type of ['Q8_0', 'Q4_K_M']) {
    await expect(row(type).getByRole('cell').nth(0)).toHaveText(`stories260K-${type}.gguf`);
    // Exports go to the data folder's models/.
    await expect(row(type).getByRole('cell').nth(1)).toHaveText(formatBytes(statSync(join(scratch, 'home', 'models', `stories260K-${type}.gguf`)).size));
    await expect(row(type)).toContainText('built-in text');
  }
  // Smallest first: Q4_K_M's file is smaller than Q8_0's.
  await expect(levels.getByRole('rowheader')).toHaveText(['Source', 'Q4_K_M', 'Q8_0']);
  const chart = page.getByRole('img', { name: 'Mean KL divergence against file size' });
  await expect(chart.locator('circle')).toHaveCount(2);
  await chart.scrollIntoViewIfNeeded();
  await page.screenshot({ path: testInfo.outputPath('quality-across-levels-light.png') });
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.screenshot({ path: testInfo.outputPath('quality-across-levels-dark.png') });
  await page.emulateMedia({ colorScheme: 'light' });
});
