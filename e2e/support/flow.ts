/**
 * The app's main flow, one step per screen, written against the page the user sees. The same
 * steps (appFlowTests) run in browser mode (app-flow.spec.ts) and in the Electron window
 * (electron.spec.ts). Each step saves a screenshot of its screen as a test artifact.
 */
import { expect, test, type Locator, type Page, type TestInfo } from '@playwright/test';
import { dequantizeRange } from '../../src-main/core/dequantize';
import { openGguf } from '../../src-main/node/gguf-io';
import { STORIES_260K } from '../../test/support/paths';

export interface FlowContext {
  page: Page;
  testInfo: TestInfo;
  /** The file name of the model the flow uses (stories260K.gguf), as the library shows its path. */
  modelFile: string;
}

/**
 * The flow's steps as the calling spec's tests, in order, under `where` (the tests are reported
 * from this file, so it says which spec runs them), on the page `page()` gives once the spec's own
 * set-up has opened it (a served page, the Electron window) with stories260K in its library: each
 * step builds on what the one before left, so the spec runs them serially.
 */
export function appFlowTests(where: string, page: () => Page): void {
  const flow = (testInfo: TestInfo): FlowContext => ({ page: page(), testInfo, modelFile: 'stories260K.gguf' });
  test.describe(where, () => {
    test('the library lists the models of the configured folder', async ({}, testInfo) => {
      await libraryListsTheModel(flow(testInfo));
    });
    test("the inspector shows stories260K's tensors and a block of values", async ({}, testInfo) => {
      await inspectorShowsTensorsAndABlock(flow(testInfo), firstValuesOf(STORIES_260K, 'blk.0.attn_q.weight', 8));
    });
    test('a chat streams an answer, stops, regenerates into a branch and survives a reload', async ({}, testInfo) => {
      await chatStreamsStopsRegeneratesAndReloads(flow(testInfo));
    });
    test('a benchmark runs from the UI and is listed', async ({}, testInfo) => {
      await benchmarkRunsAndIsListed(flow(testInfo));
    });
    test('an export to Q8_0 appears in the library', async ({}, testInfo) => {
      await exportToQ8JoinsTheLibrary(flow(testInfo));
    });
  });
}

export interface ScreenshotOptions {
  /** Saves one `<name>-<theme>.png` per theme, then goes back to light; one `<name>.png` as it is, without. */
  themes?: readonly ('light' | 'dark')[];
  /** The whole document; the window by default, as screens scroll inside the app's own content area. */
  fullPage?: boolean;
}

/** Saves the screen in the test's output folder (test-results/…), kept as an artifact. */
export async function screenshot(
  { page, testInfo }: Pick<FlowContext, 'page' | 'testInfo'>,
  name: string,
  { themes, fullPage = false }: ScreenshotOptions = {},
): Promise<void> {
  if (!themes) return void (await page.screenshot({ path: testInfo.outputPath(`${name}.png`), fullPage }));
  for (const colorScheme of themes) {
    await page.emulateMedia({ colorScheme });
    await page.screenshot({ path: testInfo.outputPath(`${name}-${colorScheme}.png`), fullPage });
  }
  await page.emulateMedia({ colorScheme: 'light' });
}

export async function openSection(page: Page, label: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: label }).click();
}

/** Picks the option of a model select for `fileName`: the model's name is the file's, without .gguf. */
export async function chooseModel(select: Locator, fileName: string): Promise<void> {
  const name = fileName.replace(/\.gguf$/i, '');
  const names = (text: string) => text.trim() === name || text.trim().startsWith(`${name} · `);
  await expect.poll(async () => (await select.locator('option').allTextContents()).filter(names).length).toBe(1); // the models have loaded
  const labels = await select.locator('option').allTextContents();
  const label = labels.find(names);
  expect(label, `an option for ${fileName} among ${JSON.stringify(labels)}`).toBeDefined();
  await select.selectOption({ label: label! });
}

function modelRow(page: Page, fileName: string): Locator {
  return page
    .getByRole('table', { name: 'Models' })
    .getByRole('row')
    .filter({ hasText: `/${fileName}` });
}

async function libraryListsTheModel(flow: FlowContext): Promise<void> {
  const { page, modelFile } = flow;
  await openSection(page, 'Library');
  const row = modelRow(page, modelFile);
  await expect(row).toBeVisible();
  await expect(row.getByRole('cell', { name: 'llama', exact: true })).toBeVisible();
  await expect(row).toContainText('293K'); // 292,800 parameters
  await screenshot(flow, 'library');
}

