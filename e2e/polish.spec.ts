/**
 * The screens hold still and look alike where they should (issue 17, items 9–14), at 1400×900:
 * the document never scrolls, the header keeps its height while a job runs, the Benchmarks table
 * fits, choices survive leaving a screen, every dialog dims the page alike, the Ollama form's
 * inputs share a baseline; at 1024×700 (issue #30 item 10) no screen scrolls sideways. Screenshots in
 * both themes go to the test's output folder.
 */
import { expect, test, type Locator, type Page } from '@playwright/test';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../test/support/paths';
import { openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ mode: 'serial', timeout: 240_000 });

const app = serveStories({
  name: 'polish',
  models: { 'stories260K.gguf': STORIES_260K, 'llama-2-tiny-random.gguf': TINY_RANDOM_LLAMA },
  expectOffline: true,
  expectCleanStop: true,
});

/** The screen in the light and the dark theme, as `<name>-light.png` and `<name>-dark.png`. */
const BOTH_THEMES = { themes: ['light', 'dark'] } as const;

/** The document is exactly the window: only the app's content pane scrolls. */
async function expectDocumentStill(page: Page): Promise<void> {
  const sizes = await page.evaluate(() => ({
    scrollHeight: document.documentElement.scrollHeight,
    scrollWidth: document.documentElement.scrollWidth,
    innerHeight: window.innerHeight,
    innerWidth: window.innerWidth,
    scrollY: window.scrollY,
  }));
  expect(sizes.scrollHeight, 'document height').toBe(sizes.innerHeight);
  expect(sizes.scrollWidth, 'document width').toBe(sizes.innerWidth);
  expect(sizes.scrollY).toBe(0);
}

const headerHeight = async (page: Page) => (await page.getByRole('banner').boundingBox())!.height;

async function backdropOf(dialog: Locator): Promise<string> {
  await expect(dialog).toBeVisible();
  return dialog.evaluate((el) => getComputedStyle(el, '::backdrop').backgroundColor);
}

test('the inspector block view scrolls inside the app; the document never scrolls', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Open stories260K', exact: true }).click();
  const tabs = page.getByRole('tablist', { name: 'Inspector sections' });
  await tabs.getByRole('tab', { name: 'Tensors' }).click();
  await page
    .getByRole('table', { name: 'Tensors' })
    .getByRole('button', { name: 'blk.0.attn_q.weight', exact: true })
    .click();
  const block = page.getByRole('region', { name: 'Block view' });
  await expect(block.getByRole('table', { name: 'Values' })).toBeVisible();
  // The values are the file's f32s, each in as few digits as read back the same.
  for (const text of await block.locator('td .value').allTextContents()) {
    expect(text.replace(/^value\s*/, '').replace(/^-/, '').length, text).toBeLessThanOrEqual(12);
  }

  await block.hover();
  for (let i = 0; i < 30; i++) await page.mouse.wheel(0, 600);
  await expect(page.getByRole('heading', { level: 1, name: 'Gufo' })).toBeInViewport();
  await expect(page.getByRole('navigation', { name: 'Sections' })).toBeInViewport();
  await expectDocumentStill(page);
  await screenshot({ page, testInfo }, 'inspector-block-end', BOTH_THEMES);

  await tabs.getByRole('tab', { name: 'Layer map' }).click();
  const legend = page.getByRole('list', { name: 'Type colours' });
  await expect(legend).toBeVisible();
  await expectDocumentStill(page);
  await screenshot({ page, testInfo }, 'inspector-layer-map', BOTH_THEMES);

  // Memory: contexts past the 2,048 tokens stories260K was trained on are marked; each says whether it fits the GPU budget (issue #30 item 12).
  await tabs.getByRole('tab', { name: 'Memory' }).click();
  const contexts = page.getByRole('group', { name: 'Common context lengths' });
  await contexts.getByRole('button', { name: /^2,048/ }).click();
  await expect(contexts.getByRole('button', { name: /^2,048/ })).toHaveAccessibleName(
    /^2,048: [\d.]+ [KMG]iB fits the GPU memory budget of [\d.]+ GiB \(RAM of the software GPU/,
  );
  for (const tokens of ['4,096', '8,192', '32,768', '131,072'])
    await expect(contexts.getByRole('button', { name: new RegExp(`^${tokens}`) })).toHaveAccessibleName(
      new RegExp(
        `^${tokens}: Past the 2,048 tokens the model was trained on: its answers degrade there\\. .* fits the GPU memory budget`,
      ),
    );
  await screenshot({ page, testInfo }, 'inspector-memory');
});

