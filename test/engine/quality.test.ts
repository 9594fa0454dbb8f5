/**
 * Teacher-forced window evaluation in the engine (perplexity, KL divergence), on SwiftShader here:
 * the scored positions and the log-probability file against the engine's own logits, the
 * protocol path through the handler, and KL against llama.cpp's own distributions.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createTokenizer, readVocab } from '../../src-main/core/tokenizer/index';
import { Engine } from '../../src-main/engine/engine';
import { evaluateWindow } from '../../src-main/engine/evaluate';
import { DivergenceStats } from '../../src-main/core/quality/divergence';
import { EngineHandler } from '../../src-main/engine/handler';
import type { EngineMessage } from '../../src-main/engine-wire/protocol';
import { openGguf } from '../../src-main/node/gguf-io';
import { quantizeFile } from '../../src-main/node/quantize';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { WIDE_LLAMA, writeRandomModel } from '../support/test-models';
import { compareDistributions, llamaTeacherForced, logSoftmax } from './llama-reference';
import { writeDecodedCopy } from './quantized-models';

const engine = await Engine.open();
afterAll(() => engine.destroy());

const VOCAB = 512;

/** BOS and the tokens of a short story, with stories260K's tokenizer. */
function storyIds(text: string): number[] {
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    return createTokenizer(readVocab(gguf)).tokenize(text, { addBos: true });
  } finally {
    file.close();
  }
}

const IDS = storyIds(
  'Once upon a time, there was a little dog named Max. Max liked to run in the park with his friend, a big cat. One day, the cat was sad.',
);

describe('evaluateWindow', () => {
  it('scores positions first … n−2, writes their log-probabilities where asked, and finds no divergence from itself', async () => {
    await engine.load(STORIES_260K, { ctx: 64 });
    const all: Float64Array[] = [];
    await engine.logits(IDS, (logits) => all.push(logSoftmax(logits)));
    const first = 10;
    const count = IDS.length - 1 - first;
    const file = join(tempDir(), 'base.logprobs');
    writeFileSync(file, '');
    const position = 3; // as if an earlier window had scored 3 positions

    const saved = await evaluateWindow(engine, { ids: IDS, first, saveLogProbs: { path: file, position } });
    expect(saved.comparison).toBeUndefined();
    expect(saved.nll).toHaveLength(count);
    saved.nll.forEach((v, k) =>
      expect(v, `position ${first + k}`).toBeCloseTo(-all[first + k]![IDS[first + k + 1]!]!, 9),
    );

    const bytes = readFileSync(file);
    expect(bytes.length).toBe((position + count) * VOCAB * 4);
    const stored = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    expect(stored.subarray(0, position * VOCAB).every((v) => v === 0)).toBe(true);
    for (let k = 0; k < count; k++) {
      const row = stored.subarray((position + k) * VOCAB, (position + k + 1) * VOCAB);
      expect(
        row.every((v, t) => Math.abs(v - all[first + k]![t]!) <= 1e-6 * Math.max(1, Math.abs(v))),
        `position ${first + k}`,
      ).toBe(true);
    }

    const same = await evaluateWindow(engine, { ids: IDS, first, baseLogProbs: { path: file, position } });
    const c = same.comparison!;
    expect(same.nll).toHaveLength(count);
    same.nll.forEach((v, k) => expect(v).toBeCloseTo(saved.nll[k]!, 9));
    expect(c.sameTop.every(Boolean)).toBe(true);
    expect(Math.max(...c.kl.map(Math.abs))).toBeLessThan(1e-6); // f32 storage of the base's log-probabilities
    expect(Math.max(...c.deltaP.map(Math.abs), ...c.deltaPNext.map(Math.abs))).toBeLessThan(1e-6);

    await expect(
      evaluateWindow(engine, { ids: IDS, first, baseLogProbs: { path: file, position: position + 1 } }),
    ).rejects.toThrow(
      `${file}: holds ${bytes.length} bytes of log-probabilities, this window needs ${bytes.length + VOCAB * 4}`,
    );
    await expect(evaluateWindow(engine, { ids: IDS, first: IDS.length - 1 })).rejects.toThrow(
      `first must be a position from 0 to ${IDS.length - 2}`,
    );
  });

  it('answers evaluate requests through the handler, and refuses malformed ones before touching the GPU', async () => {
    const sent: EngineMessage[] = [];
    const waiting = new Map<number, (m: EngineMessage) => void>();
    const handler = new EngineHandler(
      (m) => {
        sent.push(m);
        if (m.id !== null && m.type !== 'progress') waiting.get(m.id)?.(m);
      },
      () => {},
      () => Promise.resolve(engine),
    );
    const answer = (id: number) => new Promise<EngineMessage>((resolve) => waiting.set(id, resolve));
    handler.handle({ id: 1, type: 'evaluate', ids: [1], first: 0 });
    handler.handle({ id: 2, type: 'evaluate', ids: [1, 2], first: -1 });
    handler.handle({ id: 3, type: 'evaluate', ids: [1, 2], first: 0, baseLogProbs: { path: 7, position: 0 } });
    expect(sent).toEqual([
      { id: 1, type: 'error', message: 'evaluate: ids must be an array of at least 2 token ids' },
      { id: 2, type: 'error', message: 'evaluate: first must be a non-negative integer' },
      { id: 3, type: 'error', message: 'evaluate: saveLogProbs and baseLogProbs must be { path, position }' },
    ]);

    const [loaded, evaluatedAnswer] = [answer(4), answer(5)];
    handler.handle({ id: 4, type: 'load', path: STORIES_260K, ctx: 64 });
    handler.handle({ id: 5, type: 'evaluate', ids: IDS, first: 0 });
    expect(await loaded).toMatchObject({ type: 'loaded' });
    const evaluated = await evaluatedAnswer;
    expect(evaluated.type).toBe('evaluated');
    const direct = await evaluateWindow(engine, { ids: IDS, first: 0 });
    if (evaluated.type === 'evaluated')
      evaluated.result.nll.forEach((v, k) => expect(v).toBeCloseTo(direct.nll[k]!, 9));
  });
});

