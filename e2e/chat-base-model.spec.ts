/**
 * Chat with a base model (browser mode, stories260K on SwiftShader: no chat template): the chat
 * says so, continues the text as written, stops at the answer length set in the chat settings,
 * and switches to a built-in template from the notice.
 */
import { expect, test } from '@playwright/test';
import { answerText, ask, newChat, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 300_000 });

const app = serveStories({ name: 'base' });

/** The answer length the test sets: a few seconds of decoding on a software GPU. */
const MAX_TOKENS = 16;
/** llama.cpp's greedy continuation of "Once upon a time" with stories260K. */
const LLAMA_CPP =
  ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.';

test('a base model: the chat says it has no template, continues the text, stops at the answer length, and switches format', async ({}, testInfo) => {
  const { page } = app;
  await newChat(page, 'stories260K.gguf', { preset: 'Precise' });

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
  await expect(settings.getByRole('combobox', { name: 'Prompt format' }).locator('option')).toContainText([
    'Plain completion',
    'ChatML template',
    'Llama 2 template',
  ]);
  await maxTokens.fill(String(MAX_TOKENS));
  await screenshot({ page, testInfo }, 'chat-base-model-settings');
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();

  // Plain completion continues the user's text as llama.cpp does, and stops at 16 tokens.
  const first = await ask(page, 'Once upon a time');
  const body = await answerText(first);
  expect(body.trim().length).toBeGreaterThan(20);
  expect(LLAMA_CPP.startsWith(body.trim()), `answer ${JSON.stringify(body)}`).toBe(true);
  const stats = first.getByRole('group', { name: 'Generation statistics' });
  await expect(stats).toContainText(`${MAX_TOKENS} tokens`);
  await expect(stats).toContainText('answer length limit');
  await screenshot({ page, testInfo }, 'chat-base-model-completion');

  // Switching to a built-in template from the notice: saved, and the notice says what it means.
  await format.selectOption({ label: 'Llama 2 template' });
  await expect(format).toHaveValue('llama2');
  await expect(notice).toContainText('it was not trained on this template');
  const second = await ask(page, 'Tell me about the dog.');
  await expect(second.getByRole('group', { name: 'Generation statistics' })).toContainText(`${MAX_TOKENS} tokens`);
  await screenshot({ page, testInfo }, 'chat-base-model-llama2');

  // The choice survives a reload.
  await page.reload();
  await expect(
    page.getByRole('note', { name: 'Base model' }).getByRole('combobox', { name: 'Prompt format' }),
  ).toHaveValue('llama2');
});
