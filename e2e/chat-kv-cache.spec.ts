/**
 * KV cache types in the app (browser mode, SwiftShader): `gufo serve --cache-type-k/-v q4_0` is the
 * default a chat takes, stated in its settings and shown in the answer's statistics; picking q8_0
 * in Chat settings reloads the model with it, the answer's statistics and the loaded model say
 * q8_0, and the choice is kept across a reload; the inspector's Memory tab shows what q8_0 and
 * q4_0 save against f16; the New chat dialog offers the types with "Default" naming the server's. The
 * model is a random llama with heads of 32 (whole q8_0/q4_0 blocks;
 * stories260K's heads of 8 hold none).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { writeRandomModel } from '../test/support/test-models';
import { ask, newChat, openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 300_000 });

const MODEL_FILE = 'kv-heads-32.gguf';
/** Filled before the server starts (this hook is registered before serveStories's). */
const models: Record<string, string> = {};
let modelDir = '';
test.beforeAll(async () => {
  modelDir = mkdtempSync(join(tmpdir(), 'gufo-e2e-kv-model-'));
  models[MODEL_FILE] = join(modelDir, MODEL_FILE);
  // 2 layers, 2 KV heads of 32: 64 KV elements a layer and token.
  await writeRandomModel(models[MODEL_FILE], { nLayer: 2, nEmbd: 64, nFf: 64, nHead: 2, contextLength: 512 });
});
test.afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

const app = serveStories({
  name: 'kv-cache',
  models,
  args: ['--cache-type-k', 'q4_0', '--cache-type-v', 'q4_0'],
});

test("a chat's KV cache type: the server's default, then q8_0 from Chat settings; the Memory tab's savings", async ({}, testInfo) => {
  const { page } = app;
  await newChat(page, MODEL_FILE, { preset: 'Precise', maxTokens: 4 });

  // gufo serve's types are the default a chat takes.
  const first = await ask(page, 'Once upon a time');
  await expect(first.getByRole('group', { name: 'Generation statistics' })).toContainText('KV cache q4_0');

  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  const k = settings.getByRole('combobox', { name: 'K cache type' });
  const v = settings.getByRole('combobox', { name: 'V cache type' });
  await expect(k).toHaveValue('');
  await expect(k.locator('option:checked')).toHaveText('Default (q4_0)');
  await k.selectOption('q8_0');
  await v.selectOption('q8_0');
  await expect(settings).toContainText('q8_0 takes about half of f16');
  await screenshot({ page, testInfo }, 'chat-kv-cache-settings', { themes: ['light', 'dark'] });
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();

  // The next answer loads the model again with q8_0, and says so; so does the loaded model.
  const second = await ask(page, 'Tom had a red ball.');
  await expect(second.getByRole('group', { name: 'Generation statistics' })).toContainText('KV cache q8_0');
  const loaded = page.getByRole('region', { name: 'Loaded models' });
  await expect(loaded).toContainText('KV cache q8_0');
  await expect(loaded.locator('.model')).toHaveAttribute('title', /KV cache [\d.]+ KiB \(512 tokens, q8_0\)/);
  await screenshot({ page, testInfo }, 'chat-kv-cache-answer');

  // Kept with the chat.
  await page.reload();
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await expect(settings.getByRole('combobox', { name: 'K cache type' })).toHaveValue('q8_0');
  await expect(settings.getByRole('combobox', { name: 'V cache type' })).toHaveValue('q8_0');
  await settings.getByRole('button', { name: 'Cancel' }).click();

  // The Memory tab: what each type takes and saves at the chosen context.
  await openSection(page, 'Library');
  await page.getByRole('button', { name: 'Open kv-heads-32', exact: true }).click();
  await page.getByRole('tablist', { name: 'Inspector sections' }).getByRole('tab', { name: 'Memory' }).click();
  await page.getByRole('group', { name: 'Common context lengths' }).getByRole('button', { name: '4,096' }).click();
  const table = page.getByRole('table', { name: 'KV cache by type' });
  // 4,096 tokens × 2 layers × 64 elements × (K and V): f16 2 bytes each (2 MiB), q8_0 34 per 32, q4_0 18 per 32.
  await expect(table.getByRole('row', { name: /^f16/ })).toContainText('2.00 MiB');
  await expect(table.getByRole('row', { name: /^q8_0/ })).toContainText('1.06 MiB');
  await expect(table.getByRole('row', { name: /^q8_0/ })).toContainText('960 KiB (47%)');
  await expect(table.getByRole('row', { name: /^q4_0/ })).toContainText('576 KiB');
  await expect(table.getByRole('row', { name: /^q4_0/ })).toContainText('1.44 MiB (72%)');
  await screenshot({ page, testInfo }, 'inspector-memory-kv-types', { themes: ['light', 'dark'] });

  // A new chat picks its types in the New chat dialog, "Default" naming the server's.
  await newChat(page, MODEL_FILE, { maxTokens: 4, kvCacheK: { type: 'q8_0', defaultKv: 'q4_0' } });
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await expect(settings.getByRole('combobox', { name: 'K cache type' })).toHaveValue('q8_0');
  await expect(settings.getByRole('combobox', { name: 'V cache type' })).toHaveValue('');
});
