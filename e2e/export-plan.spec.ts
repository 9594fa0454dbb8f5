/**
 * Size and quality before exporting (issue 18 item 1; browser mode, stories260K): the Export
 * screen predicts every type's quality in the background, shows it on each card and as a
 * size–quality chart beside the cards. Screenshots go to the test's output folder.
 */
import { expect, test } from '@playwright/test';
import { QUANT_FILE_TYPES } from '../src-main/core/quant-recipes';
import { openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ mode: 'serial', timeout: 180_000 });

const app = serveStories({ name: 'plan' });

test('Export shows each type predicted quality on its card and in a size–quality chart', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
  const select = page.getByRole('combobox', { name: 'Source model' });
  const stories = async () =>
    (await select.locator('option').allTextContents()).find((text) => text.trim().startsWith('stories260K'));
  await expect.poll(stories).toBeDefined(); // the models have loaded
  await select.selectOption({ label: (await stories())! });
  const chart = page.getByTestId('size-quality-chart');
  await expect(chart).toBeVisible({ timeout: 60_000 });
  await expect(chart.getByText('Size and predicted quality per type')).toBeVisible();
  // One point per file type: stories260K's 64-wide rows fall back from the types that need an
  // importance matrix, so every type has a prediction without one.
  await expect(chart.locator('circle')).toHaveCount(QUANT_FILE_TYPES.length);
  // The same figures as `gufo quantize --plan` (stories260K's Q8_0: 0.496%, SNR 46.1 dB).
  const q8 = page.locator('#export-type-Q8_0-facts');
  await expect(q8).toContainText('predicted error 0.496% · SNR 46.1 dB');
  await expect(page.locator('#export-type-Q4_K_M-facts')).toContainText(/predicted error 3\.2\d\d%/);
  await screenshot({ page, testInfo }, 'export-plan', { themes: ['light', 'dark'], fullPage: true });
});
