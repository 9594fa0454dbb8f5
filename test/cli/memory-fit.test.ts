/**
 * A model that does not fit the memory budget (GUFO_MEMORY_BUDGET, read by the engine process):
 * `gufo run`, `gufo chat` and `gufo bench` end with the engine's one sentence and exit code 1, no
 * stack and no results; the context it names runs.
 */
import { describe, expect, it } from 'vitest';
import { gufo } from '../support/cli';
import { storiesPlan, storiesRefusal } from '../support/memory-fit';
import { STORIES_260K } from '../support/paths';

const FITS = 300;
const BUDGET = { GUFO_MEMORY_BUDGET: String(storiesPlan(FITS).total) };

/** The refusal as the last line of stderr, with no stack and nothing on stdout. */
function expectRefused(r: { status: number | null; stdout: string; stderr: string }, ctx: number): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(`gufo: ${storiesRefusal(ctx, FITS)}`);
  expect(r.stderr).not.toMatch(/\n\s+at /);
  expect(r.stdout).toBe('');
}

describe('a model over the memory budget', () => {
  it('gufo run says so in one sentence and exits 1; the context it names runs', () => {
    expectRefused(
      gufo(['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '4', '--ctx', '4096'], BUDGET),
      4096,
    );
    const ok = gufo(['run', STORIES_260K, '--prompt', 'Once upon a time', '-n', '4', '--ctx', String(FITS)], BUDGET);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toBe(', there was a\n');
  });

  it('gufo chat and gufo bench say so too', () => {
    expectRefused(gufo(['chat', STORIES_260K, '--ctx', '2048'], BUDGET), 2048);
    // bench's context is depth + prompt + generated tokens.
    expectRefused(gufo(['bench', STORIES_260K, '-d', '1000', '-p', '16', '-n', '8'], BUDGET), 1024);
  });

  it('names a GUFO_MEMORY_BUDGET it cannot read', () => {
    const r = gufo(['run', STORIES_260K, '--prompt', 'x', '-n', '1'], { GUFO_MEMORY_BUDGET: 'lots' });
    expect(r.status).toBe(1);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(
      'gufo: GUFO_MEMORY_BUDGET=lots is not a memory size: write bytes, or a number with B, KiB, MiB, GiB or TiB',
    );
  });
});