/** Opens the inspector of the library's `fileName` on the tensor `tensor`'s block view. */
async function inspectTensor(page: Page, fileName: string, tensor: string): Promise<Locator> {
  await openSection(page, 'Library');
  await modelRow(page, fileName)
    .getByRole('button', { name: /^Open / })
    .click();
  await page.getByRole('tablist', { name: 'Inspector sections' }).getByRole('tab', { name: 'Tensors' }).click();
  const table = page.getByRole('table', { name: 'Tensors' });
  await expect(table.getByRole('button', { name: 'blk.4.ffn_down.weight' })).toBeVisible();
  await table.getByRole('button', { name: tensor, exact: true }).click();
  await expect(page.getByRole('heading', { name: `Tensor ${tensor}` })).toBeVisible();
  const block = page.getByRole('region', { name: 'Block view' });
  await expect(block).toBeVisible();
  await block.scrollIntoViewIfNeeded();
  return block;
}

/** The first `count` values of a tensor, decoded from the file by Gufo's core (bit-exact with llama.cpp). */
function firstValuesOf(path: string, tensor: string, count: number): number[] {
  const { gguf, file } = openGguf(path);
  try {
    return Array.from(dequantizeRange(gguf, gguf.tensor(tensor)!, 0, count));
  } finally {
    file.close();
  }
}

/** stories260K's tensors, and the first block of one, whose values are the file's own floats (F32). */
async function inspectorShowsTensorsAndABlock(flow: FlowContext, firstValues: number[]): Promise<void> {
  const block = await inspectTensor(flow.page, flow.modelFile, 'blk.0.attn_q.weight');
  const values = await block.getByRole('table', { name: 'Values' }).locator('td .value').allTextContents();
  expect(values.length).toBeGreaterThan(0);
  expect(values.slice(0, 8).map((text) => Math.fround(Number(text.replace(/^value\s*/, ''))))).toEqual(
    firstValues.slice(0, 8),
  );
  await screenshot(flow, 'inspector');
}

export interface ChatOutcome {
  /** The assistant messages of the active branch, after the reload. */
  answers: string[];
}

export interface NewChatOptions {
  /** The sampling preset's radio ("Precise"); the dialog's default without. */
  preset?: string;
  /** "Max tokens" in the dialog's Advanced part. */
  maxTokens?: number;
  /** The K cache type picked, after checking that "Default (<defaultKv>)" is the dialog's choice. */
  kvCacheK?: { type: string; defaultKv: string };
}

/** Opens Chat and creates a chat on the library's `fileName` through the New chat dialog. */
export async function newChat(
  page: Page,
  fileName: string,
  { preset, maxTokens, kvCacheK }: NewChatOptions = {},
): Promise<void> {
  await openSection(page, 'Chat');
  await page.getByRole('button', { name: 'New chat' }).first().click();
  const dialog = page.getByRole('dialog', { name: 'New chat' });
  await chooseModel(dialog.getByRole('combobox', { name: 'Model' }), fileName);
  if (preset) await dialog.getByRole('radio', { name: preset }).check();
  if (maxTokens !== undefined) await setMaxTokens(dialog, maxTokens);
  if (kvCacheK) {
    const k = dialog.getByRole('combobox', { name: 'K cache type' });
    await expect(k.locator('option:checked')).toHaveText(`Default (${kvCacheK.defaultKv})`);
    await k.selectOption(kvCacheK.type);
  }
  await dialog.getByRole('button', { name: 'Create chat' }).click();
  await expect(dialog).toBeHidden();
}

/** The text of an answer, without its buttons and statistics. */
export async function answerText(answer: Locator): Promise<string> {
  return (await answer.locator('.body').textContent()) ?? '';
}

/** Sends `text` in the open chat and waits for its answer to end (its statistics shown); answers that answer. */
export async function ask(page: Page, text: string): Promise<Locator> {
  const answers = page.getByRole('article', { name: 'Assistant message' });
  const before = await answers.count();
  const message = page.getByRole('textbox', { name: 'Message' });
  await message.fill(text);
  await message.press('Enter');
  await expect(answers).toHaveCount(before + 1);
  const answer = answers.last();
  await expect(answer.getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 180_000 });
  return answer;
}