describe('KL divergence against llama.cpp', () => {
  it("a Q4_0 export of stories260K: the engine's KL, top-1 and perplexities are llama.cpp's", async () => {
    const dir = tempDir();
    const quant = join(dir, 'stories-q4_0.gguf');
    const exact = join(dir, 'stories-q4_0-decoded.gguf');
    await quantizeFile(STORIES_260K, quant, 'Q4_0');
    await writeDecodedCopy(quant, exact);
    const file = join(dir, 'base.logprobs');
    writeFileSync(file, '');

    await engine.load(STORIES_260K, { ctx: 64 });
    const base = await evaluateWindow(engine, { ids: IDS, first: 0, saveLogProbs: { path: file, position: 0 } });
    await engine.load(quant, { ctx: 64 });
    const ours = await evaluateWindow(engine, { ids: IDS, first: 0, baseLogProbs: { path: file, position: 0 } });

    // llama.cpp on the source and on the exact F32 copy of the export (llama.cpp on the Q4_0 file
    // itself rounds activations to 8 bits, which the engine does not).
    const refBase = (await llamaTeacherForced(STORIES_260K, IDS, VOCAB)).slice(0, -1);
    const refQuant = (await llamaTeacherForced(exact, IDS, VOCAB)).slice(0, -1);
    const ref = compareDistributions(refBase, refQuant);
    const c = ours.comparison!;
    const meanKl = c.kl.reduce((a, b) => a + b, 0) / c.kl.length;
    const top1 = c.sameTop.filter(Boolean).length / c.sameTop.length;
    const ppl = (nll: number[]) => Math.exp(nll.reduce((a, b) => a + b, 0) / nll.length);
    const refPpl = (lp: Float64Array[]) => ppl(lp.map((row, j) => -row[IDS[j + 1]!]!));
    console.log(
      `stories260K vs Q4_0 over ${c.kl.length} positions: mean KL ${meanKl.toExponential(3)} (llama.cpp ${ref.meanKl.toExponential(3)}), ` +
        `top-1 ${(top1 * 100).toFixed(1)}% (llama.cpp ${(ref.top1 * 100).toFixed(1)}%), PPL ${ppl(base.nll).toFixed(4)} → ${ppl(ours.nll).toFixed(4)} ` +
        `(llama.cpp ${refPpl(refBase).toFixed(4)} → ${refPpl(refQuant).toFixed(4)})`,
    );
    expect(c.kl).toHaveLength(IDS.length - 1);
    expect(meanKl).toBeGreaterThan(1e-3); // a real difference to measure
    expect(Math.abs(meanKl - ref.meanKl)).toBeLessThan(0.01 * ref.meanKl);
    expect(Math.abs(top1 - ref.top1)).toBeLessThanOrEqual(1 / c.kl.length + 1e-12);
    expect(ppl(base.nll) / refPpl(refBase)).toBeCloseTo(1, 3);
    expect(ppl(ours.nll) / refPpl(refQuant)).toBeCloseTo(1, 3);
  }, 120_000);
});

describe('KL divergence of exports', () => {
  it('a random-weight model: Q8_0 < Q6_K < Q4_K_M < Q2_K', async () => {
    const dir = tempDir();
    const source = join(dir, 'random-f32.gguf');
    await writeRandomModel(source, { ...WIDE_LLAMA, seed: 31 });
    const file = join(dir, 'base.logprobs');
    writeFileSync(file, '');
    await engine.load(source, { ctx: 64 });
    const base = await evaluateWindow(engine, { ids: IDS, first: 0, saveLogProbs: { path: file, position: 0 } });
    const figures: string[] = [];
    const meanKl: number[] = [];
    for (const type of ['Q8_0', 'Q6_K', 'Q4_K_M', 'Q2_K'] as const) {
      const quant = join(dir, `random-${type}.gguf`);
      await quantizeFile(source, quant, type);
      await engine.load(quant, { ctx: 64 });
      const stats = new DivergenceStats();
      stats.addBase(base);
      stats.addCompared(
        await evaluateWindow(engine, { ids: IDS, first: 0, baseLogProbs: { path: file, position: 0 } }),
      );
      const s = stats.summary();
      meanKl.push(s.meanKl);
      figures.push(
        `${type} mean KL ${s.meanKl.toExponential(2)}, p99 ${s.p99Kl.toExponential(2)}, top-1 ${(s.top1 * 100).toFixed(1)}%`,
      );
    }
    console.log(`random llama against its exports over ${IDS.length - 1} positions: ${figures.join('; ')}`);
    for (let i = 1; i < meanKl.length; i++) expect(meanKl[i]!, figures[i]).toBeGreaterThan(meanKl[i - 1]!);
  }, 180_000);
});
