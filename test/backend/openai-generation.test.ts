/**
 * The OpenAI-compatible API generating with the real engine (WebGPU on SwiftShader) and
 * stories260K, through the official `openai` client: streaming, completions as llama.cpp writes
 * them, stop sequences, log-probabilities, concurrency, disconnects and overload; and `n` choices,
 * each its own draw (seed + index), numbered, streamed with its index, the usage summed, with each
 * sampled token's true log-probability, also outside the top list. Then JSON mode
 * (response_format json_object / json_schema): a story model that never saw JSON answers with
 * documents that parse and follow the schema, streamed or not; an answer cut by max_tokens ends
 * with finish_reason "length" and is the start of a valid document. One server for all (one
 * engine load).
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openModelText, promptTokens } from '../../src-main/backend/chat/prompt';
import { isComplete, matchBytes, start } from '../../src-main/core/constrained/json-matcher';
import { ANY_OBJECT } from '../../src-main/core/constrained/json-schema';
import { defaultPromptFormat } from '../../src-main/core/prompt-format';
import { DEFAULT_MAX_QUEUE } from '../../src-main/backend/openai/service';
import { greedyCompletion } from '../support/llama';
import { utf8, validates } from '../core/constrained/json-check';
import { STORIES_260K } from '../support/paths';
import { metric, send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const model = 'stories260k';
const prompt = 'Once upon a time';

let t: OpenAiTestServer;
const metrics = async () => (await send(t.server.port, 'GET', '/metrics')).body;

beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

// SwiftShader is slow, and slower still on a busy machine.
describe('generation through the OpenAI-compatible API', { timeout: 240_000 }, () => {
  it('streams chat deltas that assemble to exactly the non-streamed answer at temperature 0: the engine greedy output for the rendered chat', async () => {
    const client = t.client();
    const messages = [
      { role: 'system' as const, content: 'You tell stories.' },
      { role: 'user' as const, content: prompt },
    ];
    const whole = await client.chat.completions.create({ model, messages, temperature: 0, max_tokens: 20 });
    expect(whole).toMatchObject({
      object: 'chat.completion',
      model,
      choices: [{ index: 0, message: { role: 'assistant' }, logprobs: null }],
    });
    expect(whole.id).toMatch(/^chatcmpl-/);
    const answer = whole.choices[0]!.message.content!;
    expect(answer.length).toBeGreaterThan(0);

    const stream = await client.chat.completions.create({
      model,
      messages,
      temperature: 0,
      max_tokens: 20,
      stream: true,
      stream_options: { include_usage: true },
    });
    let streamed = '';
    let finish: string | null = null;
    let usage: unknown = null;
    let role: string | undefined;
    for await (const chunk of stream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices[0];
      if (!choice) continue;
      role ??= choice.delta.role;
      streamed += choice.delta.content ?? '';
      finish = choice.finish_reason ?? finish;
    }
    expect(role).toBe('assistant');
    expect(streamed).toBe(answer);
    expect(finish).toBe(whole.choices[0]!.finish_reason);
    // The same prompt again: its slot's KV cache holds all of it but the last token, which gives the first logits.
    expect(usage).toEqual({ ...whole.usage, prompt_tokens_details: { cached_tokens: whole.usage!.prompt_tokens - 1 } });

    // The same prompt run on the engine directly, without the server.
    const text = openModelText(STORIES_260K);
    try {
      // Rendered as the API renders it: stories260K has no chat template, so plain text (issue #30 item 8).
      const format = defaultPromptFormat(text.hasChatTemplate);
      const rendered = promptTokens(text, { kind: 'chat', messages, addGenerationPrompt: true, format }, Infinity);
      const ids = 'ids' in rendered ? rendered.ids : [];
      const direct = await t.backend.context.engines.withModel({ path: STORIES_260K, ctx: 2048 }, ({ host }) =>
        host.generate({ prompt: ids, maxTokens: 20, stop: text.stop }),
      );
      expect(answer).toBe(text.tokenizer.detokenize(direct.ids.filter((id) => !text.stop.includes(id))));
      expect(whole.usage).toEqual({
        prompt_tokens: ids.length,
        completion_tokens: direct.ids.length,
        total_tokens: ids.length + direct.ids.length,
        prompt_tokens_details: { cached_tokens: 0 },
      });
      expect(whole.choices[0]!.finish_reason).toBe(direct.stopReason === 'stop' ? 'stop' : 'length');
    } finally {
      text.close();
    }
  });

  it('continues "Once upon a time" on /v1/completions as llama.cpp does, streamed or not', async () => {
    const client = t.client();
    const reference = await greedyCompletion(STORIES_260K, prompt, 24);
    expect(reference.startsWith(', there was a little girl named Lily.')).toBe(true);
    const whole = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0 });
    expect(whole).toMatchObject({
      object: 'text_completion',
      model,
      choices: [{ index: 0, text: reference, finish_reason: 'length', logprobs: null }],
    });
    expect(whole.usage).toMatchObject({ completion_tokens: 24 });

    const stream = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0, stream: true });
    let streamed = '';
    for await (const chunk of stream) streamed += chunk.choices[0]?.text ?? '';
    expect(streamed).toBe(reference);
  });

  it('cuts the output at a stop sequence, streamed or not, and stops generating there', async () => {
    const client = t.client();
    const stop = [' named', 'dragon'];
    const whole = await client.completions.create({ model, prompt, max_tokens: 24, temperature: 0, stop });
    expect(whole.choices[0]).toMatchObject({ text: ', there was a little girl', finish_reason: 'stop' });
    expect(whole.usage!.completion_tokens).toBeLessThan(12);

    const stream = await client.completions.create({
      model,
      prompt,
      max_tokens: 24,
      temperature: 0,
      stop,
      stream: true,
    });
    const pieces: string[] = [];
    let finish: string | null = null;
    for await (const chunk of stream) {
      pieces.push(chunk.choices[0]?.text ?? '');
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(pieces.join('')).toBe(', there was a little girl');
    expect(finish).toBe('stop');
    expect(pieces.some((p) => p.includes(' n'))).toBe(false);
  });

  it("reports each token's log-probability and the most likely alternatives, as the engine gives them", async () => {
    const client = t.client();
    // What the KV cache holds decides which kernel computes the prompt's last position (prefill or
    // decode), and their sums differ in the last bits: both requests start from a cache that
    // shares only BOS with the prompt.
    const engine = { path: STORIES_260K, ctx: 2048 };
    const vocab = openModelText(STORIES_260K);
    const tokens = (text: string) => vocab.tokenizer.tokenize(text, { addBos: true, parseSpecial: true });
    const elsewhere = () =>
      t.backend.context.engines.withModel(engine, ({ host }) =>
        host.generate({ prompt: tokens('Zebras'), maxTokens: 1 }),
      );
    await elsewhere();
    const r = await client.completions.create({ model, prompt, max_tokens: 8, temperature: 0, logprobs: 3 });
    const { text, logprobs } = r.choices[0]!;
    const lp = logprobs!;
    expect(lp.tokens!.join('')).toBe(text);
    expect(lp.tokens!.map((tok, i) => text.slice(lp.text_offset![i], lp.text_offset![i]! + tok.length))).toEqual(
      lp.tokens,
    );
    await elsewhere();
    const ids = await t.backend.context.engines.withModel(engine, async ({ host }) => {
      try {
        return await host.generate({ prompt: tokens(prompt), maxTokens: 8, topLogprobs: 3 });
      } finally {
        vocab.close();
      }
    });
    expect(lp.token_logprobs).toEqual(ids.logprobs!.map((top) => top[0]![1]));
    lp.top_logprobs!.forEach((top, i) => {
      expect(Object.values(top)).toEqual(ids.logprobs![i]!.map(([, logprob]) => logprob));
      expect(top[lp.tokens![i]!]).toBe(lp.token_logprobs![i]);
    });

    const chat = await client.chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt }],
      max_tokens: 6,
      temperature: 0,
      logprobs: true,
      top_logprobs: 2,
    });
    const content = chat.choices[0]!.logprobs!.content!;
    expect(content.length).toBeGreaterThan(0);
    for (const token of content) {
      expect(token.bytes).toEqual([...Buffer.from(token.token)]);
      expect(token.top_logprobs).toHaveLength(2);
      expect(token.top_logprobs[0]).toMatchObject({ token: token.token, logprob: token.logprob });
      expect(token.top_logprobs[1]!.logprob).toBeLessThanOrEqual(token.logprob);
    }
    expect(
      content
        .map((c) => c.token)
        .join('')
        .trimStart(),
    ).toBe(chat.choices[0]!.message.content);
  });

  it('answers 8 concurrent requests, one model queue in order, and counts them', async () => {
    const client = t.client();
    const before = await metrics();
    const stories = ['Lily', 'Tom', 'a cat', 'a dog', 'the sun', 'a boat', 'a tree', 'the moon'];
    const answers = await Promise.all(
      stories.map((about) =>
        client.chat.completions.create({
          model,
          messages: [{ role: 'user', content: `Tell me about ${about}.` }],
          max_tokens: 6,
          temperature: 0,
        }),
      ),
    );
    for (const a of answers) {
      expect(a.choices[0]!.message.content!.length).toBeGreaterThan(0);
      expect(a.usage!.completion_tokens).toBeLessThanOrEqual(6);
    }
    const after = await metrics();
    const series = 'gufo_openai_requests_total{endpoint="/v1/chat/completions",status="200"}';
    expect(metric(after, series) - metric(before, series)).toBe(8);
    expect(metric(after, `gufo_openai_queue_depth{model="${model}"}`)).toBe(0);
    expect(metric(after, `gufo_openai_model_load_seconds{model="${model}"}`)).toBeGreaterThan(0);
    expect(metric(after, `gufo_openai_decode_tokens_per_second{model="${model}"}`)).toBeGreaterThan(0);
    expect(metric(after, `gufo_openai_time_to_first_token_seconds_count{model="${model}"}`)).toBeGreaterThanOrEqual(8);
  });

  it('cancels the generation of a client that disconnects', async () => {
    const client = t.client();
    const tokens = `gufo_openai_completion_tokens_total{model="${model}"}`;
    const left = 'gufo_openai_requests_total{endpoint="/v1/completions",status="499"}';
    const before = metric(await metrics(), tokens);
    const stream = await client.completions.create({ model, prompt, max_tokens: 400, temperature: 0, stream: true });
    for await (const chunk of stream) {
      if (chunk.choices[0]?.text) break; // leaving the loop aborts the request
    }
    let text = await metrics();
    for (let i = 0; i < 300 && metric(text, left) === 0; i++) {
      await new Promise((r) => setTimeout(r, 100));
      text = await metrics();
    }
    expect(metric(text, left)).toBe(1);
    expect(metric(text, tokens) - before).toBeLessThan(100);
    // The engine is free again at once.
    const next = await client.completions.create({ model, prompt, max_tokens: 2, temperature: 0 });
    expect(next.choices[0]!.text.length).toBeGreaterThan(0);
  });

  it('refuses requests beyond the queue cap with a 503', async () => {
    t.service.override({ maxQueue: 1 });
    // The engine busy with other work (as with a chat's answer) until the test lets it go: the first
    // request stays in the model's queue meanwhile, however fast a generation would be.
    let free = () => {};
    const busy = new Promise<void>((resolve) => (free = resolve));
    let started = () => {};
    const leased = new Promise<void>((resolve) => (started = resolve));
    const served = await t.service.resolve(model);
    const lease = t.backend.context.engines.withModel(
      { path: served.entry.path, ctx: t.service.contextFor(served) },
      () => (started(), busy),
    );
    try {
      await Promise.race([leased, lease]);
      const client = t.client();
      const first = client.completions.create({ model, prompt, max_tokens: 12, temperature: 0, stream: true });
      const depth = `gufo_openai_queue_depth{model="${model}"}`;
      for (let text = await metrics(); metric(text, depth) !== 1; text = await metrics())
        await new Promise((r) => setTimeout(r, 20));
      await expect(client.completions.create({ model, prompt, max_tokens: 2 })).rejects.toMatchObject({
        status: 503,
        code: 'overloaded',
        type: 'server_error',
      });
      free();
      let streamed = '';
      for await (const chunk of await first) streamed += chunk.choices[0]?.text ?? '';
      expect(streamed.length).toBeGreaterThan(0);
    } finally {
      free();
      await lease;
      t.service.override({ maxQueue: DEFAULT_MAX_QUEUE });
    }
  });
});

describe('n choices', { timeout: 240_000 }, () => {
  it('writes n completions, choice i drawn with the seed plus i, and counts every choice in the usage', async () => {
    const client = t.client();
    const asked = { model, prompt, max_tokens: 10, temperature: 1.5, seed: 5, logprobs: 0 };
    const r = await client.completions.create({ ...asked, n: 3 });
    expect(r.choices.map((c) => c.index)).toEqual([0, 1, 2]);
    const texts = r.choices.map((c) => c.text);
    expect(new Set(texts).size).toBeGreaterThan(1);
    // Each choice's tokens, and its stop token when it ended on one, are counted; the prompt once.
    const tokens = r.choices.reduce(
      (sum, c) => sum + c.logprobs!.tokens!.length + (c.finish_reason === 'stop' ? 1 : 0),
      0,
    );
    expect(r.usage!.completion_tokens).toBe(tokens);
    const single = await client.completions.create({ ...asked, n: 1 });
    expect(r.usage!.prompt_tokens).toBe(single.usage!.prompt_tokens);
    expect(single.choices[0]!.text).toBe(texts[0]);
    // Choice 1 of seed 5 is the draw of seed 6: a given seed gives the same choices again.
    const shifted = await client.completions.create({ ...asked, seed: 6 });
    expect(shifted.choices[0]!.text).toBe(texts[1]);
  });

  it('streams the chat choices one after another, each chunk with its index, then the summed usage', async () => {
    const client = t.client();
    const asked = {
      model,
      messages: [{ role: 'user' as const, content: prompt }],
      max_tokens: 8,
      temperature: 1.5,
      seed: 11,
      n: 2,
    };
    const whole = await client.chat.completions.create(asked);
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1]);

    const stream = await client.chat.completions.create({
      ...asked,
      stream: true,
      stream_options: { include_usage: true },
    });
    const content = ['', ''];
    const finishes: (string | null)[] = [null, null];
    const roles: (string | undefined)[] = [undefined, undefined];
    const order: number[] = [];
    let usage: { completion_tokens: number } | null = null;
    for await (const chunk of stream) {
      if (chunk.usage) usage = chunk.usage;
      for (const choice of chunk.choices) {
        order.push(choice.index);
        content[choice.index] += choice.delta.content ?? '';
        roles[choice.index] ??= choice.delta.role;
        if (choice.finish_reason) finishes[choice.index] = choice.finish_reason;
      }
    }
    expect(content).toEqual(whole.choices.map((c) => c.message.content));
    expect(roles).toEqual(['assistant', 'assistant']);
    expect(finishes).toEqual(whole.choices.map((c) => c.finish_reason));
    // One after another: every chunk of choice 0 before any of choice 1.
    expect(order.indexOf(1)).toBeGreaterThan(order.lastIndexOf(0));
    expect(usage!.completion_tokens).toBe(whole.usage!.completion_tokens);
  });

  it('refuses more than 8 choices, naming "n"', async () => {
    await expect(t.client().completions.create({ model, prompt, n: 9 })).rejects.toMatchObject({
      status: 400,
      param: 'n',
      message: expect.stringContaining('"n" must be a whole number from 1 to 8') as string,
    });
  });
});

describe('log-probabilities of sampled tokens', { timeout: 240_000 }, () => {
  it('are the true ones, also for tokens drawn from outside the top list', async () => {
    const r = await t.client().chat.completions.create({
      model,
      messages: [{ role: 'user', content: prompt }],
      max_tokens: 30,
      temperature: 2,
      seed: 3,
      logprobs: true,
      top_logprobs: 1,
    });
    const content = r.choices[0]!.logprobs!.content!;
    const outside = content.filter((c) => c.top_logprobs[0]!.token !== c.token);
    expect(outside.length).toBeGreaterThan(0);
    for (const c of outside) {
      expect(c.logprob).toBeLessThan(c.top_logprobs[0]!.logprob);
      expect(c.logprob).toBeGreaterThan(-100);
    }
    for (const c of content) expect(c.logprob).toBeLessThanOrEqual(0);
  });
});

describe('JSON mode through the OpenAI-compatible API', { timeout: 300_000 }, () => {
  const messages = [
    { role: 'system' as const, content: 'Answer in JSON.' },
    { role: 'user' as const, content: 'Did Lily find the ball? How many friends came?' },
  ];
  const schema = {
    type: 'object',
    properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer' } },
    required: ['answer', 'n'],
    additionalProperties: false,
  };
  const jsonSchema = { type: 'json_schema' as const, json_schema: { name: 'answer', schema, strict: true } };

  /** The streamed answer to the same request, assembled. */
  async function streamed(
    body: Pick<OpenAI.Chat.ChatCompletionCreateParamsStreaming, 'max_tokens' | 'response_format'>,
  ): Promise<{ content: string; finish: string | null }> {
    const stream = await t.client().chat.completions.create({ model, messages, temperature: 0, ...body, stream: true });
    let content = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      content += chunk.choices[0]?.delta.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    return { content, finish };
  }

  it('answers a json_schema request with a document valid for the schema, streamed or not', async () => {
    const whole = await t
      .client()
      .chat.completions.create({ model, messages, temperature: 0, max_tokens: 120, response_format: jsonSchema });
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    const value = JSON.parse(choice.message.content!) as unknown;
    expect(validates(value, schema), choice.message.content!).toBe(true);
    expect(await streamed({ max_tokens: 120, response_format: jsonSchema })).toEqual({
      content: choice.message.content,
      finish: 'stop',
    });
  });

  it('holds json_object output to a JSON object; cut by max_tokens, it is the start of one and finishes with "length"', async () => {
    const client = t.client();
    const whole = await client.chat.completions.create({
      model,
      messages,
      temperature: 0,
      max_tokens: 12,
      response_format: { type: 'json_object' },
    });
    const { message, finish_reason } = whole.choices[0]!;
    const text = message.content!;
    expect(text.trimStart().startsWith('{'), text).toBe(true);
    const state = matchBytes(start(ANY_OBJECT), utf8(text));
    expect(state, text).not.toBeNull();
    if (finish_reason === 'stop') expect(typeof JSON.parse(text)).toBe('object');
    else expect(isComplete(state!)).toBe(false);
    expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(12);
    expect(await streamed({ max_tokens: 12, response_format: { type: 'json_object' } })).toEqual({
      content: text,
      finish: finish_reason,
    });

    // Sampled rather than greedy, the answer is held all the same.
    const sampled = await client.chat.completions.create({
      model,
      messages,
      temperature: 1,
      seed: 5,
      max_tokens: 12,
      response_format: { type: 'json_object' },
    });
    expect(matchBytes(start(ANY_OBJECT), utf8(sampled.choices[0]!.message.content!))).not.toBeNull();
  });

  it("takes zod 4's minimum/maximum (and pattern, format, minLength) and holds the answer to them", async () => {
    // z.object({ name: z.string(), age: z.number().int().min(0).max(150) }) as zod 4 writes it, with more keywords.
    const bounded = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 12 },
        age: { type: 'integer', minimum: 0, maximum: 150 },
        score: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        code: { type: 'string', pattern: '^[A-Z]{2}-[0-9]{2,3}$' },
        day: { type: 'string', format: 'date' },
      },
      required: ['name', 'age', 'score', 'code', 'day'],
      additionalProperties: false,
    };
    for (const temperature of [0, 1]) {
      const reply = await t.client().chat.completions.create({
        model,
        messages,
        temperature,
        seed: 3,
        max_tokens: 200,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema: bounded, strict: true } },
      });
      const choice = reply.choices[0]!;
      expect(choice.finish_reason, choice.message.content!).toBe('stop');
      const value = JSON.parse(choice.message.content!) as unknown;
      expect(validates(value, bounded), choice.message.content!).toBe(true);
    }
  });

  it('holds /v1/completions output to the schema too', async () => {
    const reply = await send(
      t.server.port,
      'POST',
      '/v1/completions',
      { 'content-type': 'application/json' },
      JSON.stringify({
        model,
        prompt: 'Once upon a time',
        max_tokens: 120,
        temperature: 0,
        response_format: jsonSchema,
      }),
    );
    expect(reply.status).toBe(200);
    const choice = (JSON.parse(reply.body) as OpenAI.Completion).choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(validates(JSON.parse(choice.text), schema), choice.text).toBe(true);
  });
});
