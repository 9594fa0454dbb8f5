/**
 * MCP tools in the app's chat (browser mode): a server written with the SDK
 * (test/support/mcp/server.mjs) added in Settings › Tools shows its command line and its tools;
 * a chat on a random Qwen 3 (its real template) is given the server's tools with the tool choice
 * forced to one of them in its settings; the answer is that call, the chat asks before running it,
 * the user approves, the result shows as a card and the model answers it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { writeRandomQwen3 } from '../test/support/tool-models';
import { changeMaxTokens, newChat, openSection, screenshot } from './support/flow';
import { ROOT } from './support/gufo-serve';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 240_000 });

const MODEL_FILE = 'qwen3-mcp.gguf';
const SERVER = join(ROOT, 'test/support/mcp/server.mjs');
/** Filled before the server starts (this hook is registered before serveStories's). */
const models: Record<string, string> = {};
let modelDir = '';
test.beforeAll(async () => {
  modelDir = mkdtempSync(join(tmpdir(), 'gufo-e2e-mcp-model-'));
  models[MODEL_FILE] = join(modelDir, MODEL_FILE);
  await writeRandomQwen3(models[MODEL_FILE]);
});
test.afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

const app = serveStories({ name: 'chat-mcp', models });

test('a server added in Settings › Tools gives a chat a tool; its call is approved, run, shown and answered', async ({}, testInfo) => {
  const { page } = app;
  await openSection(page, 'Settings');
  const form = page.getByRole('form', { name: 'Add an MCP server' });
  await form.getByRole('textbox', { name: 'Name' }).fill('tests');
  await form.getByRole('textbox', { name: 'Entry (JSON)' }).fill('{"command": ');
  await form.getByRole('button', { name: 'Add server' }).click();
  await expect(page.getByRole('alert')).toContainText('The entry is not JSON');
  await form
    .getByRole('textbox', { name: 'Entry (JSON)' })
    .fill(JSON.stringify({ command: process.execPath, args: [SERVER] }));
  await form.getByRole('button', { name: 'Add server' }).click();
  const server = page.getByRole('list', { name: 'MCP servers' }).getByRole('listitem', { name: 'tests' });
  await expect(server).toContainText(`${process.execPath} ${SERVER}`);
  await expect(server).toContainText('ready: 7 tools', { timeout: 30_000 });
  await screenshot({ page, testInfo }, 'settings-tools');

  // Room for a call with the whitespace a random model writes between its JSON tokens.
  await newChat(page, MODEL_FILE, { preset: 'Precise', maxTokens: 200 });
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  await settings.getByRole('checkbox', { name: /^tests/ }).check();
  await settings.getByRole('combobox', { name: 'Tool choice' }).selectOption({ label: 'Must call forecast' });
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();

  const composer = page.getByRole('textbox', { name: 'Message' });
  await composer.fill('What about tomorrow?');
  await composer.press('Enter');
  // The answer is the call the tool choice asks for, its arguments held to the tool's schema.
  const call = page.getByRole('article', { name: 'Assistant message' }).first().getByRole('region', {
    name: 'Called forecast',
  });
  await expect(call).toBeVisible({ timeout: 180_000 });
  const approval = page.getByRole('region', { name: 'Tool call forecast' });
  await expect(approval).toContainText('Run forecast from tests?');
  await expect(approval.locator('pre')).toHaveText(/^\{\n {2}"unit": "(celsius|fahrenheit)"\n\}$/);
  await screenshot({ page, testInfo }, 'chat-mcp-asking', { themes: ['light', 'dark'] });
  // A short answer to the result: settings apply from the next answer.
  await changeMaxTokens(page, 8);

  await approval.getByRole('button', { name: 'Run' }).click();
  const result = page
    .getByRole('article', { name: 'Tool result message' })
    .getByRole('region', { name: 'Tool result' });
  await expect(result).toContainText(/tomorrow: 21 degrees (celsius|fahrenheit)/);
  await expect(approval).toBeHidden();
  // The model answers the result.
  const reply = page.getByRole('article', { name: 'Assistant message' }).nth(1);
  await expect(reply.getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 180_000 });
  await screenshot({ page, testInfo }, 'chat-mcp-answered', { themes: ['light', 'dark'] });
});
