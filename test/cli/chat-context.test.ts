/**
 * `gufo chat` at the end of a small context (stories260K, greedy, the built-in llama2 template): the
 * same policies as the app's chats (--context-overflow), saying what was left out and when the
 * context filled.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { gufo } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';

/** Runs `gufo chat` with these lines typed in, one answer each (with the llama2 template unless `template` is null). */
function chat(args: string[], lines: string[], template: string | null = 'llama2') {
  const r = spawnSync(
    process.execPath,
    [
      join(REPO_ROOT, 'bin/gufo.mjs'),
      'chat',
      STORIES_260K,
      '--temp',
      '0',
      ...(template === null ? [] : ['--template', template]),
      ...args,
    ],
    { input: lines.join('\n') + '\n', encoding: 'utf8', timeout: 120_000 },
  );
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('gufo chat --context-overflow', { timeout: 180_000 }, () => {
  it('stop: an answer that fills the context ends there and says so; a conversation that no longer fits is refused', () => {
    const r = chat(['--ctx', '48', '-n', '100', '--context-overflow', 'stop'], ['Once upon a time', 'And then?']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      '[The context is full (48 tokens): the answer stops here. Raise the context size, start a new chat, or choose a policy that leaves out earlier messages (--context-overflow).]',
    );
    expect(r.stderr).toMatch(
      /the conversation no longer fits this chat's context: \d+ tokens with the system prompt, in a context of 48, and "Stop at the limit" leaves nothing out/,
    );
    expect(r.stderr).not.toContain('left out');
  });

  it('truncate-middle (the default): the oldest messages are left out, and it says how many', () => {
    const r = chat(['--ctx', '96', '-n', '40'], ['Once upon a time', 'Tom had a red ball.', 'Sue had a big dog.']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/\[\d+ earliest messages? left out to fit the 96-token context\]/);
    expect(r.stderr).not.toContain('The context is full');
  });

  it('gufo run: output the context ends says so (stopReason "context" in --json)', () => {
    const run = (json: boolean) =>
      spawnSync(
        process.execPath,
        [
          join(REPO_ROOT, 'bin/gufo.mjs'),
          'run',
          STORIES_260K,
          '--prompt',
          'Once upon a time',
          '-n',
          '100',
          '--ctx',
          '32',
          ...(json ? ['--json'] : []),
        ],
        { encoding: 'utf8', timeout: 120_000 },
      );
    const doc = JSON.parse(run(true).stdout) as { stopReason: string; promptIds: number[]; ids: number[] };
    expect(doc.stopReason).toBe('context');
    // Every position of the context holds a token, and the last one read gives one more: sampled, never stored.
    expect(doc.promptIds.length + doc.ids.length).toBe(32 + 1);
    expect(run(false).stderr).toContain('the context is full (32 tokens): the output stops here; raise --ctx for more');
  });

  it('names the policies when given another', () => {
    const r = chat(['--context-overflow', 'middle'], []);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain(
      '--context-overflow must be one of truncate-middle, rolling-window, stop (got "middle")',
    );
  });
});

describe('gufo chat on a base model (issue #30 items 8 and 14)', { timeout: 180_000 }, () => {
  const plain = (args: string[], lines: string[]) => chat(args, lines, null);

  it('continues the text as written, as the app does, and says so; gufo run continues the same text the same way', () => {
    const r = plain(['-n', '12'], ['Once upon a time']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain('The model has no chat template (a base model): your text is continued as written');
    const run = gufo(
      ['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '12', '--temp', '0', '--json'],
      {},
      120_000,
    );
    const { text } = JSON.parse(run.stdout) as { text: string };
    expect(r.stdout).toContain(text.trim());
  });

  it('takes a built-in family with --template, and refuses "model" and an unknown name, naming the choices', () => {
    expect(plain(['--template', 'chatml', '-n', '4'], ['Hi']).status).toBe(0);
    const model = plain(['--template', 'model'], []);
    expect(model.status).not.toBe(0);
    expect(model.stderr).toContain('--template cannot be "model": the model file has no chat template');
    const unknown = plain(['--template', 'vicuna'], []);
    expect(unknown.stderr).toMatch(/--template must be one of "completion", "chatml", "llama2"/);
  });
});
