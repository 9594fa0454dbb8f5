/**
 * The importance matrix on the Export screen (issue 18; browser mode, stories260K): compute one
 * from the built-in text on the GPU (progress, then what it was computed from), the plan and the
 * predictions follow it; the recipe editor shows the predicted quality, which changes with the
 * recipe; the export is written with the matrix. (stories260K's rows are too short for the 2-bit
 * types' blocks, so they fall back and need no matrix here: test/backend covers that marking.) Screenshots go to the test's output folder.
 */
import { expect, test } from '@playwright/test';
import { openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ mode: 'serial', timeout: 480_000 });

const app = serveStories({ name: 'imatrix', viewport: { width: 1400, height: 1200 } });

test('an importance matrix from the built-in text feeds the plan, the recipe prediction and the export', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  await source.selectOption(await source.locator('option').filter({ hasText: 'stories260K' }).getAttribute('value'));
  await page.getByRole('radio', { name: 'Q4_0', exact: true }).check();

  // The recipe editor's predicted quality, once the prediction job has measured the model; it follows the recipe.
  await page.getByText('Custom recipe').click();
  const predicted = page.getByRole('status', { name: 'Predicted with this recipe' });
  await expect(predicted).toContainText('Q4_0 as mixed');
  await expect(predicted).toContainText('predicted error', { timeout: 120_000 });
  const mixed = await predicted.innerText();
  await page.getByRole('combobox', { name: 'Type of ffn_down' }).selectOption('Q8_0');
  await expect(predicted).toContainText('with this recipe');
  await expect(predicted).not.toHaveText(mixed);
  await expect(predicted).toContainText('predicted error');
  const withRecipe = await predicted.innerText();

  const matrix = page.getByRole('group', { name: 'Importance matrix' });
  // Choosing the built-in text starts the computation, with its progress (issue #30 item 13).
  await matrix.getByRole('radio', { name: 'Compute from the built-in text' }).check();
  await expect(matrix.getByRole('progressbar')).toBeVisible();
  await expect(matrix.getByRole('button', { name: 'Compute' })).toHaveCount(0);
  await expect(matrix.getByRole('status').filter({ hasText: 'Using built-in text v1' })).toBeVisible({
    timeout: 300_000,
  });
  await expect(matrix).toContainText('35 matrices from');
  // The prediction with the matrix (the encoders weigh by it): new figures once measured.
  await expect
    .poll(
      async () => {
        const text = await predicted.innerText();
        return text.includes('predicted error') && text !== withRecipe;
      },
      { timeout: 300_000 },
    )
    .toBe(true);
  await screenshot({ page, testInfo }, 'export-imatrix', { fullPage: true });

  await form.getByRole('button', { name: 'Export', exact: true }).click();
  const link = page
    .getByRole('table', { name: 'Source vs export' })
    // Named after its recipe (ffn_down to Q8_0), as any custom export.
    .getByRole('link', { name: 'stories260K-Q4_0-custom-Q8_0.gguf', exact: true });
  await expect(link).toBeVisible({ timeout: 120_000 });
  await screenshot({ page, testInfo }, 'export-imatrix-done', { fullPage: true });
});
