/**
 * Library › Add folder… in browser mode: the folder becomes a model folder, listed in Settings ›
 * Model folders, and a GGUF copied into it later joins the library at the next rescan.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { STORIES_260K } from '../test/support/paths';
import { serveStories } from './support/served-app';

// No models: the library starts empty. HOME is a folder of its own without Ollama or Hugging Face stores.
const app = serveStories({
  name: 'add-folder',
  models: {},
  env: (scratch) => ({
    GUFO_HOME: join(scratch, 'data'),
    GUFO_MODELS_DIRS: '',
    HOME: join(scratch, 'home'),
    OLLAMA_MODELS: join(scratch, 'home', 'no-ollama'),
    HF_HOME: join(scratch, 'home', 'no-hf'),
  }),
});

test('Add folder… makes the folder a model folder: shown in Settings, and a model copied in later joins', async () => {
  const { page } = app;
  const folder = join(app.scratch, 'my models');
  mkdirSync(folder);
  copyFileSync(STORIES_260K, join(folder, 'first.gguf'));

  await expect(page.getByRole('heading', { name: 'No models yet' })).toBeVisible();
  await page.getByRole('button', { name: 'Add folder…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a folder of models' });
  await dialog.getByRole('textbox', { name: 'Folder' }).fill(folder);
  await dialog.getByRole('button', { name: 'Go', exact: true }).click();
  await expect(dialog.getByRole('list', { name: `Contents of ${folder}` })).toBeVisible();
  await dialog.getByRole('button', { name: 'Add this folder' }).click();

  const result = page.getByRole('status').filter({ hasText: 'Added 1 model' });
  await expect(result).toContainText('Now a model folder');
  await expect(result).toContainText(folder);
  const rows = page.getByRole('table').getByRole('row');
  await expect(rows.filter({ hasText: 'first.gguf' })).toContainText('Folder');

  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
  const section = page.getByRole('region', { name: 'Model folders' });
  const own = section.getByRole('list', { name: 'Your model folders' }).getByRole('listitem');
  await expect(own).toHaveCount(1);
  await expect(own).toContainText(folder);
  await expect(section.getByText('None yet')).toHaveCount(0);

  // Bytes of its own (appended after the tensor data), so it is not one model with first.gguf.
  writeFileSync(join(folder, 'later.gguf'), Buffer.concat([readFileSync(STORIES_260K), Buffer.from('later')]));
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Library' }).click();
  await page.getByRole('button', { name: 'Rescan' }).click();
  await expect(rows.filter({ hasText: 'later.gguf' })).toContainText('Folder');
});

test('Add files… lists a broken file added alone as a folder lists it: with its reason, not as a model', async () => {
  const { page } = app;
  const folder = join(app.scratch, 'loose files');
  mkdirSync(folder);
  writeFileSync(join(folder, 'notes.gguf'), 'this is not a model');

  await page.getByRole('button', { name: 'Add files…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add model files' });
  await dialog.getByRole('textbox', { name: 'Folder' }).fill(folder);
  await dialog.getByRole('button', { name: 'Go', exact: true }).click();
  // By its name: until the new listing arrives, the dialog may still list the folder it opened on.
  await dialog.getByRole('checkbox', { name: /^notes\.gguf/ }).check();
  await dialog.getByRole('button', { name: 'Add 1 file' }).click();

  await expect(page.getByRole('status').filter({ hasText: 'No models added, 1 skipped' })).toBeVisible();
  const row = page.getByRole('table').getByRole('row').filter({ hasText: 'notes.gguf' });
  await expect(row).toContainText("can't run");
  await expect(row.locator('.problem')).toHaveText(/^magic: not a GGUF file/);
  await page.getByRole('button', { name: 'Rescan' }).click();
  await expect(row.locator('.problem')).toHaveText(/^magic: not a GGUF file/);
  await expect(page.getByText(/ and 1 unreadable file, /)).toBeVisible();
});
