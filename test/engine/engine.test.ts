/**
 * The Engine in-process: prefill chunking and the KV prefix reuse give the same tokens as a fresh
 * one-token-at-a-time evaluation, sampling is reproducible from its seed, and the limits (context,
 * stop tokens, unsupported models) end generations or loads cleanly.
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Engine } from '../../src-main/engine/engine';
import { UnsupportedModelError } from '../../src-main/engine/model/hparams';
import { kvCacheParts } from '../../src-main/engine/model/decoder';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';
import { STORIES_GREEDY, STORIES_PROMPT } from './stories-fixture';

const engine = await Engine.open();
afterAll(() => engine.destroy());

describe('Engine', () => {
  it("refuses a context where one KV head's cache outgrows the adapter's largest binding, naming the largest that fits", async () => {
    const { maxStorageBufferBindingSize, maxBufferSize } = engine.gpu.device.limits;
    // stories260K: KV heads of 8, F16: 16 bytes of K per position, KV head and layer.
    const fits = Math.floor(Math.min(maxStorageBufferBindingSize, maxBufferSize) / 16);
    await expect(engine.load(STORIES_260K, { ctx: fits + 1 })).rejects.toThrow(
      new RegExp(
        `^a context of ${fits + 1} tokens needs \\d+ MiB of KV cache per KV head and layer, more than the \\d+ MiB .+ binds at once: the largest context that fits is ${fits} tokens$`,
      ),
    );
    // The same under a lower limit (WebGPU grants none below its defaults: the option stands in).
    await expect(engine.load(STORIES_260K, { ctx: 64, kvBindingLimit: 64 * 16 - 1 })).rejects.toThrow(
      /the largest context that fits is 63 tokens$/,
    );
    await engine.load(STORIES_260K, { ctx: 64 });
  });

  it("splits a KV cache that outgrows a binding by KV heads, and still gives llama.cpp's tokens", async () => {
    // stories260K's 4 KV heads at 64 positions: 1 KiB of F16 K per head and layer.
    const parts = (kvBindingLimit: number) =>
      kvCacheParts(
        engine.gpu,
        { headDim: 8, nHeadKv: 4 },
        { ctx: 64, kvTypes: { k: 'f16', v: 'f16' }, kvBindingLimit },
      );
    expect(parts(3000)).toEqual([
      { first: 0, count: 2 },
      { first: 2, count: 2 },
    ]);
    expect(parts(1024).map((p) => p.count)).toEqual([1, 1, 1, 1]);
    // Prefill in chunks of 7 (store_kv, then tiled attention per part), then decode (flash decoding with STORE per part).
    const prompt = [...STORIES_PROMPT, ...STORIES_GREEDY.slice(0, 15)];
    for (const kvBindingLimit of [3000, 1024]) {
      await engine.load(STORIES_260K, { ctx: 64, maxBatch: 7, kvBindingLimit });
      expect((await engine.generate(prompt, { maxTokens: 10, stop: [] })).ids).toEqual(STORIES_GREEDY.slice(15, 25));
    }
  });

  it('gives the same tokens whatever the prefill chunking, and reuses the cached prefix', async () => {
    // A 20-token prompt (prompt + 15 greedy tokens), evaluated in chunks of 7.
    const prompt = [...STORIES_PROMPT, ...STORIES_GREEDY.slice(0, 15)];
    await engine.load(STORIES_260K, { ctx: 64, maxBatch: 7 });
    const chunked = await engine.generate(prompt, { maxTokens: 10, stop: [] });
    expect(chunked.ids).toEqual(STORIES_GREEDY.slice(15, 25));
    expect(chunked.timings.promptTokens).toBe(20);

    // The same prompt again: only its last token is evaluated.
    const again = await engine.generate(prompt, { maxTokens: 10, stop: [] });
    expect(again.ids).toEqual(chunked.ids);
    expect(again.timings.promptTokens).toBe(1);

    // A prompt that goes on with the generated tokens (as a chat does): they were fed back, so
    // they are in the cache too, and again only the last token is evaluated.
    const longer = [...prompt, ...STORIES_GREEDY.slice(15, 20)];
    const extended = await engine.generate(longer, { maxTokens: 5, stop: [] });
    expect(extended.ids).toEqual(STORIES_GREEDY.slice(20, 25));
    expect(extended.timings.promptTokens).toBe(1);

    // A prompt that parts from the cache after 12 tokens: evaluated from there.
    const other = [...prompt.slice(0, 12), ...STORIES_GREEDY.slice(40, 44)];
    const parted = await engine.generate(other, { maxTokens: 3, stop: [] });
    expect(parted.timings.promptTokens).toBe(4);
    engine.resetCache();
    expect((await engine.generate(other, { maxTokens: 3, stop: [] })).ids).toEqual(parted.ids);
  });

  it('samples reproducibly from a seed, and differently from another', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const sampling = { temperature: 1.2, topK: 40, topP: 0.95, minP: 0.02, seed: 7 };
    const a = await engine.generate(STORIES_PROMPT, { maxTokens: 24, sampling, stop: [] });
    engine.resetCache();
    const b = await engine.generate(STORIES_PROMPT, { maxTokens: 24, sampling, stop: [] });
    const c = await engine.generate(STORIES_PROMPT, { maxTokens: 24, sampling: { ...sampling, seed: 8 }, stop: [] });
    expect(b.ids).toEqual(a.ids);
    expect(c.ids).not.toEqual(a.ids);
  });

  it('the repetition penalty changes a greedy continuation that repeats', async () => {
    await engine.load(STORIES_260K, { ctx: 128 });
    const plain = await engine.generate(STORIES_PROMPT, { maxTokens: 40, stop: [] });
    const penalized = await engine.generate(STORIES_PROMPT, {
      maxTokens: 40,
      stop: [],
      sampling: { repeatPenalty: 1.5 },
    });
    expect(penalized.ids).not.toEqual(plain.ids);
    const repeats = (ids: number[]) => ids.length - new Set(ids).size;
    expect(repeats(penalized.ids)).toBeLessThan(repeats(plain.ids));
  });

  it('stops at a stop token, at the end of the context, and returns top log-probabilities', async () => {
    await engine.load(STORIES_260K, { ctx: 16 });
    const stopped = await engine.generate(STORIES_PROMPT, { maxTokens: 10, stop: [STORIES_GREEDY[3]!] });
    expect(stopped).toMatchObject({ ids: STORIES_GREEDY.slice(0, 4), stopReason: 'stop' });
    const full = await engine.generate(STORIES_PROMPT, { maxTokens: 100, stop: [], topLogprobs: 2 });
    // 5 prompt tokens + 11 fed tokens fill 16 positions; the 12th token is sampled from the last.
    expect(full.stopReason).toBe('context');
    expect(full.ids).toEqual(STORIES_GREEDY.slice(0, 12));
    expect(full.logprobs).toHaveLength(12);
    for (const [i, top] of full.logprobs!.entries()) {
      expect(top[0]![0]).toBe(full.ids[i]);
      expect(top[0]![1]).toBeGreaterThanOrEqual(top[1]![1]);
      expect(top[0]![1]).toBeLessThanOrEqual(0);
    }
  });

  it("reports each sampled token's true log-probability, also for tokens outside the top list", async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const chosen: { id: number; logprob: number; top: [number, number][] }[] = [];
    const r = await engine.generate(STORIES_PROMPT, {
      maxTokens: 40,
      stop: [],
      sampling: { temperature: 2, seed: 7 },
      topLogprobs: 1,
      onToken: (t) => chosen.push({ id: t.id, logprob: t.logprob!, top: t.top! }),
    });
    expect(chosen.map((t) => t.id)).toEqual(r.ids);
    // The reference: log-softmax of the full logits, on the CPU, teacher-forced over the same tokens.
    const expected: number[] = [];
    const ids = [...STORIES_PROMPT, ...r.ids.slice(0, -1)];
    await engine.logits(ids, (logits, i) => {
      if (i < STORIES_PROMPT.length - 1) return;
      const id = r.ids[i - STORIES_PROMPT.length + 1]!;
      const m = logits.reduce((a, b) => Math.max(a, b), -Infinity);
      const logZ = m + Math.log(logits.reduce((s, z) => s + Math.exp(z - m), 0));
      expected.push(logits[id]! - logZ);
    });
    chosen.forEach((t, i) => expect(Math.abs(t.logprob - expected[i]!)).toBeLessThan(1e-3));
    // Temperature 2 draws many tokens that are not the most likely one: those are checked too.
    const outside = chosen.filter((t) => t.top[0]![0] !== t.id);
    expect(outside.length).toBeGreaterThan(5);
    for (const t of outside) expect(t.logprob).toBeLessThan(t.top[0]![1]);
  });

  it('refuses what it cannot run before using the GPU', async () => {
    const path = join(tempDir(), 'falcon.gguf');
    await writeRandomModel(path, { arch: 'falcon', nLayer: 1, nEmbd: 32, nFf: 64, nHead: 2 });
    await expect(engine.load(path)).rejects.toThrow(UnsupportedModelError);
    await expect(engine.load(path)).rejects.toThrow(/architecture "falcon" is not supported/);
    expect(engine.info.model).toBeNull();
    await expect(engine.generate([1], { maxTokens: 1 })).rejects.toThrow(/no model loaded/);
  });
});
