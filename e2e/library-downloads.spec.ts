import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { STORIES_260K } from '../test/support/paths';
import { serveGufo } from './support/served-app';

// No models: the library starts empty. HOME is a folder of its own without Ollama or Hugging Face stores.
const served = serveGufo({
  name: 'downloads',
  models: {},
  env: (scratch) => ({
    GUFO_HOME: join(scratch, 'data'),
    GUFO_MODELS_DIRS: '',
    HOME: join(scratch, 'home'),
    OLLAMA_MODELS: join(scratch, 'home', 'no-ollama'),
    HF_HOME: join(scratch, 'home', 'no-hf'),
  }),
});
let files: Server;
let filesUrl: string;

test.beforeAll(async () => {
  const model = readFileSync(STORIES_260K);
  // A plain file server on 127.0.0.1: the model, and a page that is not one.
  files = createServer((req, res) => {
    const body =
      req.url === '/tiny.gguf' ? model : req.url === '/page.gguf' ? Buffer.from('<html>not a model</html>') : null;
    if (!body) return void res.writeHead(404).end();
    res.writeHead(200, { 'Content-Length': String(body.length) });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
});

test.afterAll(async () => {
  await new Promise<void>((resolve) => files.close(() => resolve()));
});

test('downloads a model from the Library screen, and it joins the library', async ({ page }) => {
  await page.goto(served.gufo.url.href);
  await expect(page.getByRole('heading', { level: 2, name: 'Library' })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'No models yet' })).toBeVisible();

  const form = page.getByRole('form', { name: 'Download a model' });
  await form.getByRole('textbox', { name: 'URL' }).fill(`${filesUrl}/tiny.gguf`);
  await form.getByRole('button', { name: 'Download' }).click();

  const item = page.getByRole('list', { name: 'Downloads' }).getByRole('listitem').filter({ hasText: 'tiny.gguf' });
  await expect(item.getByRole('status')).toHaveText('Done');
  await expect(item).toContainText('Open in inspector');
  // The library lists it, as a download.
  await expect(page.getByRole('table').getByRole('row').filter({ hasText: 'tiny.gguf' })).toContainText('Downloaded');

  await item.getByRole('button', { name: 'Remove from list tiny.gguf' }).click();
  await expect(page.getByRole('list', { name: 'Downloads' })).toHaveCount(0);
});

test('says why a download failed, in an alert', async ({ page }) => {
  await page.goto(served.gufo.url.href);
  const form = page.getByRole('form', { name: 'Download a model' });
  await form.getByRole('textbox', { name: 'URL' }).fill('not a url');
  await form.getByRole('button', { name: 'Download' }).click();
  await expect(page.getByRole('alert').filter({ hasText: '"not a url" is not a URL' })).toBeVisible();

  await form.getByRole('textbox', { name: 'URL' }).fill(`${filesUrl}/page.gguf`);
  await form.getByRole('button', { name: 'Download' }).click();
  const item = page.getByRole('list', { name: 'Downloads' }).getByRole('listitem').filter({ hasText: 'page.gguf' });
  await expect(item.getByRole('status')).toHaveText('Failed');
  await expect(item.getByRole('alert')).toContainText(`${filesUrl}/page.gguf is not a GGUF file`);
});