test('Benchmarks keep the model and settings across visits, the header its height while a job runs, the table fits', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Benchmarks');
  const form = page.getByRole('form', { name: 'Run a benchmark' });
  const model = form.getByRole('combobox', { name: 'Model' });
  await expect(model.locator('option')).toHaveCount(2);
  const other = await model.locator('option').filter({ hasText: 'llama-2-tiny-random' }).getAttribute('value');
  await model.selectOption(other);
  await form.getByRole('spinbutton', { name: 'Prompt tokens' }).fill('16');
  await form.getByRole('spinbutton', { name: 'Generated tokens' }).fill('8');

  await openSection(page, 'Library');
  await openSection(page, 'Benchmarks');
  await expect(model).toHaveValue(other!);
  await expect(form.getByRole('spinbutton', { name: 'Prompt tokens' })).toHaveValue('16');
  await expect(form.getByRole('spinbutton', { name: 'Generated tokens' })).toHaveValue('8');

  const idle = await headerHeight(page);
  await form.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(page.getByRole('banner').getByRole('button', { name: /job running/ })).toBeVisible();
  expect(await headerHeight(page), 'header height while a job runs').toBe(idle);
  await screenshot({ page, testInfo }, 'benchmarks-running', BOTH_THEMES);

  const results = page.getByRole('table', { name: 'Benchmark results' });
  await expect(results.getByRole('row')).toHaveCount(2, { timeout: 180_000 });
  // One run: its value, not one dot on an empty time axis.
  await expect(page.getByText(/^\s*Decode speed:/)).toContainText('tok/s');
  await expect(page.getByRole('img', { name: 'Decode speed over time, per model, adapter and test' })).toHaveCount(0);
  const overflow = await results.evaluate((table) => {
    const box = table.parentElement!;
    const content = document.querySelector('main')!;
    return { box: box.scrollWidth - box.clientWidth, content: content.scrollWidth - content.clientWidth };
  });
  expect(overflow, 'sideways overflow of the results table and the content pane').toEqual({ box: 0, content: 0 });
  await expectDocumentStill(page);
  await screenshot({ page, testInfo }, 'benchmarks', BOTH_THEMES);

  // A run of another length is a line of its own; the chart shows prefill too; Roofline is explained (issue #30 item 19).
  await form.getByRole('spinbutton', { name: 'Generated tokens' }).fill('4');
  await form.getByRole('button', { name: 'Run benchmark' }).click();
  await expect(results.getByRole('row')).toHaveCount(3, { timeout: 180_000 });
  const legend = page.getByRole('list', { name: 'Series' });
  await expect(legend.getByRole('listitem')).toHaveText([/pp16 · tg8/, /pp16 · tg4/]);
  await page.getByRole('radio', { name: 'Prefill' }).check();
  await expect(page.getByRole('img', { name: 'Prefill speed over time, per model, adapter and test' })).toBeVisible();
  await expect(results.getByRole('columnheader', { name: 'Roofline' }).locator('abbr')).toHaveAttribute(
    'title',
    /memory speed/,
  );
  await expect(page.locator('#roofline-note')).toContainText('share of the bandwidth a plain copy reaches');
  await screenshot({ page, testInfo }, 'benchmarks-chart', BOTH_THEMES);
});

