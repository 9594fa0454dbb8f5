import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { expect, test } from '@playwright/test';

const root = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(`${root}/package.json`, 'utf8')) as { version: string };

let gufo: ChildProcess;
let url: URL;

test.beforeAll(async () => {
  gufo = spawn(process.execPath, ['bin/gufo.mjs', 'serve', '--port', '0'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  // The first line on stdout is the address, exactly; logs go to stderr.
  const lines = createInterface({ input: gufo.stdout! });
  const [first] = await Promise.race([
    new Promise<string[]>((resolve) => lines.once('line', (line) => resolve([line]))),
    new Promise<never>((_, reject) => gufo.once('exit', (code) => reject(new Error(`gufo serve exited (${code})`)))),
  ]);
  const match = /^Gufo is running at (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]+)$/.exec(first ?? '');
  expect(match, `first stdout line: ${first}`).not.toBeNull();
  url = new URL(match![1]!);
});

test.afterAll(async () => {
  if (gufo.exitCode !== null) return;
  const exited = new Promise<number | null>((resolve) => gufo.once('exit', resolve));
  gufo.kill('SIGTERM');
  expect(await exited, 'gufo serve stops cleanly on SIGTERM').toBe(0);
});

/** Fails the page's test on any request that leaves the Gufo server (Gufo is offline). */
async function stayOnGufo(page: import('@playwright/test').Page): Promise<string[]> {
  const offsite: string[] = [];
  await page.context().route('**/*', (route) => {
    const target = new URL(route.request().url());
    if (target.host === url.host) return route.continue();
    offsite.push(target.href);
    return route.abort('blockedbyclient');
  });
  return offsite;
}

/** Console errors and warnings (CSP violations among them) and uncaught exceptions. */
function collectProblems(page: import('@playwright/test').Page): string[] {
  const problems: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') problems.push(message.text());
  });
  page.on('pageerror', (error) => problems.push(error.message));
  return problems;
}

test('shows the app shell with the real version, in browser mode', async ({ page }) => {
  const offsite = await stayOnGufo(page);
  const problems = collectProblems(page);

  await page.goto(url.href);

  await expect(page.getByRole('heading', { level: 1, name: 'Gufo' })).toBeVisible();
  const nav = page.getByRole('navigation', { name: 'Sections' });
  for (const section of ['Library', 'Inspector', 'Chat', 'Benchmarks', 'Export']) {
    await expect(nav.getByRole('button', { name: section })).toBeVisible();
  }
  await expect(page.locator('dt:text-is("Version") + dd')).toHaveText(version);
  await expect(page.locator('dt:text-is("Mode") + dd')).toHaveText('browser');
  await expect(page.locator('dt:text-is("Platform") + dd')).toHaveText(process.platform);

  expect(offsite, 'requests that left 127.0.0.1').toEqual([]);
  expect(problems, 'console errors, warnings and page errors').toEqual([]);
});

test('refuses API calls without the token', async ({ page, request }) => {
  const response = await request.post(new URL('/api/appInfo', url).href, { data: [] });
  expect(response.status()).toBe(401);

  // The page opened without its token says how to get in, instead of showing nothing.
  await stayOnGufo(page);
  await page.goto(url.origin + '/');
  await expect(page.getByRole('alert')).toContainText('Access denied');
});
