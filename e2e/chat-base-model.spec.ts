/**
 * Chat with a base model (browser mode, stories260K on SwiftShader: no chat template): the chat
 * says so, continues the text as written, stops at the answer length set in the chat settings,
 * and switches to a built-in template from the notice.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Locator, type Page, type TestInfo } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../src-main/engine/gpu/software-driver';
import { STORIES_260K } from '../test/support/paths';
import { startGufoServe, type GufoServe } from './support/gufo-serve';
import { collectProblems } from './support/watch-page';

test.describe.configure({ timeout: 300_000 });

let scratch: string;
let gufo: GufoServe;

test.beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-base-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  gufo = await startGufoServe({
    GUFO_HOME: join(scratch, 'home'),
    GUFO_MODELS_DIRS: models,
    VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? SWIFTSHADER_ICD,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir(),
  });
});

test.afterAll(async () => {
  await gufo?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** The answer length the test sets: a few seconds of decoding on a software GPU. */
const MAX_TOKENS = 16;
/** llama.cpp's greedy continuation of "Once upon a time" with stories260K. */
const LLAMA_CPP = ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.';

async function shot(page: Page, testInfo: TestInfo, name: string): Promise<void> {
  await page.screenshot({ path: testInfo.outputPath(`${name}.png`) });
}

/** Sends `text` and waits for its answer to end; answers the answer's text (without its statistics). */
async function ask(page: Page, text: string): Promise<{ answer: Locator; body: string }> {
  const answers = page.getByRole('article', { name: 'Assistant message' });
  const before = await answers.count();
  const message = page.getByRole('textbox', { name: 'Message' });
  await message.fill(text);
  await message.press('Enter');
  await expect(answers).toHaveCount(before + 1);
  const answer = answers.last();
  await expect(answer.getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 180_000 });
  return { answer, body: (await answer.locator('.body').textContent()) ?? '' };
}

test('a base model: the chat says it has no template, continues the text, stops at the answer length, and switches format', async ({ browser }, testInfo) => {
  const context = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await context.newPage();
  const problems = collectProblems(page);
  await page.goto(gufo.url.href);

  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Chat' }).click();
  await page.getByRole('button', { name: 'New chat' }).first().click();
  const create = page.getByRole('dialog', { name: 'New chat' });
  const select = create.getByRole('combobox', { name: 'Model' });
  await expect.poll(async () => (await select.locator('option').allTextContents()).some((t) => t.trim().startsWith('stories260K'))).toBe(true);
  await select.selectOption({ label: (await select.locator('option').allTextContents()).find((t) => t.trim().startsWith('stories260K'))!.trim() });
  await create.getByRole('radio', { name: 'Precise' }).check();
  await create.getByRole('button', { name: 'Create chat' }).click();
  await expect(create).toBeHidden();

  // The notice says the model has no template, with plain completion chosen.
  const notice = page.getByRole('note', { name: 'Base model' });
  await expect(notice).toContainText('This model has no chat template (a base model): answers continue your text.');
  const format = notice.getByRole('combobox', { name: 'Prompt format' });
  await expect(format).toHaveValue('completion');

  // The answer length, set in the chat settings (outside Advanced), with the format offered there too.
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  const maxTokens = settings.getByRole('spinbutton', { name: 'Max tokens per answer' });
  await expect(maxTokens).toBeVisible();
  await expect(maxTokens).toHaveValue('1024');
  await expect(settings.getByRole('combobox', { name: 'Prompt format' })).toHaveValue('completion');
  await expect(settings.getByRole('combobox', { name: 'Prompt format' }).locator('option')).toContainText(['Plain completion', 'ChatML template', 'Llama 2 template']);
  await maxTokens.fill(String(MAX_TOKENS));
  await shot(page, testInfo, 'chat-base-model-settings');
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();

  // Plain completion continues the user's text as llama.cpp does, and stops at 16 tokens.
  const first = await ask(page, 'Once upon a time');
  expect(first.body.trim().length).toBeGreaterThan(20);
  expect(LLAMA_CPP.startsWith(first.body.trim()), `answer ${JSON.stringify(first.body)}`).toBe(true);
  const stats = first.answer.getByRole('group', { name: 'Generation statistics' });
  await expect(stats).toContainText(`${MAX_TOKENS} tokens`);
  await expect(stats).toContainText('answer length limit');
  await shot(page, testInfo, 'chat-base-model-completion');

  // Switching to a built-in template from the notice: saved, and the notice says what it means.
  await format.selectOption({ label: 'Llama 2 template' });
  await expect(format).toHaveValue('llama2');
  await expect(notice).toContainText('it was not trained on this template');
  const second = await ask(page, 'Tell me about the dog.');
  await expect(second.answer.getByRole('group', { name: 'Generation statistics' })).toContainText(`${MAX_TOKENS} tokens`);
  await shot(page, testInfo, 'chat-base-model-llama2');

  // The choice survives a reload.
  await page.reload();
  await expect(page.getByRole('note', { name: 'Base model' }).getByRole('combobox', { name: 'Prompt format' })).toHaveValue('llama2');
  expect(problems).toEqual([]);
  await context.close();
});
