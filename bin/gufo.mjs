#!/usr/bin/env node
// `gufo`: runs the CLI that `npm install` built from the sources (out/cli/gufo.js, by
// scripts/build-cli.mjs from the `prepare` script), so it starts about as fast as node itself.
// GUFO_DEV=1 runs the TypeScript sources through tsx instead (a devDependency): what the tests do,
// and what a developer editing src-main/ wants, with no rebuild in between.
import { existsSync } from 'node:fs';

if (process.env.GUFO_DEV === '1') {
  const { register } = await import('tsx/esm/api').catch(() => {
    process.stderr.write(
      'gufo: GUFO_DEV=1 runs the sources through tsx, which is not installed (a devDependency): run `npm install`\n',
    );
    process.exit(1);
  });
  register();
  await import('../src-main/cli/main.ts');
} else {
  const built = new URL('../out/cli/gufo.js', import.meta.url);
  if (!existsSync(built)) {
    process.stderr.write(
      'gufo: the CLI has not been built (out/cli/gufo.js is missing): run `npm install` or `npm run build:cli`\n',
    );
    process.exit(1);
  }
  await import(built.href);
}
