/**
 * Slots (gufo serve --parallel): each loaded model keeps that many sequences in KV caches of their
 * own; a request continues the one sharing the longest prefix with its prompt, else takes the least
 * recently used, and `usage.prompt_tokens_details.cached_tokens` says what it reused; requests in
 * different slots run side by side (their decode steps batched). Over real HTTP
 * with the official `openai` client, one server for the file.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORIES_260K } from '../support/paths';
import { metric, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const model = 'stories260k';
const SLOTS = 2;
const COMPLETIONS = 'gufo_openai_requests_total{endpoint="/v1/completions",';
let t: OpenAiTestServer;

beforeAll(async () => {
  t = await startOpenAiTestServer([STORIES_260K], {}, SLOTS);
});
afterAll(() => t?.close());

/** A greedy completion of `prompt`: its text, prompt tokens and the tokens a slot already held. */
async function complete(prompt: string): Promise<{ text: string; prompt: number; cached: number }> {
  const r = await t.client().completions.create({ model, prompt, max_tokens: 12, temperature: 0 });
  const usage = r.usage!;
  return { text: r.choices[0]!.text, prompt: usage.prompt_tokens, cached: usage.prompt_tokens_details!.cached_tokens! };
}

// Prompts that share only the BOS token: none may take another's slot.
const A = 'Once upon a time, there was a little girl named Lily. She loved to play outside';
const B = 'The big dog ran to the park with his ball and his friend the cat';
const C = 'Tom had a red car. He liked to drive it fast around the house';

describe('slots and the prompt cache', { timeout: 240_000 }, () => {
  it('keeps a KV cache per slot, counted in the model memory', async () => {
    await complete(A);
    const [loaded] = t.backend.context.engines.loaded();
    // stories260K: 5 layers × 4 KV heads × (8 + 8) head sizes × 2 bytes per F16, per position.
    expect(loaded!.memory.kvBytes).toBe(SLOTS * 640 * loaded!.ctx);
  });

  it('reuses a repeated prompt after another prompt, keeps the least recently used out, and answers the same text', async () => {
    const a = await complete(A);
    const b = await complete(B);
    // A's slot is kept for it: B, sharing only its BOS, takes the other one.
    expect(b.cached).toBe(0);
    const a2 = await complete(A);
    // All of A but the last token, whose logits give the first generated token.
    expect(a2).toEqual({ ...a, cached: a.prompt - 1 });
    // C takes the least recently used slot, B's, keeping only the BOS they share; A stays.
    expect((await complete(C)).cached).toBe(1);
    expect((await complete(A)).cached).toBe(a.prompt - 1);
    // B was evicted: all of it is evaluated again but its BOS, in C's slot.
    const b2 = await complete(B);
    expect(b2).toEqual({ ...b, cached: 1 });
  });

  it('runs requests in different slots side by side, each answering what it answers alone', async () => {
    const alone = [await complete(B), await complete(C)];
    const streamed = await Promise.all(
      [B, C].map(async (prompt) => {
        const stream = await t
          .client()
          .completions.create({ model, prompt, max_tokens: 12, temperature: 0, stream: true });
        let text = '';
        let firstAt = 0;
        for await (const chunk of stream) {
          text += chunk.choices[0]?.text ?? '';
          if (text !== '' && firstAt === 0) firstAt = performance.now();
        }
        return { text, firstAt, endAt: performance.now() };
      }),
    );
    expect(streamed.map((s) => s.text)).toEqual(alone.map((a) => a.text));
    // Taking turns, one stream would end before the other's first piece.
    expect(streamed[0]!.firstAt).toBeLessThan(streamed[1]!.endAt);
    expect(streamed[1]!.firstAt).toBeLessThan(streamed[0]!.endAt);
  });

  it('queues requests beyond the slots, and a stream cancelled midway leaves the others their whole answers', async () => {
    const [b, c] = [await complete(B), await complete(C)];
    const cancel = new AbortController();
    const streamOf = (prompt: string, signal?: AbortSignal) =>
      t.client().completions.create({ model, prompt, max_tokens: 12, temperature: 0, stream: true }, { signal });
    // More requests than slots, all at once: A first, cancelled after its first piece.
    const streams = [streamOf(A, cancel.signal), streamOf(B), streamOf(C)];
    const texts = await Promise.all(
      streams.map(async (opened, i) => {
        let text = '';
        try {
          for await (const chunk of await opened) {
            text += chunk.choices[0]?.text ?? '';
            if (i === 0 && text !== '') cancel.abort();
          }
        } catch (err) {
          if (i !== 0) throw err;
        }
        return text;
      }),
    );
    expect(texts.slice(1)).toEqual([b.text, c.text]);
    expect(texts[0]!.length).toBeGreaterThan(0);
    // The server saw A's client leave (nginx's 499), and answered the other two.
    const metrics = await (await fetch(`http://127.0.0.1:${t.server.port}/metrics`)).text();
    expect(metric(metrics, `${COMPLETIONS}status="499"}`)).toBe(1);
    // B and C again: each is still in a slot, though three sequences went through two.
    expect((await complete(C)).cached).toBe(c.prompt - 1);
  });

  it('continues a prompt that extends a cached one, and reports it on chat completions', async () => {
    const messages = [{ role: 'user' as const, content: 'Tell me about a cat.' }];
    const first = await t.client().chat.completions.create({ model, messages, max_tokens: 8, temperature: 0 });
    const more = [
      ...messages,
      { role: 'assistant' as const, content: first.choices[0]!.message.content! },
      { role: 'user' as const, content: 'And a dog?' },
    ];
    const second = await t.client().chat.completions.create({ model, messages: more, max_tokens: 8, temperature: 0 });
    const cached = second.usage!.prompt_tokens_details!.cached_tokens!;
    // The first turn's prompt at least, not the whole second prompt.
    expect(cached).toBeGreaterThanOrEqual(first.usage!.prompt_tokens);
    expect(cached).toBeLessThan(second.usage!.prompt_tokens);
  });
});
