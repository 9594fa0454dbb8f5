import { test } from '@playwright/test';
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
import { serveStories } from './support/served-app';

// One server, one page, the steps in order: each builds on what the one before left.
test.describe.configure({ mode: 'serial', timeout: 240_000 });

const app = serveStories({
  name: 'flow',
  viewport: { width: 1280, height: 860 },
  expectOffline: true,
  expectCleanStop: true,
});

const flow = (testInfo: FlowContext['testInfo']): FlowContext => ({
  page: app.page,
  testInfo,
  modelFile: 'stories260K.gguf',
});

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
