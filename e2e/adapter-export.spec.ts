/**
 * Which GPU adapter computes, and what an export really writes (issue 17, items 6, 8 and 13;
 * browser mode, stories260K on SwiftShader): Settings › About names the adapter, its backend,
 * shader-f16 and subgroups, with "software GPU: slow" for a software driver; the chat header
 * shows the same in a chip; Export's Q4_K_M card says which tensors fall back; every dialog has
 * one frame. Screenshots go to the test's output folder.
 */
import { expect, test, type Locator } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../src-main/engine/gpu/software-driver';
import { newChat, openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ mode: 'serial', timeout: 240_000 });

const app = serveStories({
  name: 'adapter',
  // The tests name the adapter: SwiftShader, whatever GPU the run was given.
  env: () => ({ VK_ICD_FILENAMES: SWIFTSHADER_ICD }),
});

/** What a definition list pairs with `term`. */
const definitionOf = (scope: Locator, term: string) =>
  scope
    .getByRole('term')
    .filter({ hasText: new RegExp(`^${term}$`) })
    .locator('xpath=following-sibling::dd[1]');

test('Settings › About names the GPU adapter, its backend, shader-f16 and subgroups, and says a software one is slow', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Settings');
  const about = page.getByRole('region', { name: 'About' });
  // Opening the GPU starts an engine: seconds on a software driver.
  const adapter = definitionOf(about, 'GPU adapter');
  await expect(adapter).toContainText('SwiftShader', { timeout: 60_000 });
  await expect(adapter).toContainText('software GPU: slow');
  await expect(definitionOf(about, 'Backend')).toHaveText('Vulkan');
  await expect(definitionOf(about, 'shader-f16')).toHaveText('no');
  await expect(definitionOf(about, 'Subgroups')).toHaveText('yes (size 4)');
  await about.scrollIntoViewIfNeeded();
  await screenshot({ page, testInfo }, 'about-gpu-adapter', { themes: ['light', 'dark'] });
});

test("the chat header's chip shows the adapter, marked as a slow software GPU", async ({}, testInfo) => {
  const { page } = app;
  await newChat(page, 'stories260K.gguf');
  const chip = page.getByRole('group', { name: 'GPU adapter' });
  await expect(chip).toContainText('SwiftShader', { timeout: 60_000 });
  await expect(chip).toContainText('Vulkan');
  await expect(chip).toContainText('software GPU: slow');
  await screenshot({ page, testInfo }, 'chat-gpu-chip', { themes: ['light'] });
});

test("Export's Q4_K_M card on stories260K says how many tensors fall back and to what", async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  const source = form.getByRole('combobox', { name: 'Source model' });
  const stories = await source.locator('option').filter({ hasText: 'stories260K' }).getAttribute('value');
  await source.selectOption(stories);
  const q4km = page.getByRole('radio', { name: 'Q4_K_M', exact: true });
  // stories260K's rows are 64 wide: too short for K-quant blocks of 256.
  await expect(q4km).toHaveAccessibleDescription(
    /\d+ tensors fall back \(row length not a multiple of the type's block\): .*→/,
  );
  await q4km.scrollIntoViewIfNeeded();
  await screenshot({ page, testInfo }, 'export-fallbacks', { themes: ['light'] });
});

test('every dialog has the one frame: the library’s remove and file browser, the chat’s new chat', async ({}, testInfo) => {
  const { page } = app;
  const frameOf = async (dialog: Locator, name: string) => {
    await expect(dialog).toBeVisible();
    await screenshot({ page, testInfo }, name, { themes: ['light'] });
    const frame = await dialog.evaluate((el) => {
      const style = getComputedStyle(el);
      return {
        boxShadow: style.boxShadow,
        borderRadius: style.borderRadius,
        padding: style.padding,
        background: style.backgroundColor,
      };
    });
    await page.keyboard.press('Escape');
    await expect(dialog).toBeHidden();
    return frame;
  };
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Remove stories260K…', exact: true }).click();
  const remove = await frameOf(page.getByRole('dialog', { name: /^Remove stories260K/ }), 'dialog-remove');
  await page.getByRole('button', { name: 'Add files…' }).click();
  const browse = await frameOf(page.getByRole('dialog', { name: 'Add model files' }), 'dialog-file-browser');
  await openSection(page, 'Chat');
  await page.getByRole('button', { name: 'New chat' }).first().click();
  const newChat = await frameOf(page.getByRole('dialog', { name: 'New chat' }), 'dialog-new-chat');
  expect([remove, browse]).toEqual([newChat, newChat]);
  expect(newChat.boxShadow).not.toBe('none');
});
