import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../src-main/engine/gpu/software-driver';
import { STORIES_260K } from '../test/support/paths';
import {
  benchmarkRunsAndIsListed,
  chatStreamsStopsRegeneratesAndReloads,
  exportToQ8JoinsTheLibrary,
  firstValuesOf,
  inspectorShowsTensorsAndABlock,
  libraryListsTheModel,
  type FlowContext,
} from './support/flow';
import { startGufoServe, type GufoServe } from './support/gufo-serve';
import { collectProblems, watchOffsiteRequests } from './support/watch-page';

// One server, one page, the steps in order: each builds on what the one before left.
test.describe.configure({ mode: 'serial', timeout: 240_000 });

let scratch: string;
let gufo: GufoServe;
let context: BrowserContext;
let page: Page;
let offsite: string[];
let problems: string[];

test.beforeAll(async ({ browser }) => {
  scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-flow-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  copyFileSync(STORIES_260K, join(models, 'stories260K.gguf'));
  gufo = await startGufoServe({
    GUFO_HOME: join(scratch, 'home'),
    GUFO_MODELS_DIRS: models,
    // The engine's GPU here is SwiftShader, as in the unit tests.
    VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? SWIFTSHADER_ICD,
    XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir(),
  });
  context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  offsite = watchOffsiteRequests(context, gufo.url.host);
  page = await context.newPage();
  problems = collectProblems(page);
  await page.goto(gufo.url.href);
});

test.afterAll(async () => {
  await context?.close();
  expect(await gufo?.stop(), 'gufo serve stops cleanly on SIGTERM').toBe(0);
  rmSync(scratch, { recursive: true, force: true });
});

test.afterEach(() => {
  expect(offsite, 'requests that left 127.0.0.1 (Gufo is offline)').toEqual([]);
  expect(problems, 'console errors, warnings and page errors').toEqual([]);
});

const flow = (testInfo: FlowContext['testInfo']): FlowContext => ({ page, testInfo, modelFile: 'stories260K.gguf' });

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
