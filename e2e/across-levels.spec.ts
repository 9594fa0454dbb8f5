/**
 * Quality across quantization levels (issue 18, item 4; browser mode, stories260K on SwiftShader):
 * exports to Q8_0 and Q4_K_M, each followed by its quality report, appear on the Export screen in
 * one table, smallest first, with their sizes and mean KL, and as points of one chart.
 * Screenshots go to the test's output folder.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { formatBytes } from '../src-preload/api';
import { openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

/** Two exports, each with a quality report of two models over the built-in text, on a software GPU. */
test.describe.configure({ mode: 'serial', timeout: 900_000 });

const app = serveStories({ name: 'levels' });

test('Q8_0 and Q4_K_M exports of stories260K side by side: size and mean KL, smallest first, in a table and a chart', async ({}, testInfo) => {
  const { page, scratch } = app;
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  await expect
    .poll(async () => (await source.locator('option').allTextContents()).some((t) => t.includes('stories260K')))
    .toBe(true);
  await source.selectOption(
    await source.locator('option').filter({ hasText: 'stories260K' }).first().getAttribute('value'),
  );

  const history = page.getByRole('table', { name: 'Past exports' });
  for (const type of ['Q8_0', 'Q4_K_M']) {
    await form.getByRole('radiogroup', { name: 'Target type' }).getByRole('radio', { name: type, exact: true }).check();
    await expect(form.getByRole('combobox', { name: 'Quality report after the export' })).toHaveValue('builtin');
    await form.getByRole('button', { name: 'Export' }).click();
    await expect(history.getByRole('row').filter({ hasText: `stories260K-${type}.gguf` })).toBeVisible({
      timeout: 120_000,
    });
    await expect(form.getByRole('button', { name: 'Export' })).toBeEnabled({ timeout: 120_000 });
  }

  const levels = page.getByRole('table', { name: 'Quality across quantization levels' });
  const row = (type: string) =>
    levels.getByRole('row').filter({ has: page.getByRole('rowheader', { name: type, exact: true }) });
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
    await expect(row(type).getByRole('cell').nth(1)).toHaveText(
      formatBytes(statSync(join(scratch, 'home', 'models', `stories260K-${type}.gguf`)).size),
    );
    await expect(row(type)).toContainText('built-in text');
  }
  // Smallest first: Q4_K_M's file is smaller than Q8_0's.
  await expect(levels.getByRole('rowheader')).toHaveText(['Source', 'Q4_K_M', 'Q8_0']);
  const chart = page.getByRole('img', { name: 'Mean KL divergence against file size' });
  await expect(chart.locator('circle')).toHaveCount(2);
  await chart.scrollIntoViewIfNeeded();
  await screenshot({ page, testInfo }, 'quality-across-levels', { themes: ['light', 'dark'] });

  // At 1024×700 (issue #30 item 10): both axis titles whole, inside the window and the chart, clear of the tick labels.
  await page.setViewportSize({ width: 1024, height: 700 });
  try {
    await chart.scrollIntoViewIfNeeded();
    const titles = chart.locator('text.axis-label');
    await expect(titles).toHaveText(['File size', 'Mean KL (nats)']);
    for (const title of await titles.all()) await expect(title).toBeInViewport({ ratio: 1 });
    const boxes = await chart.evaluate((svg) => {
      const box = (el: Element) => {
        const r = el.getBoundingClientRect();
        return { left: r.left, right: r.right, top: r.top, bottom: r.bottom };
      };
      return {
        svg: box(svg),
        yTitle: box(svg.querySelectorAll('text.axis-label')[1]!),
        ticks: [...svg.querySelectorAll('text.tick')].map(box),
      };
    });
    const { svg, yTitle } = boxes;
    expect(yTitle.left).toBeGreaterThanOrEqual(svg.left);
    expect(yTitle.top).toBeGreaterThanOrEqual(svg.top);
    expect(yTitle.bottom).toBeLessThanOrEqual(svg.bottom);
    for (const tick of boxes.ticks)
      expect(
        tick.left >= yTitle.right ||
          tick.right <= yTitle.left ||
          tick.top >= yTitle.bottom ||
          tick.bottom <= yTitle.top,
        `tick label at ${JSON.stringify(tick)} overlaps the y-axis title at ${JSON.stringify(yTitle)}`,
      ).toBe(true);
    await screenshot({ page, testInfo }, 'narrow-quality-across-levels');
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
});
