/**
 * Constrained sampling on the GPU (SwiftShader): the masked sampler entry points draw only allowed
 * tokens on every path, and the engine's JSON mode on stories260K writes documents that parse and
 * validate, each greedy token being the most likely allowed one under the model's own logits.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ConstrainedTokens,
  constraintGrammar,
  type JsonConstraint,
} from '../../src-main/core/constrained/token-constraint';
import { TokenTrie } from '../../src-main/core/constrained/token-trie';
import { HarmonyRewriter } from '../../src-main/core/harmony';
import { forcedToolCall, ToolCallStream, TOOL_CALL_SYNTAX } from '../../src-main/core/tool-calls/index';
import { createTokenizer, readVocab, type Tokenizer } from '../../src-main/core/tokenizer/index';
import { Engine } from '../../src-main/engine/engine';
import {
  GREEDY,
  OpKernels,
  SAMPLER_OUT_WORDS,
  SAMPLER_STATE_WORDS,
  samplerPath,
  samplingParamsBytes,
} from '../../src-main/engine/gpu/ops';
import type { SamplingParams } from '../../src-main/engine-wire/protocol';
import { openGguf } from '../../src-main/node/gguf-io';
import { validates } from '../core/constrained/json-check';
import { STORIES_260K } from '../support/paths';
import { mulberry32, randomF32 } from '../support/random';
import { buffer, makeStep, readU32, run, uniformBuffer } from './gpu-harness';
import { STORIES_PROMPT } from './stories-fixture';

const engine = await Engine.open();
afterAll(() => engine.destroy());

describe('masked sampling kernels', () => {
  const ctx = engine.gpu;
  const ops = new OpKernels(ctx.device);
  afterAll(() => ops.destroy());

  /** `draws` tokens sampled from `logits` with only `allowed` unmasked, one step position apart. */
  async function draw(
    logits: Float32Array,
    allowed: readonly number[],
    s: SamplingParams,
    draws: number,
  ): Promise<number[]> {
    const vocab = logits.length;
    const mask = new Uint32Array(Math.ceil(vocab / 32));
    for (const id of allowed) mask[id >>> 5]! |= 1 << (id & 31);
    const args = {
      logits: buffer(ctx, logits),
      work: buffer(ctx, vocab * 4),
      state: buffer(ctx, new Uint32Array(SAMPLER_STATE_WORDS)),
      out: buffer(ctx, SAMPLER_OUT_WORDS * 4),
      params: uniformBuffer(ctx, samplingParamsBytes(vocab, s)),
      mask: buffer(ctx, mask),
    };
    const out: number[] = [];
    for (let pos = 0; pos < draws; pos++) {
      await run(ctx, [ops.sample({ ...args, step: makeStep(ctx, pos, 1) }, samplerPath(s, vocab), true)]);
      out.push((await readU32(ctx, args.out, 1))[0]!);
    }
    return out;
  }

  it('draw only allowed tokens, greedy the most likely of them, on every path', async () => {
    const rng = mulberry32(11);
    const vocab = 3000;
    const logits = randomF32(vocab, () => rng.gaussian(), 2);
    // The allowed tokens are the least likely, a little apart: every unmasked draw would miss them.
    const ranked = Array.from(logits.keys()).sort((a, b) => logits[a]! - logits[b]!);
    const allowed = ranked.slice(0, 6);
    allowed.forEach((id, i) => (logits[id] = -9 + 0.3 * i));
    const best = allowed[5]!;
    expect(await draw(logits, allowed, GREEDY, 1)).toEqual([best]);
    const settings: SamplingParams[] = [
      { ...GREEDY, temperature: 1, topK: 40, seed: 1 }, // short list, fewer allowed tokens than k
      { ...GREEDY, temperature: 1, topK: 3, seed: 2 },
      { ...GREEDY, temperature: 5, topP: 0.99, minP: 0, seed: 3 }, // whole vocabulary
      { ...GREEDY, temperature: 1, topK: 2000, seed: 4 },
      { ...GREEDY, temperature: 1, repeatPenalty: 1.5, seed: 5 },
    ];
    for (const s of settings) {
      const drawn = await draw(logits, allowed, s, 40);
      for (const t of drawn) expect(allowed, JSON.stringify(s)).toContain(t);
      if (s.topK === 3) {
        const top3 = [...allowed].sort((a, b) => logits[b]! - logits[a]!).slice(0, 3);
        for (const t of drawn) expect(top3).toContain(t);
      }
      expect(new Set(drawn).size, JSON.stringify(s)).toBeGreaterThan(1);
    }
  });
});

