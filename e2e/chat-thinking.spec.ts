/**
 * A chat's thinking switch in the app (browser mode, SwiftShader), with stories260K given a
 * DeepSeek-R1-like template (test/backend/fixtures/thinker.ts: its prompt opens <think>, so all
 * it writes is reasoning unless told not to think): by default the answer is thinking, folded
 * above an empty answer; Chat settings › Thinking "Off" closes the block in the prompt, so the
 * next answer is plain text; the choice is kept across a reload.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { writeThinker } from '../test/backend/fixtures/thinker';
import { ask, newChat } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 300_000 });

const MODEL_FILE = 'thinker.gguf';
/** Filled before the server starts (this hook is registered before serveStories's). */
const models: Record<string, string> = {};
let modelDir = '';
test.beforeAll(async () => {
  modelDir = mkdtempSync(join(tmpdir(), 'gufo-e2e-thinker-'));
  models[MODEL_FILE] = join(modelDir, MODEL_FILE);
  await writeThinker(models[MODEL_FILE]);
});
test.afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

const app = serveStories({ name: 'thinking', models });

test("a chat's thinking: folded above the answer by default, off from Chat settings, kept", async () => {
  const { page } = app;
  await newChat(page, MODEL_FILE, { preset: 'Precise', maxTokens: 8 });

  const first = await ask(page, 'Tell me about Lily.');
  const thought = first.locator('details.think');
  await expect(thought.locator('summary')).toHaveText(/^Thought for \d+ words?$/);
  await expect(thought).not.toHaveAttribute('open');

  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  const thinking = settings.getByRole('combobox', { name: 'Thinking' });
  await expect(thinking).toHaveValue('');
  await thinking.selectOption('false');
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();

  const second = await ask(page, 'And then?');
  await expect(second.locator('details.think')).toHaveCount(0);
  await expect(second).not.toContainText('<think>');

  await page.reload();
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await expect(settings.getByRole('combobox', { name: 'Thinking' })).toHaveValue('false');
  await settings.getByRole('button', { name: 'Cancel' }).click();
});