/** A chat streams an answer, stops mid-stream, regenerates into a branch, and survives a reload. */
async function chatStreamsStopsRegeneratesAndReloads(flow: FlowContext): Promise<void> {
  const { page, modelFile } = flow;
  await newChat(page, modelFile, { preset: 'Precise', maxTokens: SHORT_ANSWER });

  const message = page.getByRole('textbox', { name: 'Message' });
  const answers = page.getByRole('article', { name: 'Assistant message' });

  // 1. An answer streams in and ends with its statistics.
  await message.fill('Once upon a time');
  await message.press('Enter');
  await expect(answers).toHaveCount(1);
  await expect(answers.first().getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 120_000 });
  await expect(answers.first()).toHaveAttribute('aria-busy', 'false');
  const firstAnswer = await answerText(answers.first());
  expect(firstAnswer.length).toBeGreaterThan(20);

  // 2. Stop works mid-stream: the answer keeps what was written and says it was stopped.
  await changeMaxTokens(page, LONG_ANSWER);
  await message.fill('Tell me a long story about a dog.');
  await message.press('Enter');
  await expect(answers).toHaveCount(2);
  const streaming = answers.nth(1);
  await expect(streaming).toHaveAttribute('aria-busy', 'true');
  await expect.poll(async () => (await answerText(streaming)).length, { timeout: 60_000 }).toBeGreaterThan(40);
  await page.getByRole('button', { name: 'Stop generating' }).click();
  await expect(streaming).toContainText('Stopped');
  await expect(page.getByRole('button', { name: 'Send' })).toBeVisible();
  await screenshot(flow, 'chat-stopped');

  // 3. Regenerate makes a second version of the last answer, next to the first.
  await changeMaxTokens(page, SHORT_ANSWER);
  await page.getByRole('button', { name: 'Regenerate' }).click();
  const versions = page.getByRole('group', { name: 'Versions of this message' });
  await expect(versions).toContainText('2 / 2');
  await expect(answers.nth(1).getByRole('group', { name: 'Generation statistics' })).toBeVisible({ timeout: 120_000 });
  const regenerated = await answerText(answers.nth(1));
  await screenshot(flow, 'chat');

  // 4. A reload shows the same history, both versions kept.
  await page.reload();
  await expect(answers).toHaveCount(2);
  expect(await answerText(answers.first())).toBe(firstAnswer);
  expect(await answerText(answers.nth(1))).toBe(regenerated);
  await expect(versions).toContainText('2 / 2');
  await versions.getByRole('button', { name: 'Previous version' }).click();
  await expect(versions).toContainText('1 / 2');
  await expect(answers.nth(1)).toContainText('Stopped');
}

/** Answers short enough for a software GPU, and one long enough to be stopped midway. */
const SHORT_ANSWER = 40;
const LONG_ANSWER = 2000;

/** Sets "Max tokens" in the Advanced part of a chat's settings fields. */
async function setMaxTokens(dialog: Locator, tokens: number): Promise<void> {
  await dialog.getByText('Advanced', { exact: true }).click();
  await dialog.getByRole('spinbutton', { name: 'Max tokens' }).fill(String(tokens));
}

/** Sets the open chat's "Max tokens" through its settings dialog. */
export async function changeMaxTokens(page: Page, tokens: number): Promise<void> {
  await page.getByRole('button', { name: 'Chat settings' }).click();
  const dialog = page.getByRole('dialog', { name: 'Chat settings' });
  await setMaxTokens(dialog, tokens);
  await dialog.getByRole('button', { name: 'Save' }).click();
  await expect(dialog).toBeHidden();
}

async function benchmarkRunsAndIsListed(flow: FlowContext): Promise<void> {
  const { page, modelFile } = flow;
  await openSection(page, 'Benchmarks');
  const form = page.getByRole('form', { name: 'Run a benchmark' });
  await chooseModel(form.getByRole('combobox', { name: 'Model' }), modelFile);
  await form.getByRole('spinbutton', { name: 'Prompt tokens' }).fill('32');
  await form.getByRole('spinbutton', { name: 'Generated tokens' }).fill('16');
  await form.getByRole('button', { name: 'Run benchmark' }).click();
  const results = page.getByRole('table', { name: 'Benchmark results' });
  await expect(results.getByRole('row')).toHaveCount(2, { timeout: 120_000 }); // header + the run
  const row = results.getByRole('row').nth(1);
  await expect(row).toContainText(modelFile.replace(/\.gguf$/i, '')); // the model's name is its file's
  await expect(row).toContainText(/tok\/s|\d/);
  // One run so far: its decode speed stands in for the chart over time.
  await expect(page.getByText(/^\s*Decode speed:/)).toContainText('tok/s');
  await screenshot(flow, 'benchmarks');
}

