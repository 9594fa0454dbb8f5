import { defineConfig } from '@playwright/test';

// Browsers are never downloaded here: the tests drive the system Chromium (Debian package
// `chromium`, installed by .ci/run). GUFO_CHROMIUM points elsewhere, e.g. on a Mac.
const executablePath = process.env.GUFO_CHROMIUM ?? '/usr/bin/chromium';

export default defineConfig({
  testDir: '.',
  timeout: 60_000,
  // Each spec starts its own Gufo process; keep them apart.
  workers: 1,
  reporter: 'list',
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        // Keep Chromium itself off the network, so a test sees only the page's own requests.
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
