/**
 * `gufo embed` through bin/gufo.mjs on a random qwen3 embedding model (pooling_type last): the
 * vectors equal llama.cpp's embeddings of the same texts (node-llama-cpp), unit-length.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gufoAsync } from '../support/cli';
import { llamaCpp } from '../support/llama';
import { writeRandomModel } from '../support/test-models';

const dir = mkdtempSync(join(tmpdir(), 'gufo-embed-cli-'));
const path = join(dir, 'embed.gguf');
beforeAll(() => writeRandomModel(path, { arch: 'qwen3', nLayer: 2, nEmbd: 64, nFf: 128, nHead: 4, nHeadKv: 2, scale: 0.1, randomNorms: true, poolingType: 3 }));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cosineDistance(a: readonly number[], b: readonly number[]): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!;
    na += a[i]! * a[i]!;
    nb += b[i]! * b[i]!;
  }
  return 1 - dot / Math.sqrt(na * nb);
}

describe('gufo embed', { timeout: 120_000 }, () => {
  it("--json: llama.cpp's vectors for each --text, with the pooling and token counts", async () => {
    const texts = ['Once upon a time', 'a dog'];
    const r = await gufoAsync(['embed', path, '--text', texts[0]!, '--text', texts[1]!, '--json']);
    expect(r.status, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.pooling).toBe('last');
    expect(doc.embeddings).toHaveLength(2);
    const model = await (await llamaCpp()).loadModel({ modelPath: path });
    try {
      const context = await model.createEmbeddingContext({ contextSize: 128, threads: 1 });
      for (const [i, text] of texts.entries()) {
        const ref = [...(await context.getEmbeddingFor(text)).vector];
        expect(cosineDistance(doc.embeddings[i], ref)).toBeLessThan(1e-4);
        expect(doc.tokens[i]).toBe(model.tokenize(text).length + 1);
      }
    } finally {
      await model.dispose();
    }
    expect(Math.hypot(...doc.embeddings[0])).toBeCloseTo(1, 5);
  });

  it('prints one line per text, and explains bad arguments', async () => {
    const r = await gufoAsync(['embed', path, '--text', 'hello']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim().split(' ')).toHaveLength(64);
    expect(r.stderr).toMatch(/1 embedding of 64 dimensions \(last pooling/);
    expect((await gufoAsync(['embed', path])).stderr).toMatch(/--text "<text>" is required/);
    expect((await gufoAsync(['embed', path, '--text', 'word '.repeat(40), '--ctx', '8'])).stderr).toMatch(/more than the context of 8/);
  });
});
