/**
 * `gufo kld BASE Q1 Q2 ...`: several exports of one model against it in one run, the base's
 * log-probabilities computed once, each file's figures those of its own single run.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { measureDivergences, planComparison } from '../../src-main/backend/quality/divergence';
import { withEngine } from '../../src-main/cli/commands/perplexity';
import type { DivergenceSummary } from '../../src-main/core/quality/divergence';
import type { EngineHost } from '../../src-main/engine-wire/host';
import { quantizeFile } from '../../src-main/node/quantize';
import { gufo } from '../support/cli';
import { WIDE_LLAMA, writeRandomModel } from '../support/test-models';

const GPU_TIMEOUT = 300_000;

const TEXT =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ' +
  'One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom for help.\n';

function json<T>(r: { status: number | null; stdout: string; stderr: string }): T {
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as T;
}

describe('gufo kld over several exports of a random model', () => {
  let dir: string;
  let source: string;
  let text: string;
  const exports: Record<'Q8_0' | 'Q4_K_M', string> = { Q8_0: '', Q4_K_M: '' };
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'gufo-kld-levels-'));
    source = join(dir, 'random-f32.gguf');
    // 256-wide rows, so Q4_K_M writes K-quants rather than its fallbacks.
    await writeRandomModel(source, { ...WIDE_LLAMA, seed: 31 });
    for (const type of ['Q8_0', 'Q4_K_M'] as const) {
      exports[type] = join(dir, `random-${type}.gguf`);
      await quantizeFile(source, exports[type], type);
    }
    text = join(dir, 'story.txt');
    writeFileSync(text, TEXT);
  }, GPU_TIMEOUT);
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(
    '--json: one object per file, in order, with the figures of each single run exactly, and Q8_0 < Q4_K_M',
    () => {
      const files = [exports.Q8_0, exports.Q4_K_M];
      const levels = json<(DivergenceSummary & { file: string; bytes: number; bitsPerWeight: number })[]>(
        gufo(['kld', source, ...files, '--text', text, '--ctx', '16', '--json'], {}, GPU_TIMEOUT),
      );
      expect(levels.map((l) => l.file)).toEqual(files);
      for (const [i, file] of files.entries()) {
        const single = json<DivergenceSummary>(
          gufo(['kld', source, file, '--text', text, '--ctx', '16', '--json'], {}, GPU_TIMEOUT),
        );
        const { file: named, bytes, bitsPerWeight, ...figures } = levels[i]!;
        expect(named).toBe(file);
        expect(bytes).toBe(statSync(file).size);
        expect(figures).toEqual(single);
        expect(bitsPerWeight).toBeGreaterThan(i === 0 ? 8 : 4);
        expect(bitsPerWeight).toBeLessThan(i === 0 ? 9 : 8);
      }
      console.log(
        `random llama, --ctx 16: ${levels.map((l) => `${l.file}: ${l.bitsPerWeight.toFixed(2)} bits, mean KL ${l.meanKl.toExponential(3)}`).join('; ')}`,
      );
      expect(levels[0]!.meanKl).toBeGreaterThan(0);
      expect(levels[0]!.meanKl).toBeLessThan(levels[1]!.meanKl);

      const plain = gufo(['kld', source, ...files, '--text', text, '--ctx', '16'], {}, GPU_TIMEOUT);
      expect(plain.status, plain.stderr).toBe(0);
      expect(plain.stdout).toMatch(
        /^PPL base +[\d.]+\nfile +size +bits\/weight +mean KL +p99 KL +same top token +PPL\n-+/,
      );
      expect(plain.stdout).toContain(`${exports.Q4_K_M} `);
      expect(plain.stderr).toContain(`1 of 2: ${exports.Q8_0}\n`);
      expect(plain.stderr).toContain(`2 of 2: ${exports.Q4_K_M}\n`);
    },
    4 * GPU_TIMEOUT,
  );

  it(
    'evaluates the base once, each export once, over the same windows',
    async () => {
      const quantPaths = [exports.Q8_0, exports.Q4_K_M];
      const plan = planComparison(source, quantPaths, { text: TEXT, label: 'story' }, () => 16);
      const loads: string[] = [];
      const evaluations = new Map<string, number>();
      const results = await measureDivergences({
        basePath: source,
        quantPaths,
        plan,
        signal: new AbortController().signal,
        runEngine: (path, ctx, work) => {
          loads.push(path);
          return withEngine(path, ctx, true, new AbortController().signal, (host, info) => {
            const counted = {
              evaluate: (request: Parameters<EngineHost['evaluate']>[0]) => {
                evaluations.set(path, (evaluations.get(path) ?? 0) + 1);
                return host.evaluate(request);
              },
            } as EngineHost;
            return work(counted, info);
          });
        },
      });
      expect(plan.windows.length).toBeGreaterThan(1);
      expect(loads).toEqual([source, ...quantPaths]);
      expect(Object.fromEntries(evaluations)).toEqual(
        Object.fromEntries([source, ...quantPaths].map((p) => [p, plan.windows.length])),
      );
      expect(results).toHaveLength(2);
      expect(results.map((r) => r.summary.positions)).toEqual([plan.scored, plan.scored]);
      expect(results[0]!.summary.pplBase).toBe(results[1]!.summary.pplBase);
    },
    GPU_TIMEOUT,
  );

  it('names the file that cannot be compared before anything runs', () => {
    const bad = join(dir, 'not-a-model.gguf');
    writeFileSync(bad, 'not a GGUF file');
    const r = gufo(['kld', source, exports.Q8_0, bad, '--text', text, '--json']);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^gufo: ${bad}: `));
  });
});