test('Export keeps its source across visits; the Ollama form lines up; every dialog dims the page alike', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  const tiny = await source.locator('option').filter({ hasText: 'llama-2-tiny-random' }).getAttribute('value');
  await source.selectOption(tiny);
  await expect(page).toHaveURL(new RegExp(`#/export/${tiny}$`));

  await openSection(page, 'Library');
  await openSection(page, 'Export');
  await expect(source).toHaveValue(tiny!);

  const ollama = page.getByRole('form', { name: 'Send to Ollama' });
  const inputs = [
    ollama.getByRole('textbox', { name: /Ollama model name/ }),
    ollama.getByRole('combobox', { name: 'File type' }),
    ollama.getByRole('spinbutton', { name: /Context size/ }),
  ];
  // Polled: the three boxes are measured one after another, and the page above the form may still
  // be filling in for the restored source (CI once measured the first before it grew: 534 against 3219).
  const tops = async () => {
    const y = await Promise.all(inputs.map(async (input) => (await input.boundingBox())!.y));
    return new Set(y).size === 1 ? 'one line' : `the inputs' tops ${y.join(', ')}`;
  };
  await expect.poll(tops).toBe('one line');
  await ollama.scrollIntoViewIfNeeded();
  await expectDocumentStill(page);
  await screenshot({ page, testInfo }, 'export-ollama', BOTH_THEMES);

  // Dialogs: the library's remove and file browser, the chat's new chat.
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Remove stories260K…', exact: true }).click();
  const remove = await backdropOf(page.getByRole('dialog', { name: /^Remove stories260K/ }));
  await screenshot({ page, testInfo }, 'dialog-remove', BOTH_THEMES);
  await page.keyboard.press('Escape');
  await page.getByRole('button', { name: 'Add files…' }).click();
  const browse = await backdropOf(page.getByRole('dialog', { name: 'Add model files' }));
  await page.keyboard.press('Escape');
  await openSection(page, 'Chat');
  await page.getByRole('button', { name: 'New chat' }).first().click();
  const newChatDialog = page.getByRole('dialog', { name: 'New chat' });
  const newChat = await backdropOf(newChatDialog);
  // Focus starts on the first field, not on Cancel (issue #30 item 21).
  await expect(newChatDialog.getByRole('combobox', { name: 'Model' })).toBeFocused();
  await screenshot({ page, testInfo }, 'dialog-new-chat', BOTH_THEMES);
  // With Advanced open it stays inside the window, scrolling inside; the sampling fields line up.
  await newChatDialog.getByText('Advanced', { exact: true }).click();
  const box = (await newChatDialog.boundingBox())!;
  expect(box.y, 'dialog top').toBeGreaterThanOrEqual(0);
  expect(box.y + box.height, 'dialog bottom').toBeLessThanOrEqual(900);
  const fields = ['Temperature', 'Top-k', 'Top-p', 'Min-p', 'Repeat penalty', 'Seed'].map((name) =>
    newChatDialog.getByRole('spinbutton', { name, exact: true }),
  );
  await fields[0]!.scrollIntoViewIfNeeded();
  const boxes = await Promise.all(fields.map(async (field) => (await field.boundingBox())!));
  await screenshot({ page, testInfo }, 'dialog-new-chat-advanced');
  const rowOf = (y: number) => boxes.filter((b) => Math.abs(b.y - y) < 20);
  for (const b of boxes) {
    expect(new Set(rowOf(b.y).map((r) => r.y)).size, 'tops of the inputs in one row').toBe(1);
    expect(new Set(rowOf(b.y).map((r) => r.height)).size, 'heights of the inputs in one row').toBe(1);
  }
  expect(new Set(boxes.map((b) => b.x)).size, 'columns').toBeLessThan(boxes.length);
  await screenshot({ page, testInfo }, 'dialog-new-chat-advanced');
  await newChatDialog.getByRole('button', { name: 'Create chat' }).scrollIntoViewIfNeeded();
  await expect(newChatDialog.getByRole('button', { name: 'Create chat' })).toBeInViewport();
  await page.keyboard.press('Escape');
  expect([browse, newChat]).toEqual([remove, remove]);
  expect(remove).not.toBe('rgba(0, 0, 0, 0)');
});