describe('JSON mode on stories260K', { timeout: 300_000 }, () => {
  let tokenizer: Tokenizer;
  let trie: TokenTrie;
  beforeAll(async () => {
    await engine.load(STORIES_260K, { ctx: 256 });
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      tokenizer = createTokenizer(readVocab(gguf));
    } finally {
      file.close();
    }
    trie = TokenTrie.fromTokenizer(tokenizer);
  });

  const schema = {
    type: 'object',
    properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer' } },
    required: ['answer', 'n'],
    additionalProperties: false,
  };

  it('writes greedily the most likely allowed token at every step, into a document valid for the schema', async () => {
    const constraint: JsonConstraint = { kind: 'json-schema', schema };
    const eog = tokenizer.vocab.eog;
    const r = await engine.generate(STORIES_PROMPT, { maxTokens: 120, constraint, stop: eog });
    const text = tokenizer.detokenize(r.ids.filter((id) => !eog.includes(id)));
    expect(r.stopReason, text).toBe('stop');
    expect(eog).toContain(r.ids.at(-1));
    const value = JSON.parse(text) as unknown;
    expect(validates(value, schema), text).toBe(true);

    // The model's own logits at each generated position (teacher-forced), and the allowed set there.
    const rows: Float32Array[] = [];
    await engine.logits([...STORIES_PROMPT, ...r.ids.slice(0, -1)], (logits, i) => {
      if (i >= STORIES_PROMPT.length - 1) rows.push(logits.slice());
    });
    const tokens = new ConstrainedTokens(constraintGrammar(constraint), trie, eog);
    let steered = 0;
    for (const [i, id] of r.ids.entries()) {
      const mask = tokens.mask()!;
      const allowed = (t: number) => ((mask[t >>> 5]! >>> (t & 31)) & 1) === 1;
      const row = rows[i]!;
      let best = -1;
      let top = -1;
      for (let t = 0; t < row.length; t++) {
        if (allowed(t) && (best < 0 || row[t]! > row[best]!)) best = t;
        if (top < 0 || row[t]! > row[top]!) top = t;
      }
      expect(allowed(id), `step ${i}`).toBe(true);
      // Equal to the best allowed logit (to float rounding between the batched and one-token paths).
      expect(row[best]! - row[id]!, `step ${i}: chose ${id}, best allowed ${best}`).toBeLessThan(1e-3);
      if (!allowed(top)) steered++;
      if (i < r.ids.length - 1) tokens.accept(id);
    }
    // The model alone would have written something else at most steps.
    expect(steered).toBeGreaterThan(r.ids.length / 3);
  });

  it('samples valid JSON objects, and a cut-off output is a valid prefix', async () => {
    const eog = tokenizer.vocab.eog;
    const constraint: JsonConstraint = { kind: 'json' };
    for (const sampling of [
      { temperature: 0.8, topK: 40, seed: 1 },
      { temperature: 1, seed: 2 },
    ]) {
      const r = await engine.generate(STORIES_PROMPT, { maxTokens: 40, constraint, stop: eog, sampling });
      const text = tokenizer.detokenize(r.ids.filter((id) => !eog.includes(id)));
      if (r.stopReason === 'stop') expect(typeof JSON.parse(text), text).toBe('object');
      const tokens = new ConstrainedTokens(constraintGrammar(constraint), trie, eog);
      for (const id of r.ids.filter((t) => !eog.includes(t))) tokens.accept(id);
      expect(tokens.complete).toBe(r.stopReason === 'stop');
    }
    const cut = await engine.generate(STORIES_PROMPT, { maxTokens: 4, constraint, stop: eog });
    expect(cut.stopReason).toBe('length');
    const tokens = new ConstrainedTokens(constraintGrammar(constraint), trie, eog);
    for (const id of cut.ids) tokens.accept(id);
    expect(tokenizer.detokenize(cut.ids).trimStart().startsWith('{')).toBe(true);
  });

  it('holds "required" among several functions to a name, its separator and that function\'s schema (gpt-oss, Mistral v11)', async () => {
    const functions = [
      { name: 'get_weather', parameters: schema },
      {
        name: 'get',
        parameters: {
          type: 'object',
          properties: { hours: { type: 'integer' } },
          required: ['hours'],
          additionalProperties: false,
        },
      },
    ];
    const eog = tokenizer.vocab.eog;
    for (const family of ['harmony', 'mistral-v11'] as const) {
      const forced = forcedToolCall(family, functions, true);
      for (const seed of [1, 2, 3]) {
        const r = await engine.generate(STORIES_PROMPT, {
          maxTokens: 120,
          constraint: forced.constraint,
          stop: eog,
          sampling: { temperature: 1, seed },
        });
        const text = tokenizer.detokenize(r.ids.filter((id) => !eog.includes(id)));
        expect(r.stopReason, text).toBe('stop');
        // gpt-oss's output is read after the harmony rewriter, as the server decodes it.
        const rewriter = new HarmonyRewriter();
        const stream = new ToolCallStream(TOOL_CALL_SYNTAX[family], forced.opening);
        stream.push(family === 'harmony' ? rewriter.push(text) + rewriter.flush() : text);
        const { calls, complete } = stream.end();
        expect(complete, text).toBe(true);
        expect(calls, text).toHaveLength(1);
        const f = functions.find((fn) => fn.name === calls![0]!.name);
        expect(f, text).toBeDefined();
        expect(validates(JSON.parse(calls![0]!.arguments), f!.parameters), text).toBe(true);
      }
    }
  });

  it('refuses a schema it cannot hold to, and generates unconstrained as before afterwards', async () => {
    const plain = await engine.generate(STORIES_PROMPT, { maxTokens: 8, stop: [] });
    await expect(
      engine.generate(STORIES_PROMPT, {
        maxTokens: 8,
        constraint: { kind: 'json-schema', schema: { type: 'string', pattern: 'x' } },
      }),
    ).rejects.toThrow(/"pattern" at #/);
    await engine.generate(STORIES_PROMPT, { maxTokens: 3, constraint: { kind: 'json' } });
    expect((await engine.generate(STORIES_PROMPT, { maxTokens: 8, stop: [] })).ids).toEqual(plain.ids);
  });
});
