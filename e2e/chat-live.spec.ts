/**
 * Live numbers in the chat (browser mode, stories260K on SwiftShader): "Loading model…" while the
 * model loads, the context bar and the speed moving while the answer streams, and the header's
 * loaded-model indicator with its GPU memory and Unload.
 */
import { expect, test, type Page } from '@playwright/test';
import { newChat, screenshot } from './support/flow';
import { serveStories } from './support/served-app';

test.describe.configure({ timeout: 240_000 });

const app = serveStories({ name: 'live' });

/** What the page showed of the last answer, sampled every 20 ms in the page itself (no round trips to miss it). */
interface Sample {
  busy: boolean;
  meter: number | null;
  loading: string | null;
  live: string | null;
}

async function startSampling(page: Page): Promise<void> {
  await page.evaluate(() => {
    const samples: Sample[] = [];
    (window as unknown as { liveSamples: Sample[] }).liveSamples = samples;
    setInterval(() => {
      const answer = [...document.querySelectorAll('article[aria-label="Assistant message"]')].at(-1);
      const meter = document.querySelector('meter');
      samples.push({
        busy: answer?.getAttribute('aria-busy') === 'true',
        meter: meter ? Number(meter.getAttribute('value')) : null,
        loading: answer?.querySelector('.loading')?.textContent?.trim() ?? null,
        live: answer?.querySelector('[aria-label="Live statistics"]')?.textContent ?? null,
      });
    }, 20);
  });
}

const samplesOf = (page: Page) => page.evaluate(() => (window as unknown as { liveSamples: Sample[] }).liveSamples);

test('the chat shows the model loading, live numbers while streaming, and the loaded model with Unload', async ({}, testInfo) => {
  const { page } = app;
  // Long enough to stream for a while on a software GPU.
  await newChat(page, 'stories260K.gguf', { preset: 'Precise', maxTokens: 400 });

  const loaded = page.getByRole('region', { name: 'Loaded models' });
  await expect(loaded).toBeHidden(); // nothing on the GPU yet
  const meter = page.locator('meter');
  const before = Number(await meter.getAttribute('value'));

  await startSampling(page);
  const message = page.getByRole('textbox', { name: 'Message' });
  await message.fill('Once upon a time');
  await message.press('Enter');
  const answer = page.getByRole('article', { name: 'Assistant message' }).last();

  // The first answer starts the engine and loads the model: said, with the share uploaded once known.
  await expect(answer.getByRole('status').filter({ hasText: 'Loading model…' })).toBeVisible({ timeout: 60_000 });
  await screenshot({ page, testInfo }, 'chat-loading-model');
  // Then the speed so far, while the answer is still being written.
  const live = answer.getByRole('group', { name: 'Live statistics' });
  await expect(live).toContainText('tok/s so far', { timeout: 120_000 });
  await screenshot({ page, testInfo }, 'chat-live-numbers');
  await expect(answer.getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 120_000 });
  await expect(answer).toHaveAttribute('aria-busy', 'false');
  await expect(live).toBeHidden();

  const samples = await samplesOf(page);
  const streaming = samples.filter((s) => s.busy);
  expect(
    streaming.some((s) => s.loading !== null && /^Loading model…/.test(s.loading)),
    'a "Loading model…" state while streaming',
  ).toBe(true);
  // The context bar moved before the answer ended, more than once: it counts the tokens as they come.
  const meterWhileStreaming = new Set(streaming.map((s) => s.meter).filter((m) => m !== null && m > before));
  expect(meterWhileStreaming.size, `context values while streaming (from ${before})`).toBeGreaterThanOrEqual(2);
  expect(
    streaming.some((s) => s.live?.includes('tok/s so far')),
    'tok/s while streaming',
  ).toBe(true);

  // The header shows the loaded model and the GPU memory it holds; Unload frees it.
  await expect(loaded).toContainText('stories260K');
  await expect(loaded).toContainText(/\d+(\.\d+)? (KiB|MiB|GiB) on GPU/);
  await screenshot({ page, testInfo }, 'loaded-model');
  await loaded.getByRole('button', { name: 'Unload stories260K' }).click();
  await expect(loaded).toBeHidden();
  await screenshot({ page, testInfo }, 'model-unloaded');

  // The next answer loads it again.
  const answers = page.getByRole('article', { name: 'Assistant message' });
  const answered = await answers.count();
  await message.fill('The end');
  await message.press('Enter');
  // Wait for the new answer, not the last one already on screen.
  await expect(answers).toHaveCount(answered + 1);
  await expect(loaded).toContainText('stories260K', { timeout: 120_000 });
  // No need to wait for the whole (long) answer.
  await page.getByRole('button', { name: 'Stop generating' }).click();
  await expect(answers.last().getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 60_000 });
});
