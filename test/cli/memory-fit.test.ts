/**
 * A model that does not fit the memory budget (GUFO_MEMORY_BUDGET, read by the engine process):
 * `gufo run`, `gufo chat` and `gufo bench` end with the engine's one sentence and exit code 1, no
 * stack and no results; the context it names runs.
 */
import { describe, expect, it } from 'vitest';
import { formatBytes, formatInteger } from '../../src-preload/api/format';
import { openGguf } from '../../src-main/node/gguf-io';
import { readHParams } from '../../src-main/engine/model/hparams';
import { memoryPlanner } from '../../src-main/engine/model/memory-plan';
import { gufo } from '../support/cli';
import { STORIES_260K } from '../support/paths';

/**
 * stories260K's plan at a context, as the engine makes it with the CLI's defaults. Its tensors
 * and caches are far below any adapter's binding limit, so the limits given here change nothing.
 */
function plan(ctx: number) {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const gpu = {
      device: { limits: { maxStorageBufferBindingSize: 2 ** 27, maxBufferSize: 2 ** 28 } },
      info: { name: 'any' },
    };
    const at = memoryPlanner(gpu, gguf, readHParams(gguf), {
      ctx,
      maxBatch: 64,
      kvTypes: { k: 'f16', v: 'f16' },
      slots: 1,
    });
    return at(ctx);
  } finally {
    file.close();
  }
}

const FITS = 300;
const BUDGET = { GUFO_MEMORY_BUDGET: String(plan(FITS).total) };

function refusal(ctx: number): string {
  const p = plan(ctx);
  return (
    `gufo: stories260K.gguf needs ${formatBytes(p.total)} at ${formatInteger(ctx)} tokens of context ` +
    `(weights ${formatBytes(p.weights)}, KV cache ${formatBytes(p.kv)}, activations ${formatBytes(p.activations)}) ` +
    `but the memory budget (GUFO_MEMORY_BUDGET) is ${formatBytes(plan(FITS).total)}; ` +
    `the largest context that fits is ${formatInteger(FITS)} tokens.`
  );
}

/** The refusal as the last line of stderr, with no stack and nothing on stdout. */
function expectRefused(r: { status: number | null; stdout: string; stderr: string }, ctx: number): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr.trimEnd().split('\n').at(-1)).toBe(refusal(ctx));
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