/** How long the quality report after an export may take: two models over the built-in text on a software GPU. */
const QUALITY_REPORT_MS = 300_000;

/**
 * An export to Q8_0 joins the library; the quality report that follows it shows KL < 1e-3 next
 * to both files' size and speed; its first block shows d and codes that make its values, and its
 * tensor error against the source is measured.
 */
async function exportToQ8JoinsTheLibrary(flow: FlowContext): Promise<void> {
  const { page, modelFile, testInfo } = flow;
  testInfo.setTimeout(testInfo.timeout + QUALITY_REPORT_MS);
  await openSection(page, 'Export');
  const form = page.getByRole('form', { name: 'Export a model' });
  await chooseModel(form.getByRole('combobox', { name: 'Source model' }), modelFile);
  await form.getByRole('radiogroup', { name: 'Target type' }).getByRole('radio', { name: 'Q8_0', exact: true }).check();
  await expect(form.getByRole('combobox', { name: 'Quality report after the export' })).toHaveValue('builtin');
  await form.getByRole('button', { name: 'Export' }).click();
  await expect(page.getByRole('link', { name: 'Open in inspector' })).toBeVisible({ timeout: 120_000 });
  await expect(page.getByRole('table', { name: 'Past exports' })).toContainText('Q8_0');

  const exported = modelFile.replace(/\.gguf$/, '-Q8_0.gguf');
  const comparison = page.getByRole('table', { name: 'Source vs export' });
  const exportRow = comparison.getByRole('row').filter({ hasText: `Q8_0 export ${exported}` });
  // Columns after the file: size, decode, mean KL, p99 KL, same top token, perplexity.
  const meanKl = exportRow.getByRole('cell').nth(2);
  await expect(meanKl).not.toHaveText('—', { timeout: QUALITY_REPORT_MS });
  const kl = Number(await meanKl.textContent());
  expect(kl > 0 && kl < 1e-3, `mean KL ${kl}`).toBe(true);
  expect(parseFloat((await exportRow.getByRole('cell').nth(4).textContent()) ?? '')).toBeGreaterThanOrEqual(90); // same top token, %
  // The source's decode speed from the benchmark step, next to it.
  await expect(comparison.getByRole('row').filter({ hasText: `Source ${modelFile}` })).toContainText('tok/s');
  await screenshot(flow, 'export');

  await openSection(page, 'Library');
  await expect(modelRow(page, exported)).toBeVisible();

  const block = await inspectTensor(page, exported, 'blk.0.attn_q.weight');
  const fields = block.getByRole('table', { name: 'Block fields' });
  const d = Number(
    await fields
      .getByRole('row')
      .filter({ has: page.getByRole('rowheader', { name: 'd', exact: true }) })
      .getByRole('cell')
      .last()
      .textContent(),
  );
  const cells = block.getByRole('table', { name: 'Codes and values' }).locator('td');
  const first = await cells.first().textContent();
  const [, code, value] = /code\s*(-?\d+)\s*value\s*(\S+)/.exec(first ?? '') ?? [];
  expect(Number.isFinite(d) && d !== 0, `d = ${d}`).toBe(true);
  // Q8_0: value = d × code, in f32.
  expect(Math.fround(Number(value))).toBe(Math.fround(Math.fround(d) * Number(code)));
  await screenshot(flow, 'inspector-q8_0');

  // Its tensor error against the source it was exported from: Q8_0 keeps about 46 dB.
  await page.getByRole('tablist', { name: 'Inspector sections' }).getByRole('tab', { name: 'Tensor error' }).click();
  const panel = page.getByRole('region', { name: 'Tensor error' });
  await expect(panel.getByRole('combobox', { name: 'Compare with' })).toHaveValue(/\d+/);
  await panel.getByRole('button', { name: 'Measure tensor error' }).click();
  await expect(panel.getByRole('img', { name: /^SNR per layer/ })).toBeVisible({ timeout: 60_000 });
  const total = panel.getByRole('table', { name: 'Error by role' }).getByRole('row', { name: /^Whole model/ });
  const snr = parseFloat((await total.getByRole('cell').last().textContent()) ?? '');
  expect(snr, 'whole-model SNR in dB').toBeGreaterThan(40);
  await screenshot(flow, 'inspector-tensor-error');
}
