/**
 * `gufo embed` through bin/gufo.mjs on a random qwen3 embedding model (pooling_type last): the
 * vectors equal llama.cpp's embeddings of the same texts (node-llama-cpp), unit-length.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gufoAsync } from '../support/cli';
import { cosineDistance, llamaEmbeddings, llamaPromptIds } from '../support/llama';
import { writeRandomModel } from '../support/test-models';

const dir = mkdtempSync(join(tmpdir(), 'gufo-embed-cli-'));
const path = join(dir, 'embed.gguf');
beforeAll(() =>
  writeRandomModel(path, {
    arch: 'qwen3',
    nLayer: 2,
    nEmbd: 64,
    nFf: 128,
    nHead: 4,
    nHeadKv: 2,
    scale: 0.1,
    randomNorms: true,
    poolingType: 3,
  }),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('gufo embed', { timeout: 120_000 }, () => {
  it("--json: llama.cpp's vectors for each --text, with the pooling and token counts", async () => {
    const texts = ['Once upon a time', 'a dog'];
    const r = await gufoAsync(['embed', path, '--text', texts[0]!, '--text', texts[1]!, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { pooling: string; embeddings: number[][]; tokens: number[] };
    expect(doc.pooling).toBe('last');
    expect(doc.embeddings).toHaveLength(2);
    const ref = await llamaEmbeddings(path, texts);
    for (const [i, text] of texts.entries()) {
      expect(cosineDistance(doc.embeddings[i]!, ref[i]!)).toBeLessThan(1e-4);
      // The prompt's ids, BOS included.
      expect(doc.tokens[i]).toBe((await llamaPromptIds(path, text)).length);
    }
    expect(Math.hypot(...doc.embeddings[0]!)).toBeCloseTo(1, 5);
  });

  it('prints one line per text, and explains bad arguments', async () => {
    const r = await gufoAsync(['embed', path, '--text', 'hello']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split(' ')).toHaveLength(64);
    expect(r.stderr).toMatch(/1 embedding of 64 dimensions \(last pooling/);
    expect((await gufoAsync(['embed', path])).stderr).toMatch(/--text "<text>" is required/);
    expect((await gufoAsync(['embed', path, '--text', 'word '.repeat(40), '--ctx', '8'])).stderr).toMatch(
      /more than the context of 8/,
    );
  });
});
