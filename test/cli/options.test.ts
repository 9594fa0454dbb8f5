/**
 * `gufo --version`, mistyped options and commands answered in Gufo's words with the closest names,
 * and llama.cpp's short option names.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src-main/cli/command-list';
import { parseCommandArgs } from '../../src-main/cli/command';
import { perplexityCommand } from '../../src-main/cli/commands/perplexity';
import { runCommand } from '../../src-main/cli/commands/run';
import { gufo } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';

const { version } = JSON.parse(readFileSync(join(REPO_ROOT, 'package.json'), 'utf8')) as { version: string };

describe('gufo --version', () => {
  it('prints the package version', () => {
    for (const flag of ['--version', '-v']) {
      const r = gufo([flag]);
      expect(r.status).toBe(0);
      expect(r.stdout).toBe(`gufo ${version}\n`);
      expect(r.stderr).toBe('');
    }
    expect(gufo(['--help']).stdout).toContain('gufo --version');
  });
});

describe('mistyped options', () => {
  it('suggest the closest option of the command, in one line', () => {
    const r = gufo(['run', STORIES_260K, '--promt', 'Once upon a time']);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('gufo: unknown option --promt; did you mean --prompt?\n');
    expect(gufo(['inspect', STORIES_260K, '--jsno']).stderr).toBe(
      'gufo: unknown option --jsno; did you mean --json?\n',
    );
    expect(gufo(['quantize', STORIES_260K, 'x.gguf', '--typ=Q8_0']).stderr).toBe(
      'gufo: unknown option --typ; did you mean --type?\n',
    );
  });

  it('say where to look when nothing is close, and what a value-less or valued option lacks', () => {
    expect(gufo(['inspect', STORIES_260K, '--frobnicate']).stderr).toBe(
      'gufo: unknown option --frobnicate (see gufo inspect --help)\n',
    );
    expect(gufo(['run', STORIES_260K, '--prompt']).stderr).toBe('gufo: --prompt needs a value (see gufo run --help)\n');
    expect(gufo(['run', STORIES_260K, '-n']).stderr).toBe('gufo: --n needs a value (see gufo run --help)\n');
    expect(gufo(['inspect', STORIES_260K, '--json=yes']).stderr).toBe(
      'gufo: --json takes no value (see gufo inspect --help)\n',
    );
  });

  it('suggest the closest command', () => {
    const r = gufo(['inspct', STORIES_260K]);
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('gufo: unknown command "inspct"; did you mean inspect?\n');
  });
});

describe("llama.cpp's short option names", () => {
  it("read as the long names: llama-cli's -p, -c, -s and llama-perplexity's -f", () => {
    const run = parseCommandArgs('run', runCommand, ['m.gguf', '-p', 'Once', '-c', '64', '-s', '7', '-n', '3']);
    expect(run.values).toEqual({ prompt: 'Once', ctx: '64', seed: '7', n: '3' });
    const perplexity = parseCommandArgs('perplexity', perplexityCommand, ['m.gguf', '-f', 'wiki.txt', '-c', '128']);
    expect(perplexity.values).toEqual({ text: 'wiki.txt', ctx: '128' });
  });

  it("are shown beside the long name in every command's help", async () => {
    for (const entry of COMMANDS) {
      const command = await entry.load();
      for (const [long, option] of Object.entries(command.options)) {
        if (option.short !== undefined && option.short !== long)
          expect(command.help, `gufo ${entry.name} --${long}`).toContain(`-${option.short}, --${long}`);
      }
    }
  });

  it('change what the command does as the long name does', () => {
    const short = gufo(['inspect', STORIES_260K, '-c', '4096']);
    expect(short.status).toBe(0);
    expect(short.stdout).toContain('at context 4,096');
    expect(short.stdout).toBe(gufo(['inspect', STORIES_260K, '--ctx', '4096']).stdout);
  });
});
