/**
 * Custom recipes on the Export screen (issue 18, item 3; browser mode, stories260K): change a
 * role's type, the predicted size changes, export, and the inspector of the result shows the
 * recipe. Screenshots go to the test's output folder.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../src-main/engine/gpu/software-driver';
import { STORIES_260K } from '../test/support/paths';
import { startGufoServe, type GufoServe } from './support/gufo-serve';
import { collectProblems } from './support/watch-page';

test.describe.configure({ mode: 'serial', timeout: 240_000 });

let scratch: string;
let gufo: GufoServe;
let context: BrowserContext;
let page: Page;
let problems: string[];

test.beforeAll(async ({ browser }) => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-recipe-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  gufo = await startGufoServe({
    GUFO_HOME: join(scratch, 'home'),
    GUFO_MODELS_DIRS: models,
    VK_ICD_FILENAMES: SWIFTSHADER_ICD,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir(),
  });
  context = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
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

test('a role set to another type changes the predicted size; the export records the recipe and the inspector shows it', async ({}, testInfo) => {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Export' }).click();
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  await source.selectOption((await source.locator('option').filter({ hasText: 'stories260K' }).getAttribute('value'))!);
  const q8 = page.getByRole('radio', { name: 'Q8_0', exact: true });
  await q8.check();
  const facts = page.locator('#export-type-Q8_0-facts');
  await expect(facts).toContainText('bits per weight');
  const before = await facts.innerText();

  await page.getByText('Custom recipe').click();
  await page.getByRole('combobox', { name: 'Type of attn_v' }).selectOption('F16');
  await page.getByRole('combobox', { name: 'Type of ffn_up' }).selectOption('Q4_0');
  await expect(facts).not.toHaveText(before);
  await expect(page.getByText('Custom recipe (2 overrides)')).toBeVisible();
  await page.screenshot({ path: testInfo.outputPath('export-recipe-edited.png'), fullPage: true });

  await form.getByRole('button', { name: 'Export', exact: true }).click();
  const link = page.getByRole('link', { name: 'stories260K-Q8_0.gguf', exact: true });
  await expect(link).toBeVisible({ timeout: 60_000 });
  await link.click();
  const summary = page.getByRole('definition').filter({ hasText: 'attn_v' });
  await expect(summary).toContainText('Q8_0; ^blk\\.(?:\\d+)\\.attn_v(?:_exps|_shexp)?\\.weight$=F16');
  await page.screenshot({ path: testInfo.outputPath('inspector-recipe.png'), fullPage: true });
});
