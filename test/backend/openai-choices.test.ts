/**
 * `n` choices through the official `openai` client, with the real engine and stories260K: each
 * choice its own draw (seed + index), numbered, streamed with its index, the usage summed; and
 * each sampled token's true log-probability, also outside the top list.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const model = 'stories260k';
const prompt = 'Once upon a time';

let t: OpenAiTestServer;
beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

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
