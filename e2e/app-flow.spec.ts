import { test } from '@playwright/test';
import { appFlowTests } from './support/flow';
import { serveStories } from './support/served-app';

// One server, one page, the steps in order: each builds on what the one before left.
test.describe.configure({ mode: 'serial', timeout: 240_000 });

const app = serveStories({
  name: 'flow',
  viewport: { width: 1280, height: 860 },
  expectOffline: true,
  expectCleanStop: true,
});

appFlowTests('the flow in browser mode', () => app.page);
