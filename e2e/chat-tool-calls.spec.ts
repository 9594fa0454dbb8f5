/**
 * Tool calls in the app's chat (browser mode): a chat on a random Qwen 3 model (its real template,
 * Hermes-style calls) holding an answer that calls a function shows the call as a "Called
 * get_weather" card with its arguments indented and the text before it as text; the composer then
 * sends the tool's result, shown as a "Tool result" card, and the model answers it. The chat's
 * tools are set as JSON in its settings, a mistake named.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect, test } from '@playwright/test';
import { databasePath } from '../src-main/node/data-dir';
import { ChatStore } from '../src-main/node/store/chats';
import { writeRandomQwen3 } from '../test/support/tool-models';
import { newChat, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 180_000 });

const MODEL_FILE = 'qwen3-tools.gguf';
/** Filled before the server starts (this hook is registered before serveStories's). */
const models: Record<string, string> = {};
let modelDir = '';
test.beforeAll(async () => {
  modelDir = mkdtempSync(join(tmpdir(), 'gufo-e2e-tool-model-'));
  models[MODEL_FILE] = join(modelDir, MODEL_FILE);
  await writeRandomQwen3(models[MODEL_FILE]);
});
test.afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

const app = serveStories({ name: 'tool-calls', models });

test('the transcript shows a tool call and its result as cards; the composer sends the result', async ({}, testInfo) => {
  const { page } = app;
  await newChat(page, MODEL_FILE, { preset: 'Precise', maxTokens: 8 });
  await expect(page).toHaveURL(/chat/);

  // The chat's tools, set as JSON in its settings: a mistake is said, not saved.
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  const toolsField = settings.getByRole('textbox', { name: 'Tools (JSON)' });
  await toolsField.fill('[{"type": "function", "function": {"name": "bad name!"}}]');
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings.getByRole('alert')).toContainText('chat setting "tools[0].function.name"');
  const tools = [
    {
      type: 'function',
      function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
    },
  ];
  await toolsField.fill(JSON.stringify(tools));
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();
  await page.getByRole('button', { name: 'Chat settings' }).click();
  await expect(toolsField).toHaveValue(JSON.stringify(tools, null, 2));
  await settings.getByRole('button', { name: 'Cancel' }).click();

  // The conversation so far, written into the app's own database as answers are.
  const db = new Database(databasePath(join(app.scratch, 'home')));
  try {
    const store = new ChatStore(db);
    const [chat] = store.list();
    const chatId = chat!.id;
    const user = store.addMessage({
      chatId,
      parentId: null,
      role: 'user',
      content: 'What is the weather in Paris?',
      status: 'done',
    });
    const call =
      '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>';
    const answer = store.addMessage({
      chatId,
      parentId: user.id,
      role: 'assistant',
      content: `Let me look that up.\n${call}`,
      status: 'done',
    });
    store.setActiveLeaf(chatId, answer.id);
  } finally {
    db.close();
  }
  await page.reload();

  const answer = page.getByRole('article', { name: 'Assistant message' }).first();
  await expect(answer).toContainText('Let me look that up.');
  await expect(answer).not.toContainText('<tool_call>');
  const card = answer.getByRole('region', { name: 'Called get_weather' });
  await expect(card).toBeVisible();
  await expect(card.locator('pre')).toHaveText('{\n  "city": "Paris",\n  "unit": "celsius"\n}');

  // The last answer called a tool: the next message may be its result.
  await page.getByRole('checkbox', { name: 'Send as tool result' }).check();
  const composer = page.getByRole('textbox', { name: 'Message' });
  await composer.fill('{"temperature": 18, "sky": "sunny"}');
  await composer.press('Enter');
  const result = page
    .getByRole('article', { name: 'Tool result message' })
    .getByRole('region', { name: 'Tool result' });
  await expect(result.locator('pre')).toHaveText('{\n  "temperature": 18,\n  "sky": "sunny"\n}');
  // The model answers the result.
  const reply = page.getByRole('article', { name: 'Assistant message' }).nth(1);
  await expect(reply.getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 120_000 });
  await expect(page.getByRole('checkbox', { name: 'Send as tool result' })).toBeHidden();
  await screenshot({ page, testInfo }, 'chat-tool-calls', { themes: ['light', 'dark'] });
});
