/**
 * `gufo quantize --plan IN --json`: one row per file type whose bytes are the size of the file
 * `gufo quantize` writes, and whose predicted quality is the round-trip error of every tensor's
 * sample, pooled as `gufo tensor-error` pools a written file's.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { QuantizePlanRow } from '../../src-main/node/quant-plan';
import { gufo, gufoAsync } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';

async function planOf(input: string): Promise<QuantizePlanRow[]> {
  const r = await gufoAsync(['quantize', '--plan', input, '--json'], {}, 120_000);
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as QuantizePlanRow[];
}

const row = (rows: QuantizePlanRow[], type: string) => rows.find((r) => r.type === type)!;

describe('gufo quantize --plan', () => {
  it('plans bytes equal to the files gufo quantize writes, on stories260K and a random model', async () => {
    const dir = tempDir();
    const random = join(dir, 'random.gguf');
    await writeRandomModel(random, { nLayer: 1, nEmbd: 256, nFf: 512, nHead: 4, nHeadKv: 2 });
    const cases: [string, string[]][] = [
      [STORIES_260K, ['Q8_0', 'Q4_K_M', 'IQ4_XS']],
      [random, ['Q8_0', 'Q4_K_M', 'Q2_K']],
    ];
    for (const [input, types] of cases) {
      const rows = await planOf(input);
      for (const type of types) {
        const out = join(dir, `${type}-${statSync(input).size}.gguf`);
        const r = await gufoAsync(['quantize', input, out, '--type', type], {}, 120_000);
        expect(r.status, r.stderr).toBe(0);
        expect(row(rows, type).bytes, `${input} ${type}`).toBe(statSync(out).size);
      }
    }
  }, 300_000);

  it('predicts the error tensor-error measures on the written file when every row is sampled (stories260K)', async () => {
    const rows = await planOf(STORIES_260K);
    const dir = tempDir();
    for (const type of ['Q8_0', 'Q4_K_M', 'IQ4_NL']) {
      const out = join(dir, `${type}.gguf`);
      expect(gufo(['quantize', STORIES_260K, out, '--type', type], {}, 120_000).status).toBe(0);
      const measured = gufo(['tensor-error', STORIES_260K, out, '--json'], {}, 120_000);
      expect(measured.status, measured.stderr).toBe(0);
      const total = (
        JSON.parse(measured.stdout) as {
          total: { relativeError: number; snrDb: number; rmse: number; elements: number };
        }
      ).total;
      const predicted = row(rows, type).predicted!;
      expect(predicted.sampledElements).toBe(predicted.elements);
      expect(predicted.elements).toBe(total.elements);
      expect(predicted.relativeError).toBeCloseTo(total.relativeError, 10);
      expect(predicted.snrDb).toBeCloseTo(total.snrDb, 6);
    }
  }, 300_000);

  it('orders predicted error by bits on a random model whose rows hold 256-wide blocks, the same on every run', async () => {
    const dir = tempDir();
    const random = join(dir, 'random.gguf');
    await writeRandomModel(random, { nLayer: 2, nEmbd: 512, nFf: 1024, nHead: 8, nHeadKv: 2, seed: 7 });
    const rows = await planOf(random);
    const error = (type: string) => row(rows, type).predicted!.relativeError!;
    expect(error('Q8_0')).toBeLessThan(error('Q6_K'));
    expect(error('Q6_K')).toBeLessThan(error('Q4_K_M'));
    expect(error('Q4_K_M')).toBeLessThan(error('Q2_K'));
    expect(row(rows, 'Q2_K').predicted!.snrDb!).toBeLessThan(row(rows, 'Q8_0').predicted!.snrDb!);
    // Deterministic: the same rows are sampled and encoded again.
    expect(await planOf(random)).toEqual(rows);
  }, 300_000);

  it('refuses --plan with an output file, naming what is wrong', () => {
    const r = gufo(['quantize', '--plan', STORIES_260K, join(tempDir(), 'out.gguf')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--plan takes one input file and no output');
  });
});
