/**
 * A full context never fails an answer silently (browser mode, stories260K on SwiftShader): the
 * chat states its context overflow policy (truncate the middle by default) beside the context
 * meter and in its settings; an answer whose conversation outgrew the context says how many
 * earliest messages were left out, also after a reload; with "Stop at the limit" an answer that
 * fills the context says so and what to do.
 */
import { expect, test, type Page } from '@playwright/test';
import { ask, chooseModel, openSection, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 300_000 });

const app = serveStories({ name: 'context' });

/** Starts a chat with stories260K, greedy, with this context and answer length. */
async function newSmallChat(page: Page, contextSize: number, maxTokens: number, overflow?: string): Promise<void> {
  await openSection(page, 'Chat');
  await page.getByRole('button', { name: 'New chat' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New chat' });
  await chooseModel(dialog.getByRole('combobox', { name: 'Model' }), 'stories260K.gguf');
  await dialog.getByRole('radio', { name: 'Precise' }).check();
  await dialog.getByRole('spinbutton', { name: 'Context size (tokens)' }).fill(String(contextSize));
  await dialog.getByRole('spinbutton', { name: 'Max tokens per answer' }).fill(String(maxTokens));
  const policy = dialog.getByRole('combobox', { name: 'When the context is full' });
  // The default is stated where it is chosen.
  await expect(policy).toHaveValue('truncate-middle');
  await expect(policy.locator('option:checked')).toHaveText('Truncate the middle (default)');
  if (overflow) await policy.selectOption({ label: overflow });
  await dialog.getByRole('button', { name: 'Create chat' }).click();
  await expect(dialog).toBeHidden();
}

test('the chat states its context policy, says which messages were left out, and says when the context is full', async ({}, testInfo) => {
  const { page } = app;
  await newSmallChat(page, 96, 80);
  const bar = page.locator('.context');
  await expect(bar).toContainText('When the context is full: truncate the middle');

  // The first answer fits beside its question: nothing left out.
  const first = await ask(page, 'Once upon a time');
  await expect(first.getByRole('note')).toHaveCount(0);

  // The next question no longer fits with the first exchange and room to answer: it is left out, and the answer says so.
  const second = await ask(page, 'Tom had a red ball.');
  await expect(second.getByRole('note').first()).toHaveText(
    '2 earliest messages left out to fit the 96-token context.',
  );
  await expect(bar).toContainText('2 earlier messages are left out of the prompt.');
  // On one line, the policy in full as its tooltip (issue #30 item 15); at the end, no "↓ Latest".
  const leftOut = bar.getByRole('status').filter({ hasText: 'left out of the prompt' });
  const lineHeight = await leftOut.evaluate((p) => parseFloat(getComputedStyle(p).lineHeight));
  expect((await leftOut.boundingBox())!.height).toBeLessThan(1.5 * lineHeight);
  await expect(leftOut).toHaveAttribute('title', /.{40}/);
  await expect(page.getByRole('button', { name: 'Scroll to the latest message' })).toHaveCount(0);
  // Nothing was deleted.
  await expect(page.getByRole('article', { name: 'User message' })).toHaveCount(2);
  await screenshot({ page, testInfo }, 'chat-context-left-out', { themes: ['light', 'dark'] });

  // Stored with the answer: a reload shows it again.
  await page.reload();
  await expect(page.getByRole('article', { name: 'Assistant message' }).nth(1).getByRole('note').first()).toHaveText(
    '2 earliest messages left out to fit the 96-token context.',
  );

  // The policy is a chat setting, described where it is chosen.
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const settings = page.getByRole('dialog', { name: 'Chat settings' });
  const policy = settings.getByRole('combobox', { name: 'When the context is full' });
  await expect(policy).toHaveValue('truncate-middle');
  await policy.selectOption({ label: 'Rolling window' });
  await expect(settings).toContainText('Keep the system prompt and leave out the oldest messages');
  await screenshot({ page, testInfo }, 'chat-context-settings');
  await settings.getByRole('button', { name: 'Save' }).click();
  await expect(settings).toBeHidden();
  await expect(page.locator('.context')).toContainText('When the context is full: rolling window');

  // "↓ Latest" shows in a chat scrolled up, and goes once the window is tall enough for the whole chat (issue #30 item 15).
  const latest = page.getByRole('button', { name: 'Scroll to the latest message' });
  const scrolls = () => page.locator('.scroller').evaluate((s) => s.scrollHeight > s.clientHeight);
  await page.setViewportSize({ width: 1400, height: 420 });
  await page.locator('.scroller').evaluate((scroller) => scroller.scrollTo(0, 0));
  await expect(latest).toBeVisible({ timeout: 10_000 });
  await page.setViewportSize({ width: 1400, height: 1800 });
  await expect.poll(scrolls).toBe(false);
  await expect(latest).toHaveCount(0);
  await page.setViewportSize({ width: 1400, height: 900 });

  // "Stop at the limit": an answer that fills the context ends there, and says so and what to do.
  await newSmallChat(page, 48, 48, 'Stop at the limit');
  await expect(page.locator('.context')).toContainText('When the context is full: stop at the limit');
  const full = await ask(page, 'Once upon a time');
  await expect(full.getByRole('note')).toHaveText(
    /^The context is full \(48 tokens\): the answer stops here\. Raise the context size, start a new chat, or choose a policy/,
  );
  await expect(full.getByRole('group', { name: 'Generation statistics' })).toContainText('the context is full');
  await screenshot({ page, testInfo }, 'chat-context-full');

  // A conversation that no longer fits is refused with the sizes, never dropped silently.
  const message = page.getByRole('textbox', { name: 'Message' });
  await message.fill('And then?');
  await message.press('Enter');
  await expect(page.getByRole('article', { name: 'Assistant message' })).toHaveCount(2);
  await expect(page.getByRole('article', { name: 'Assistant message' }).last().getByRole('alert')).toContainText(
    /the conversation no longer fits this chat's context: \d+ tokens with the system prompt, in a context of 48/,
  );
});
