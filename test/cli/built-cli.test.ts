import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src-main/cli/command-list';
import { gufo } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';

// A module hook that appends every file:// module a process loads to $GUFO_TEST_LOADED, so a
// test can see what `gufo --help` loads, and which engine entry a command forks.
const hooks = mkdtempSync(join(tmpdir(), 'gufo-loaded-'));
writeFileSync(
  join(hooks, 'hooks.mjs'),
  `import { appendFileSync } from 'node:fs';
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  if (resolved.url.startsWith('file:')) appendFileSync(process.env.GUFO_TEST_LOADED, resolved.url + '\\n');
  return resolved;
}
`,
);
writeFileSync(
  join(hooks, 'register.mjs'),
  `import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n`,
);
afterAll(() => rmSync(hooks, { recursive: true, force: true }));

/** Runs gufo with the hook in every process it starts; returns its result and the repository files loaded. */
function gufoLoading(args: string[], env: NodeJS.ProcessEnv) {
  const log = join(hooks, `loaded-${Math.random().toString(36).slice(2)}.txt`);
  writeFileSync(log, '');
  const result = gufo(args, { ...env, GUFO_TEST_LOADED: log, NODE_OPTIONS: `--import ${join(hooks, 'register.mjs')}` });
  const urls = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  const files = [...new Set(urls.map((url) => relative(REPO_ROOT, fileURLToPath(url))))];
  return { result, files };
}

describe('gufo --help', () => {
  it('loads no command module: each is imported when its command runs', () => {
    const { result, files } = gufoLoading(['--help'], { GUFO_DEV: '1' });
    expect(result.status, result.stderr).toBe(0);
    expect(files.filter((f) => f.startsWith('src-main/')).sort()).toEqual([
      'src-main/cli/closest.ts',
      'src-main/cli/command-list.ts',
      'src-main/cli/command.ts',
      'src-main/cli/file-errors.ts',
      'src-main/cli/main.ts',
    ]);
  });

  it('lists every command with its summary, and each loads', async () => {
    const help = gufo(['--help']).stdout;
    for (const entry of COMMANDS) {
      expect((await entry.load()).help).toMatch(new RegExp(`^Usage: gufo ${entry.name}\\b`));
      expect(help).toContain(
        `${entry.name.padEnd(Math.max(...COMMANDS.map((c) => c.name.length)))}  ${entry.summary}\n`,
      );
    }
  });
});

describe('the built CLI (out/cli, built by npm install; by test/support/build-cli.ts here)', () => {
  const built = { GUFO_DEV: undefined };

  it('holds every entry the sources start from beside their bundle: the engine and the prompt worker', () => {
    for (const entry of ['gufo.js', 'engine.js', 'prompt-worker.js'])
      expect(existsSync(join(REPO_ROOT, 'out/cli', entry)), entry).toBe(true);
  });

  it('answers --help from out/cli alone: no package, no TypeScript', () => {
    const { result, files } = gufoLoading(['--help'], built);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^Usage: gufo <command>/);
    expect(files.filter((f) => !f.startsWith('out/cli/') && f !== 'bin/gufo.mjs')).toEqual([]);
  });

  it('runs the built engine (out/cli/engine.js), which reads its shaders from out/shaders', () => {
    expect(existsSync(join(REPO_ROOT, 'out/shaders/matmul.wgsl'))).toBe(true);
    const { result, files } = gufoLoading(['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '8'], built);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toBe(', there was a little girl\n');
    expect(files).toContain('out/cli/engine.js');
    expect(files.filter((f) => f.endsWith('.ts') || f.includes('node_modules/tsx/'))).toEqual([]);
  });

  it('says how to build it when it is missing', () => {
    const copy = mkdtempSync(join(tmpdir(), 'gufo-unbuilt-'));
    try {
      mkdirSync(join(copy, 'bin'));
      cpSync(join(REPO_ROOT, 'bin/gufo.mjs'), join(copy, 'bin/gufo.mjs'));
      const r = spawnSync(process.execPath, [join(copy, 'bin/gufo.mjs'), '--help'], {
        encoding: 'utf8',
        env: { ...process.env, GUFO_DEV: '' },
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(/out\/cli\/gufo\.js is missing.*npm install.*npm run build:cli/);
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
