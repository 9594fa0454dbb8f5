/**
 * gufo imatrix as a user runs it: llama-imatrix's GGUF file (keys, in_sum2/counts/in_sum per weight
 * of the layers, the output head left out) that the existing loader reads back and gufo quantize
 * --imatrix uses; llama-imatrix's chunking rules; a text too short for two chunks refused by name;
 * an in_sum that does not fit its in_sum2 refused by name.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { imatrixChunks } from '../../src-main/core/imatrix';
import { GgufType } from '../../src-main/core/gguf/values';
import { ggmlTypeByName } from '../../src-main/core/ggml-types';
import { loadImatrix } from '../../src-main/node/imatrix-file';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { gufo } from '../support/cli';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

const STORY =
  'Once upon a time, there was a little girl named Lily. She loved to play outside in the park. ' +
  'One day, she saw a big, red ball. She wanted to play with it, but it was too high. Lily asked her mom for help. ';

const GPU_TIMEOUT = 300_000;

describe('imatrixChunks (llama-imatrix rules)', () => {
  it('cuts whole chunks, replaces each first token by BOS, stops at --chunks', () => {
    const tokens = [1, ...Array.from({ length: 41 }, (_, i) => 100 + i)];
    const chunks = imatrixChunks(tokens, 16, 99, 1, 't.txt');
    expect(chunks).toEqual([
      [1, ...Array.from({ length: 15 }, (_, i) => 100 + i)],
      [1, ...Array.from({ length: 15 }, (_, i) => 116 + i)],
    ]);
    expect(imatrixChunks(tokens, 16, 99, null, 't.txt')[1]).toEqual(Array.from({ length: 16 }, (_, i) => 115 + i));
    expect(imatrixChunks(tokens, 16, 1, 1, 't.txt')).toHaveLength(1);
    expect(imatrixChunks(tokens, 21, 99, 1, 't.txt')).toHaveLength(2);
    expect(() => imatrixChunks(tokens, 22, 99, 1, 't.txt')).toThrow(
      't.txt: tokenizes to 42 tokens; an importance matrix with --ctx 22 needs at least 44',
    );
  });

  it('refuses chunks under 16 tokens, from which llama-imatrix collects no dense matrix', () => {
    const tokens = Array.from({ length: 100 }, (_, i) => i);
    expect(() => imatrixChunks(tokens, 15, 99, 1, 't.txt')).toThrow(
      '--ctx 15: an importance matrix needs chunks of at least 16 tokens',
    );
  });
});

describe('gufo imatrix', () => {
  it(
    'writes a llama-imatrix GGUF file that the loader reads and gufo quantize --imatrix uses',
    () => {
      const dir = tempDir();
      const text = join(dir, 'calibration.txt');
      writeFileSync(text, STORY.repeat(6));
      const out = join(dir, 'stories.imatrix.gguf');
      const r = gufo(
        ['imatrix', STORIES_260K, '--text', text, '--ctx', '32', '--chunks', '3', '-o', out],
        {},
        GPU_TIMEOUT,
      );
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain('from 3 chunks of 32 tokens');

      const { gguf, file } = openGguf(out);
      try {
        expect(gguf.getString('general.type')).toBe('imatrix');
        expect(gguf.getNumber('imatrix.chunk_count')).toBe(3);
        expect(gguf.getNumber('imatrix.chunk_size')).toBe(32);
        const datasets = gguf.getArray('imatrix.datasets')!;
        expect(datasets.itemType).toBe(GgufType.STRING);
        expect(datasets.itemType === GgufType.STRING && datasets.items.at(0)).toBe(text);
        const names = gguf.tensors.map((t) => t.name);
        // stories260K: 5 layers × 7 matrices, sorted by name, each in_sum2, counts, in_sum; no output.weight.
        expect(names.length).toBe(3 * 5 * 7);
        expect(names.slice(0, 3)).toEqual([
          'blk.0.attn_k.weight.in_sum2',
          'blk.0.attn_k.weight.counts',
          'blk.0.attn_k.weight.in_sum',
        ]);
        const weights = names.filter((n) => n.endsWith('.in_sum2'));
        expect(weights).toEqual([...weights].sort());
        expect(names).not.toContain('output.weight.in_sum2');
        expect(gguf.tensor('blk.0.attn_q.weight.in_sum2')!.ne).toEqual([64, 1]);
        expect(gguf.tensor('blk.0.ffn_down.weight.in_sum2')!.ne).toEqual([172, 1]);
        expect(gguf.tensor('blk.0.attn_q.weight.counts')!.ne).toEqual([1, 1]);
        expect(gguf.tensor('blk.0.ffn_down.weight.in_sum')!.ne).toEqual([172, 1]);
      } finally {
        file.close();
      }

      const imatrix = loadImatrix(out);
      expect(imatrix.size).toBe(5 * 7);
      // Q, K and V read the same input: one accumulation serves all three.
      expect(imatrix.get('blk.2.attn_k.weight')).toEqual(imatrix.get('blk.2.attn_q.weight'));
      for (const values of imatrix.values()) {
        expect(values.every((v) => Number.isFinite(v) && v >= 0)).toBe(true);
        expect(values.some((v) => v > 0)).toBe(true);
      }

      const plain = join(dir, 'plain.gguf');
      const weighted = join(dir, 'weighted.gguf');
      expect(gufo(['quantize', STORIES_260K, plain, '--type', 'Q4_0'], {}, GPU_TIMEOUT).status).toBe(0);
      const q = gufo(['quantize', STORIES_260K, weighted, '--type', 'Q4_0', '--imatrix', out], {}, GPU_TIMEOUT);
      expect(q.status, q.stderr).toBe(0);
      expect(readFileSync(weighted).equals(readFileSync(plain))).toBe(false);
    },
    GPU_TIMEOUT,
  );

  it('refuses a text shorter than two chunks, naming the file', () => {
    const dir = tempDir();
    const text = join(dir, 'short.txt');
    writeFileSync(text, STORY);
    const r = gufo(['imatrix', STORIES_260K, '--text', text, '--ctx', '64', '-o', join(dir, 'x.gguf')]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(
      /short\.txt: tokenizes to \d+ tokens; an importance matrix with --ctx 64 needs at least 128/,
    );
  });

  it('reads in_sum beside in_sum2 (quantizing ignores it) and refuses one of another shape, naming it', async () => {
    const dir = tempDir();
    const f32 = ggmlTypeByName('F32')!;
    const name = 'blk.0.ffn_up_exps.weight';
    const write = (path: string, inSumNe: number[]) =>
      writeGguf(
        path,
        {
          kvs: [{ key: 'general.type', type: GgufType.STRING, value: 'imatrix' }],
          tensors: [
            { name: `${name}.in_sum2`, type: f32, ne: [32, 2] },
            { name: `${name}.counts`, type: f32, ne: [1, 2] },
            { name: `${name}.in_sum`, type: f32, ne: inSumNe },
          ],
        },
        (i) => [
          new Uint8Array(
            (i === 0
              ? Float32Array.from({ length: 64 }, (_, j) => j)
              : i === 1
                ? Float32Array.of(4, 0)
                : new Float32Array(inSumNe[0]! * inSumNe[1]!).fill(-3)
            ).buffer,
          ),
        ],
      );
    await write(join(dir, 'good.gguf'), [32, 2]);
    // Expert 0: Σ x² / 4; expert 1 saw no token: 1, as llama-quantize reads it.
    expect(Array.from(loadImatrix(join(dir, 'good.gguf')).get(name)!)).toEqual([
      ...Array.from({ length: 32 }, (_, j) => j / 4),
      ...new Array<number>(32).fill(1),
    ]);
    await write(join(dir, 'bad.gguf'), [32, 1]);
    expect(() => loadImatrix(join(dir, 'bad.gguf'))).toThrow(
      `tensor "${name}.in_sum": shape [32, 1] differs from its .in_sum2's [32, 2]`,
    );
  });

  it('needs -o', () => {
    const r = gufo(['imatrix', STORIES_260K, '--text', STORIES_260K]);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('-o <out.imatrix.gguf> is required');
  });
});
