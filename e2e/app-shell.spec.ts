import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import { STORIES_260K } from '../test/support/paths';
import { ROOT, startGufoServe, type GufoServe } from './support/gufo-serve';
import { collectProblems, watchOffsiteRequests } from './support/watch-page';

const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };

let gufo: GufoServe;
let url: URL;
/** GUFO_HOME of the server under test, with a database that is not one (so it starts with a notice). */
let home: string;
/** GUFO_MODELS_DIRS of the server, and folders the tests add in Settings. */
let envModels: string;
let myModels: string;
let moreModels: string;

async function stopGufo(server: GufoServe): Promise<void> {
  expect(await server.stop(), 'gufo serve stops cleanly on SIGTERM').toBe(0);
}

test.beforeAll(async () => {
  const scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-shell-'));
  home = join(scratch, 'home');
  envModels = join(scratch, 'env-models');
  myModels = join(scratch, 'my-models');
  moreModels = join(scratch, 'more-models');
  for (const dir of [home, envModels, myModels, moreModels]) mkdirSync(dir);
  writeFileSync(join(home, 'gufo.db'), 'not a database');
  gufo = await startGufoServe({ GUFO_HOME: home, GUFO_MODELS_DIRS: envModels });
  url = gufo.url;
});

test.afterAll(async () => {
  await stopGufo(gufo);
  rmSync(join(home, '..'), { recursive: true, force: true });
});

async function openSettings(page: Page): Promise<void> {
  await page.goto(url.href);
  await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click();
  await expect(page.getByRole('heading', { level: 2, name: 'Settings' })).toBeVisible();
}

test('shows the app shell with its sections, and About in Settings, in browser mode', async ({ page }) => {
  const offsite = watchOffsiteRequests(page.context(), url.host);
  const problems = collectProblems(page);

  await page.goto(url.href);

  await expect(page.getByRole('heading', { level: 1, name: 'Gufo' })).toBeVisible();
  const nav = page.getByRole('navigation', { name: 'Sections' });
  for (const section of ['Library', 'Inspector', 'Chat', 'Benchmarks', 'Export', 'Settings']) {
    await expect(nav.getByRole('link', { name: section })).toBeVisible();
  }
  await nav.getByRole('link', { name: 'Settings' }).click();
  await expect(page).toHaveURL(/#\/settings$/);
  await expect(nav.getByRole('link', { name: 'Settings' })).toHaveAttribute('aria-current', 'page');

  const about = page.getByRole('region', { name: 'About' });
  await expect(about.locator('dt:text-is("Version") + dd')).toHaveText(version);
  await expect(about.locator('dt:text-is("Mode") + dd')).toHaveText('browser');
  await expect(about.locator('dt:text-is("Platform") + dd')).toHaveText(process.platform);
  await expect(about.locator('dt:text-is("Data folder") + dd')).toHaveText(home);

  expect(offsite, 'requests that left 127.0.0.1').toEqual([]);
  expect(problems, 'console errors, warnings and page errors').toEqual([]);
});

test('tells about the corrupt database kept aside, until dismissed', async ({ page }) => {
  await page.goto(url.href);
  const notice = page.getByRole('status').filter({ hasText: 'is not an SQLite database' });
  await expect(notice).toContainText(`${join(home, 'gufo.db')} is not an SQLite database; it was kept as`);
  await notice.getByRole('button', { name: 'Dismiss this notice' }).click();
  await expect(page.getByText('is not an SQLite database')).toHaveCount(0);
});

test('switches the theme at once and keeps it', async ({ page }) => {
  await openSettings(page);
  const theme = page.getByRole('combobox', { name: 'Theme' });
  await theme.selectOption({ label: 'Dark' });
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  expect(background).toBe('rgb(23, 23, 26)');

  await page.reload();
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'dark');
  await expect(theme).toHaveValue('dark');

  await theme.selectOption({ label: 'Light' });
  await expect(page.locator('html')).toHaveAttribute('data-theme', 'light');
  await theme.selectOption({ label: 'Same as the system' });
  await expect(page.locator('html')).not.toHaveAttribute('data-theme');
});

test('explains a refused context size next to the field, and saves a good one', async ({ page }) => {
  await openSettings(page);
  const context = page.getByRole('spinbutton', { name: 'Context size for new chats' });
  await expect(context).toHaveValue('2048');
  await context.fill('5');
  await context.press('Enter');
  const error = page.getByRole('alert').filter({ hasText: 'Must be a whole number of tokens from 16 to 1048576' });
  await expect(error).toBeVisible();
  await expect(context).toHaveAttribute('aria-invalid', 'true');
  await expect(context).toHaveAttribute('aria-describedby', new RegExp(`\\b${await error.getAttribute('id')}\\b`));

  await context.fill('8192');
  await context.press('Enter');
  await expect(error).toHaveCount(0);
  await page.reload();
  await expect(context).toHaveValue('8192');
});

