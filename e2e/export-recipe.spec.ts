/**
 * Custom recipes on the Export screen (issue 18, item 3; browser mode, stories260K): change a
 * role's type, the predicted size changes, export, and the inspector of the result shows the
 * recipe. Screenshots go to the test's output folder.
 */
import { expect, test } from '@playwright/test';
import { openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ mode: 'serial', timeout: 240_000 });

const app = serveStories({ name: 'recipe', viewport: { width: 1400, height: 1000 } });

test('a role set to another type changes the predicted size; the export records the recipe and the inspector shows it', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
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
  await screenshot({ page, testInfo }, 'export-recipe-edited', { fullPage: true });

  await form.getByRole('button', { name: 'Export', exact: true }).click();
  // The export's own row (the file is also listed under quality across quantization levels).
  const link = page.getByRole('table', { name: 'Source vs export' }).getByRole('link', { name: 'stories260K-Q8_0.gguf', exact: true });
  await expect(link).toBeVisible({ timeout: 60_000 });
  await link.click();
  const summary = page.getByRole('definition').filter({ hasText: 'attn_v' });
  await expect(summary).toContainText('Q8_0; ^blk\\.(?:\\d+)\\.attn_v(?:_exps|_shexp)?\\.weight$=F16');
  await screenshot({ page, testInfo }, 'inspector-recipe', { fullPage: true });
});
