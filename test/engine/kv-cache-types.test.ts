/**
 * Quantized KV caches against llama.cpp (node-llama-cpp on the CPU, flash attention, which llama.cpp
 * needs for a quantized V cache), on a random llama with heads of 64 after a prompt of 1,024 tokens:
 * teacher-forced over the last 64 positions (the prompt evaluated in batches: store_kv_quant and
 * prefill attention), the engine with a q8_0 cache is no further from llama.cpp's f16 cache (mean
 * KL) than llama.cpp's own q8_0 cache is, and nearer llama.cpp's q8_0 than that; q4_0 and a q8_0 V
 * alone likewise, far nearer llama.cpp's (the same rotated, quantized values); greedy decode with
 * a q8_0 cache (decode attention storing its rows) gives llama.cpp's q8_0 tokens, parting only at a
 * near-tie of the reference. The greedy runs follow the q8_0 teacher-forced runs on the same
 * load and context, so the 1,024-token prompt is evaluated once per cache type on each side.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { KvCacheTypes } from '../../src-preload/api/kv-cache';
import { Engine } from '../../src-main/engine/engine';
import { mulberry32 } from '../support/random';
import { TEST_VOCAB, WIDE_LLAMA, writeRandomModel } from '../support/test-models';
import {
  compareDistributions,
  llamaForcedThenGreedy,
  llamaTeacherForced,
  logSoftmax,
  type Agreement,
  type GreedyReference,
} from './llama-reference';

const engine = await Engine.open();
const dir = mkdtempSync(join(tmpdir(), 'gufo-kv-types-'));
afterAll(() => {
  engine.destroy();
  rmSync(dir, { recursive: true, force: true });
});

const PROMPT = 1024;
const FORCED = 64;
const GENERATED = 12;
const CTX = PROMPT + GENERATED + 8;
const path = join(dir, 'llama-heads-64.gguf');
await writeRandomModel(path, { ...WIDE_LLAMA, seed: 51, contextLength: 4096 });
const rng = mulberry32(51);
const prompt = [1, ...Array.from({ length: PROMPT - 1 }, () => 3 + rng.int(TEST_VOCAB - 3))];
const from = PROMPT - FORCED;
/** llama.cpp's next-token log-probabilities over the last FORCED positions, with `kv` caches. */
const llamas = (kv: KvCacheTypes) => llamaTeacherForced(path, prompt, TEST_VOCAB, CTX, { from, kv });
const llamaF16 = llamas({ k: 'f16', v: 'f16' });

/** The engine's, likewise. */
async function ours(kvTypes: KvCacheTypes): Promise<Float64Array[]> {
  await engine.load(path, { ctx: CTX, kvTypes });
  const out: Float64Array[] = [];
  await engine.logits(prompt, (logits, i) => i >= from && out.push(logSoftmax(logits)));
  return out;
}

const fmt = (a: Agreement) => `mean KL ${a.meanKl.toExponential(2)} (top-1 ${(a.top1 * 100).toFixed(1)}%)`;

describe(`KV cache types after ${PROMPT} tokens, teacher-forced over the last ${FORCED} positions, against llama.cpp`, () => {
  it("f16: llama.cpp's distributions", async () => {
    const exact = compareDistributions(await llamaF16, await ours({ k: 'f16', v: 'f16' }));
    console.log(`f16: engine against llama.cpp ${fmt(exact)}`);
    expect(exact.meanKl).toBeLessThan(1e-6);
  }, 600_000);

  // q8_0 is the issue's bar. llama.cpp also rounds the query to q8_0 for its dot products with a
  // quantized K, which the engine does not: with a q8_0 K that rounding is most of what parts the
  // two; with q4_0, or a q8_0 V alone, they hold the same values and part far less.
  // q8_0 also decodes greedily after its teacher-forced positions: `greedy` says how far.
  const cases: { kv: KvCacheTypes; slack: number; apart: number; greedy?: number }[] = [
    { kv: { k: 'q8_0', v: 'q8_0' }, slack: 1, apart: 1, greedy: GENERATED },
    { kv: { k: 'q4_0', v: 'q4_0' }, slack: 1.1, apart: 0.1 },
    { kv: { k: 'f16', v: 'q8_0' }, slack: 1.1, apart: 0.01 },
  ];
  for (const { kv, slack, apart, greedy } of cases) {
    const name = `${kv.k}/${kv.v}`;
    const title =
      `${name}: as far from llama.cpp's f16 cache as llama.cpp's own ${name} cache (× ${slack}), and nearer that (× ${apart})` +
      (greedy ? `; greedy decode gives llama.cpp ${name} tokens` : '');
    it(
      title,
      async () => {
        const reference = await llamaF16;
        let same: Float64Array[];
        let greedyRef: GreedyReference | undefined;
        if (greedy) {
          ({ forced: same, greedy: greedyRef } = await llamaForcedThenGreedy(
            path,
            prompt,
            TEST_VOCAB,
            CTX,
            { from, kv },
            greedy,
          ));
        } else same = await llamas(kv);
        const mine = await ours(kv);
        const own = compareDistributions(reference, same);
        const fromF16 = compareDistributions(reference, mine);
        const fromSame = compareDistributions(same, mine);
        console.log(
          `${name}: against llama.cpp f16, llama.cpp ${name} ${fmt(own)}, engine ${name} ${fmt(fromF16)}; engine against llama.cpp ${name} ${fmt(fromSame)}`,
        );
        expect(fromF16.meanKl).toBeLessThanOrEqual(own.meanKl * slack);
        expect(fromSame.meanKl).toBeLessThan(own.meanKl * apart);

        if (!greedyRef) return;
        // The engine still holds this cache type's load: decode attention stores its rows in it.
        const decoded = await engine.generate(prompt, { maxTokens: greedy!, stop: [] });
        const parted = decoded.ids.findIndex((id, i) => id !== greedyRef.ids[i]);
        console.log(
          `${name} greedy: ${parted === -1 ? `equal for ${greedy} tokens` : `parts at ${parted} (reference gap ${greedyRef.gaps[parted]!.toFixed(3)})`}`,
        );
        expect(greedyRef.ids.length).toBe(greedy);
        expect(decoded.ids.length).toBe(greedy);
        if (parted !== -1) expect(greedyRef.gaps[parted]!).toBeLessThan(0.1);
      },
      600_000,
    );
  }
});