test('From a model to a chat or an export, and a chat moved to another model (issue #30 item 11)', async () => {
  const { page } = app;
  const dialog = page.getByRole('dialog', { name: 'New chat' });
  const dialogModel = dialog.getByRole('combobox', { name: 'Model' });
  // Library: Export opens the Export screen on the model, Chat the New chat dialog on it.
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Export stories260K', exact: true }).click();
  const source = page.getByRole('form', { name: 'Export a model' }).getByRole('combobox', { name: 'Source model' });
  await expect(source.locator('option:checked')).toHaveText(/^\s*stories260K/);
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Chat with stories260K', exact: true }).click();
  await expect(page).toHaveURL(/#\/chat$/);
  await expect(dialogModel.locator('option:checked')).toHaveText(/^\s*stories260K/);
  await page.keyboard.press('Escape');

  // Inspector: the same two actions, for the tiny model.
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Open llama-2-tiny-random', exact: true }).click();
  const inspector = page.getByRole('region', { name: 'llama-2-tiny-random' });
  await inspector.getByRole('link', { name: 'Export', exact: true }).click();
  await expect(source.locator('option:checked')).toHaveText(/^\s*llama-2-tiny-random/);
  await page.goBack();
  await inspector.getByRole('button', { name: 'Chat', exact: true }).click();
  await expect(dialogModel.locator('option:checked')).toHaveText(/^\s*llama-2-tiny-random/);
  await dialog.getByRole('button', { name: 'Create chat' }).click();
  await expect(dialog).toBeHidden();
  const header = page.locator('p.model').filter({ hasText: 'llama-2-tiny-random' });
  await expect(header).toBeVisible();

  // Chat settings: another model for the chat; its context within the new model's (stories260K: 2,048).
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  await settings.getByRole('spinbutton', { name: 'Context size (tokens)' }).fill('4096');
  const model = settings.getByRole('combobox', { name: 'Model' });
  await model.selectOption({
    label: (await model.locator('option').filter({ hasText: 'stories260K' }).textContent())!.trim(),
  });
  await expect(settings.getByRole('spinbutton', { name: 'Context size (tokens)' })).toHaveValue('2048');
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();
  await expect(page.locator('p.model').filter({ hasText: 'stories260K' })).toBeVisible();
  await page.reload();
  await expect(page.locator('p.model').filter({ hasText: 'stories260K' })).toBeVisible();
});

/** Elements of the page that scroll (or would need to) sideways: the document, and any box whose content is wider than it. */
async function sidewaysOverflow(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const found: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth) found.push(`document ${root.scrollWidth} > ${root.clientWidth}`);
    for (const el of document.querySelectorAll<HTMLElement>('main, main *')) {
      const { overflowX } = getComputedStyle(el);
      if ((overflowX === 'auto' || overflowX === 'scroll') && el.scrollWidth > el.clientWidth + 1)
        found.push(`${el.tagName.toLowerCase()}.${el.className} ${el.scrollWidth} > ${el.clientWidth}`);
    }
    return found;
  });
}

test('At 1024×700 no screen scrolls sideways, and every control is inside the window', async ({}, testInfo) => {
  const { page } = app;
  await page.setViewportSize({ width: 1024, height: 700 });
  try {
    await openSection(page, 'Library');
    for (const name of ['Open stories260K', 'Remove stories260K…'])
      await expect.soft(page.getByRole('button', { name, exact: true })).toBeInViewport({ ratio: 1 });
    expect.soft(await sidewaysOverflow(page), 'Library').toEqual([]);
    await screenshot({ page, testInfo }, 'narrow-library');

    await page.getByRole('button', { name: 'Open stories260K', exact: true }).click();
    const tabs = page.getByRole('tablist', { name: 'Inspector sections' });
    await expect(tabs.getByRole('tab')).not.toHaveCount(0);
    for (const tab of await tabs.getByRole('tab').all()) {
      await tab.click();
      const name = (await tab.textContent())!.trim();
      expect.soft(await sidewaysOverflow(page), `Inspector › ${name}`).toEqual([]);
      await screenshot({ page, testInfo }, `narrow-inspector-${name.toLowerCase().replace(/\W+/g, '-')}`);
    }

    // The Export plan's chart: its axis titles whole, inside the window.
    await openSection(page, 'Export');
    const source = page.getByRole('form', { name: 'Export a model' }).getByRole('combobox', { name: 'Source model' });
    await source.selectOption({
      label: (await source.locator('option').filter({ hasText: 'stories260K' }).textContent())!,
    });
    const chart = page.getByTestId('size-quality-chart');
    await expect(chart.locator('circle').first()).toBeVisible({ timeout: 60_000 });
    await chart.scrollIntoViewIfNeeded();
    for (const label of await chart.locator('text.axis-label').all())
      await expect.soft(label).toBeInViewport({ ratio: 1 });
    await screenshot({ page, testInfo }, 'narrow-export-chart');

    for (const section of ['Chat', 'Benchmarks', 'Export', 'Settings']) {
      await openSection(page, section);
      await expect(page.getByRole('heading', { level: 2, name: section })).toBeVisible();
      expect.soft(await sidewaysOverflow(page), section).toEqual([]);
      await screenshot({ page, testInfo }, `narrow-${section.toLowerCase()}`);
    }
  } finally {
    await page.setViewportSize({ width: 1400, height: 900 });
  }
});