test('adds model folders by path or with the in-app browser, refuses missing ones, removes them', async ({ page }) => {
  await openSettings(page);
  const section = page.getByRole('region', { name: 'Model folders' });
  const always = section.getByRole('list', { name: 'Always scanned' });
  await expect(always.getByRole('listitem').filter({ hasText: join(home, 'models') })).toBeVisible();
  await expect(always.getByRole('listitem').filter({ hasText: envModels })).toContainText('from GUFO_MODELS_DIRS');

  const field = section.getByRole('textbox', { name: 'Add a folder' });
  await field.fill(join(myModels, 'missing'));
  await section.getByRole('button', { name: 'Add', exact: true }).click();
  await expect(section.getByRole('alert')).toHaveText(`${join(myModels, 'missing')} does not exist`);

  await field.fill(myModels);
  await section.getByRole('button', { name: 'Add', exact: true }).click();
  const own = section.getByRole('list', { name: 'Your model folders' });
  await expect(own.getByRole('listitem')).toHaveCount(1);
  await expect(own.getByRole('listitem')).toContainText(myModels);
  await expect(section.getByRole('alert')).toHaveCount(0);
  await expect(field).toHaveValue('');

  // Browser mode has no native dialog: Browse… opens Gufo's own.
  await section.getByRole('button', { name: 'Browse…' }).click();
  const dialog = page.getByRole('dialog', { name: 'Add a model folder' });
  // It opens on the home folder; the user types another path once that is listed.
  await expect(dialog.getByRole('list', { name: `Contents of ${homedir()}` })).toBeVisible();
  await dialog.getByRole('textbox', { name: 'Folder' }).fill(moreModels);
  await dialog.getByRole('button', { name: 'Go', exact: true }).click();
  await expect(dialog.getByRole('list', { name: `Contents of ${moreModels}` })).toBeVisible();
  await expect(dialog.getByRole('textbox', { name: 'Folder' })).toHaveValue(moreModels);
  await dialog.getByRole('button', { name: 'Add this folder' }).click();
  await expect(dialog).toBeHidden();
  await expect(own.getByRole('listitem')).toHaveCount(2);

  await own.getByRole('button', { name: `Remove ${myModels}` }).click();
  await expect(own.getByRole('listitem')).toHaveCount(1);
  await own.getByRole('button', { name: `Remove ${moreModels}` }).click();
  await expect(section.getByText('None yet')).toBeVisible();
});

test('refuses API calls without the token', async ({ page, request }) => {
  const response = await request.post(new URL('/gufo/api/appInfo', url).href, { data: [] });
  expect(response.status()).toBe(401);

  // The page opened without its token says how to get in, instead of showing nothing.
  await page.goto(url.origin + '/');
  await expect(page.getByRole('alert').filter({ hasText: 'Access denied' }).first()).toBeVisible();
});

test('shows running jobs in the header, each with its progress and Cancel', async ({ page }) => {
  // A server of its own: a 64 GB (sparse) model whose checksum job runs until cancelled.
  const scratch = mkdtempSync(join(tmpdir(), 'gufo-e2e-jobs-'));
  const models = join(scratch, 'models');
  mkdirSync(models);
  const big = join(models, 'big.gguf');
  copyFileSync(STORIES_260K, big);
  truncateSync(big, 64 * 2 ** 30);
  const server = await startGufoServe({ GUFO_HOME: join(scratch, 'home'), GUFO_MODELS_DIRS: models });
  try {
    await page.goto(server.url.href);
    const indicator = page.getByRole('banner').getByRole('button', { name: '1 job running' });
    await expect(indicator).toHaveAttribute('aria-expanded', 'false');
    await indicator.click();
    await expect(indicator).toHaveAttribute('aria-expanded', 'true');
    const job = page
      .getByRole('list', { name: 'Running jobs' })
      .getByRole('group', { name: 'Computing SHA-256 of models' });
    await expect(job.getByRole('progressbar')).toBeVisible();
    await job.getByRole('button', { name: 'Cancel Computing SHA-256 of models' }).click();
    await expect(indicator).toBeHidden();
  } finally {
    await stopGufo(server);
    rmSync(scratch, { recursive: true, force: true });
  }
});
