/**
 * The setup the browser-mode specs share: a scratch folder with models in models/, `gufo serve`
 * on it computing on SwiftShader, and (serveStories) one page of the app that each test must
 * leave without console problems. Registers its own beforeAll/afterAll/afterEach hooks, so call
 * it once at the top of a spec; the fields of what it returns are set once beforeAll has run.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test, type BrowserContext, type Page } from '@playwright/test';
import { SWIFTSHADER_ICD } from '../../src-main/engine/gpu/software-driver';
import { STORIES_260K } from '../../test/support/paths';
import { startGufoServe, type GufoServe } from './gufo-serve';
import { collectProblems, watchOffsiteRequests } from './watch-page';

export interface ServeOptions {
  /** Names the scratch folder: gufo-e2e-<name>-…. */
  name: string;
  /** Files copied into models/, by the name they get there; stories260K alone unless given. */
  models?: Record<string, string>;
  /** Added to gufo serve's environment over the defaults (GUFO_HOME is <scratch>/home, GUFO_MODELS_DIRS models/). */
  env?: (scratch: string) => NodeJS.ProcessEnv;
  /** More arguments of gufo serve (`--cache-type-k q4_0`). */
  args?: readonly string[];
  /** Fails the spec unless gufo serve exits 0 on SIGTERM. */
  expectCleanStop?: boolean;
}

export interface ServedGufo {
  scratch: string;
  gufo: GufoServe;
}

/** Starts gufo serve on a scratch folder before the spec's tests; stops it and removes the folder after. */
export function serveGufo(options: ServeOptions): ServedGufo {
  const served = {} as ServedGufo;
  test.beforeAll(async () => {
    served.scratch = mkdtempSync(join(tmpdir(), `gufo-e2e-${options.name}-`));
    const models = join(served.scratch, 'models');
    mkdirSync(models);
    for (const [name, source] of Object.entries(options.models ?? { 'stories260K.gguf': STORIES_260K }))
      copyFileSync(source, join(models, name));
    served.gufo = await startGufoServe(
      {
        GUFO_HOME: join(served.scratch, 'home'),
        GUFO_MODELS_DIRS: models,
        // The engine's GPU here is SwiftShader, as in the unit tests, unless the run names another.
        VK_ICD_FILENAMES: process.env.VK_ICD_FILENAMES ?? SWIFTSHADER_ICD,
        XDG_RUNTIME_DIR: process.env.XDG_RUNTIME_DIR ?? tmpdir(),
        ...options.env?.(served.scratch),
      },
      options.args,
    );
  });
  test.afterAll(async () => {
    const code = await served.gufo?.stop();
    if (options.expectCleanStop) expect(code, 'gufo serve stops cleanly on SIGTERM').toBe(0);
    if (served.scratch) rmSync(served.scratch, { recursive: true, force: true });
  });
  return served;
}

export interface ServedAppOptions extends ServeOptions {
  /** 1400×900 unless given. */
  viewport?: { width: number; height: number };
  /** Also fails each test on a request that left 127.0.0.1 (Gufo is offline). */
  expectOffline?: boolean;
}

export interface ServedApp extends ServedGufo {
  context: BrowserContext;
  /** One page for all the spec's tests, opened on the app. */
  page: Page;
}

/** serveGufo, and one page of the app at `viewport`; each test fails on a console error or warning. */
export function serveStories(options: ServedAppOptions): ServedApp {
  // Playwright runs hooks in the order they are registered: this one before serveGufo's, so the
  // page closes before the server stops.
  test.afterAll(async () => {
    await app.context?.close();
  });
  const app = serveGufo(options) as ServedApp;
  let problems: string[] = [];
  let offsite: string[] = [];
  test.beforeAll(async ({ browser }) => {
    app.context = await browser.newContext({ viewport: options.viewport ?? { width: 1400, height: 900 } });
    offsite = watchOffsiteRequests(app.context, app.gufo.url.host);
    app.page = await app.context.newPage();
    problems = collectProblems(app.page);
    await app.page.goto(app.gufo.url.href);
  });
  test.afterEach(() => {
    if (options.expectOffline) expect(offsite, 'requests that left 127.0.0.1 (Gufo is offline)').toEqual([]);
    expect(problems, 'console errors, warnings and page errors').toEqual([]);
  });
  return app;
}
