/**
 * Custom recipes on the Export screen (issue 18, item 3; browser mode, stories260K): change a
 * role's type, the predicted size changes, export, and the inspector of the result shows the
 * recipe. On a model with 256-wide rows (where no type falls back): the IQ types' cards say they need
 * an importance matrix, IQ3_S changes the prediction, the types that need one appear once one is chosen, and clearing it says why the
 * chosen type cannot be exported. Screenshots go to the test's output folder.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { STORIES_260K } from '../test/support/paths';
import { writeRandomModel } from '../test/support/test-models';
import { openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';
import { writeUniformImatrix } from '../test/support/uniform-imatrix';

test.describe.configure({ mode: 'serial', timeout: 240_000 });

const wideDir = mkdtempSync(join(tmpdir(), 'gufo-e2e-recipe-wide-'));
const wide = join(wideDir, 'wide.gguf');
const wideImatrix = join(wideDir, 'wide.imatrix.gguf');

// Before serveStories' hooks (registered below): the wide model and a matrix for it, written here, are copied into models/.
test.beforeAll(async () => {
  await writeRandomModel(wide, { nLayer: 2, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2, name: 'wide recipe model' });
  await writeUniformImatrix(wide, wideImatrix, 'e2e');
});
test.afterAll(() => rmSync(wideDir, { recursive: true, force: true }));

const app = serveStories({
  name: 'recipe',
  viewport: { width: 1400, height: 1000 },
  models: { 'stories260K.gguf': STORIES_260K, 'wide.gguf': wide },
});

test('a role set to another type changes the predicted size; the export records the recipe and the inspector shows it', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  await source.selectOption(await source.locator('option').filter({ hasText: 'stories260K' }).getAttribute('value'));
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
  await expect(page.getByText('Layers of attn_v, ffn_up: from')).toBeVisible();
  await screenshot({ page, testInfo }, 'export-recipe-edited', { fullPage: true });

  await form.getByRole('button', { name: 'Export', exact: true }).click();
  // The export's own row (the file is also listed under quality across quantization levels).
  const link = page
    .getByRole('table', { name: 'Source vs export' })
    .getByRole('link', { name: 'stories260K-Q8_0-custom-F16-Q4_0.gguf', exact: true });
  await expect(link).toBeVisible({ timeout: 60_000 });
  await link.click();
  const summary = page.getByRole('definition').filter({ hasText: 'attn_v' });
  await expect(summary).toContainText('Q8_0; ^blk\\.(?:\\d+)\\.attn_v(?:_exps|_shexp)?\\.weight$=F16');
  await screenshot({ page, testInfo }, 'inspector-recipe', { fullPage: true });
});

test('IQ3_S changes the prediction; the types that need an importance matrix come with one, and without it the screen says why', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  await source.selectOption(await source.locator('option').filter({ hasText: 'wide' }).getAttribute('value'));
  // Rows of 256: the IQ types do not fall back, so without a matrix their cards say what they need (issue #30 item 13).
  const iqHint = 'Needs an importance matrix: choose one under “Importance matrix” below.';
  for (const type of ['IQ2_XXS', 'IQ1_S']) {
    await expect(page.getByRole('radio', { name: type, exact: true })).toBeDisabled();
    await expect(page.locator(`#export-type-${type}-facts`)).toHaveText(iqHint);
  }
  await expect(page.locator('#export-type-Q4_K_M-facts')).not.toContainText('importance matrix');
  await page.getByRole('radio', { name: 'Q4_K_M', exact: true }).check();
  await page.getByText('Custom recipe').click();
  const predicted = page.getByRole('status', { name: 'Predicted with this recipe' });
  await expect(predicted).toContainText('Q4_K_M as mixed');
  const mixed = await predicted.innerText();

  const attnV = page.getByRole('combobox', { name: 'Type of attn_v' });
  await attnV.selectOption('IQ3_S');
  await expect(predicted).toContainText('Q4_K_M with this recipe');
  await expect(predicted).not.toHaveText(mixed, { timeout: 60_000 });
  // No importance matrix yet: the types that need one are not offered.
  await expect(attnV.locator('option', { hasText: 'IQ2_XS' })).toHaveCount(0);
  await expect(attnV.locator('optgroup')).toHaveCount(0);

  const matrix = page.getByRole('group', { name: 'Importance matrix' });
  await matrix.getByRole('radio', { name: /From a file/ }).check();
  await matrix.getByRole('textbox', { name: 'Importance matrix or text file' }).fill(wideImatrix);
  await matrix.getByRole('button', { name: 'Use this file' }).click();
  await expect(matrix.getByRole('status').filter({ hasText: 'Using' })).toBeVisible({ timeout: 60_000 });
  // With the matrix the IQ types are offered, their hint gone, once the plan made with it arrives.
  await expect(page.getByRole('radio', { name: 'IQ2_XXS', exact: true })).toBeEnabled({ timeout: 60_000 });
  await expect(page.locator('#export-type-IQ2_XXS-facts')).not.toContainText('Needs an importance matrix');
  const needing = attnV.locator('optgroup[label="needs the importance matrix"]');
  await expect(needing.locator('option', { hasText: 'IQ2_XS' })).toHaveCount(1);
  const withIq3 = await predicted.innerText();
  await attnV.selectOption('IQ2_XS');
  // A plan with an importance matrix takes seconds on a loaded 2-core machine.
  await expect(predicted).not.toHaveText(withIq3, { timeout: 60_000 });
  await expect(predicted).toContainText('Q4_K_M with this recipe');
  await screenshot({ page, testInfo }, 'export-recipe-imatrix-types', { fullPage: true });

  // The matrix cleared: Q4_K_M stays chosen, and the editor says which role stops it (once the
  // plan made without the matrix arrives: seconds on a loaded machine, as above).
  await matrix.getByRole('radio', { name: 'None' }).check();
  const refusal = page.getByRole('alert', { name: 'Cannot export with this recipe' });
  await expect(refusal).toHaveText(
    'Q4_K_M cannot be exported with this recipe: attn_v is IQ2_XS, which needs an importance matrix. Choose one under “Importance matrix”, or another type for attn_v.',
    { timeout: 60_000 },
  );
  await expect(page.getByRole('radio', { name: 'Q4_K_M', exact: true })).toBeChecked();
  await expect(attnV).toHaveValue('IQ2_XS');
  // Nothing to start while the recipe cannot be written.
  await expect(form.getByRole('button', { name: 'Export', exact: true })).toBeDisabled();
  await screenshot({ page, testInfo }, 'export-recipe-imatrix-cleared', { fullPage: true });
});
