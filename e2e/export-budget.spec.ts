/**
 * The GPU memory budget on the Export screen (issue 18; browser mode, stories260K): automatic on
 * the tests' software GPU (the machine's RAM, where every type fits), then set in Settings, where
 * it becomes a line on the size–quality chart and the types beyond it are marked over budget.
 * Screenshots go to the test's output folder.
 */
import { expect, test, type Page } from '@playwright/test';
import { chooseModel, openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 180_000 });

const app = serveStories({ name: 'budget' });

async function exportStories(page: Page): Promise<void> {
  await openSection(page, 'Export');
  await chooseModel(page.getByRole('combobox', { name: 'Source model' }), 'stories260K.gguf');
}

test('the GPU memory budget set in Settings is a line on the chart, and the types beyond it are over budget', async ({}, testInfo) => {
  const { page } = app;
  // Automatic: the tests compute on SwiftShader, a software adapter in the machine's RAM, where every type fits.
  await exportStories(page);
  const chart = page.getByTestId('size-quality-chart');
  const note = chart.getByTestId('budget-note');
  await expect(note).toContainText(/^GPU memory budget .* \(RAM of the software GPU SwiftShader.*; every type fits$/, {
    timeout: 120_000,
  });
  await expect(page.getByTestId('over-budget')).toHaveCount(0);

  await openSection(page, 'Settings');
  const field = page.getByRole('spinbutton', { name: 'GPU memory budget' });
  await field.fill('0');
  await field.blur();
  await expect(field).toHaveAccessibleDescription(
    /Must be a number of GiB above 0 and at most 65536, or null \(automatic\)$/,
  );
  // 1.59 MiB: stories260K's KV cache at 2,048 tokens (1.25 MiB) leaves 345 KiB for the file, about 9.3 bits per weight.
  await field.fill('0.00155');
  await field.blur();
  await expect(field).not.toHaveAttribute('aria-invalid');

  await exportStories(page);
  const line = chart.getByTestId('budget-line');
  await expect(line).toBeVisible({ timeout: 60_000 });
  await expect(line).toContainText('GPU budget');
  await expect(note).toHaveText(
    'GPU memory budget 1.59 MiB (Settings), less the KV cache at 2,048 tokens (1.25 MiB): 345 KiB for the file',
  );
  // The files over 345 KiB (`gufo quantize --plan`: F16 and BF16 587 KiB, Q8_0 and Q6_K 370 KiB); Q5_K_M's 309 KiB fits.
  for (const type of ['F16', 'BF16', 'Q8_0', 'Q6_K'])
    await expect(page.locator(`#export-type-${type}-facts`)).toContainText('over budget');
  await expect(page.locator('#export-type-Q5_K_M-facts')).not.toContainText('over budget');
  await screenshot({ page, testInfo }, 'export-budget', { themes: ['light', 'dark'], fullPage: true });

  // Emptied, the budget is automatic again.
  await openSection(page, 'Settings');
  await field.fill('');
  await field.blur();
  await exportStories(page);
  await expect(note).toContainText('every type fits', { timeout: 60_000 });
});
