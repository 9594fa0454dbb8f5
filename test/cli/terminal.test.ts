/**
 * The CLI on a terminal: util-linux `script` runs it on a pseudo-terminal (what a user's shell
 * gives it), so stderr is a TTY and Ctrl-C arrives as the key readline reads.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, STORIES_260K } from '../support/paths';

interface Terminal {
  /** Everything the terminal showed so far. */
  readonly output: () => string;
  type(keys: string): void;
  /** Resolves when `text` is shown. */
  waitFor(text: string, ms?: number): Promise<void>;
  /** The exit code, or null when it still runs after `ms`. */
  exited(ms: number): Promise<number | null>;
}

function onTerminal(args: string[]): Terminal {
  const command = [process.execPath, join(REPO_ROOT, 'bin/gufo.mjs'), ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  let code: number | null = null;
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  const ended = new Promise<number>((resolve) => child.on('exit', (c) => resolve((code = c ?? -1))));
  const poll = async (ready: () => boolean, ms: number) => {
    for (const until = Date.now() + ms; !ready() && Date.now() < until;) await new Promise((r) => setTimeout(r, 50));
  };
  return {
    output: () => output,
    type: (keys) => child.stdin.write(keys),
    async waitFor(text, ms = 60_000) {
      await poll(() => output.includes(text) || code !== null, ms);
      if (!output.includes(text)) {
        child.kill();
        throw new Error(`the terminal never showed ${JSON.stringify(text)}:\n${output}`);
      }
    },
    async exited(ms) {
      await Promise.race([ended, poll(() => false, ms)]);
      if (code === null) child.kill();
      return code;
    },
  };
}

describe('the CLI on a terminal', { timeout: 120_000 }, () => {
  it('gufo bench shows its progress on stderr', async () => {
    const t = onTerminal(['bench', STORIES_260K, '-p', '32', '-n', '32']);
    expect(await t.exited(100_000)).toBe(0);
    expect(t.output()).toMatch(/benchmarking \[#+\] 100% decode: 32 tokens/);
  });

  it('gufo quantize --plan shows its progress on stderr', async () => {
    const t = onTerminal(['quantize', '--plan', STORIES_260K, '--json']);
    expect(await t.exited(100_000)).toBe(0);
    expect(t.output()).toMatch(/predicting \[#+\] +100%/);
  });

  it('gufo chat quits on a Ctrl-C pressed as the answer it stops ends', async () => {
    const t = onTerminal(['chat', STORIES_260K, '--temp', '0', '-n', '2000']);
    await t.waitFor('> ');
    t.type('Once upon a time\r');
    await t.waitFor('Lily');
    // The first stops the answer; the second, before it has ended, is for the prompt.
    t.type('\x03\x03');
    expect(await t.exited(10_000)).toBe(0);
    expect(t.output()).toContain('[stopped]');
  });
});
