/**
 * Reasoning on the APIs, with the real engine (SwiftShader) and stories260K given a
 * DeepSeek-R1-like chat template (fixtures/thinker.ts: all it writes is reasoning unless the
 * template is told not to think). What the server returns apart is checked against the same
 * greedy text left in the content (reasoning_format "none"), so a split that lost, kept or moved
 * text fails; the splitting itself is test/core/reasoning.test.ts's.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import type OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { generateText, streamText } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STORIES_260K } from '../support/paths';
import { startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';
import { writeThinker } from './fixtures/thinker';

const model = 'thinker';
const messages = [{ role: 'user' as const, content: 'Tell me about Lily.' }];

let t: OpenAiTestServer;
let ollama: Ollama;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-reasoning-'));
  const thinker = join(dir, 'thinker.gguf');
  await writeThinker(thinker);
  t = await startOpenAiTestServer([thinker, STORIES_260K]);
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

type Extra = { reasoning_effort?: string; reasoning_format?: string; chat_template_kwargs?: object };
type Message = OpenAI.Chat.ChatCompletionMessage & { reasoning_content?: string };

async function chat(extra: Extra = {}): Promise<Message> {
  // llama.cpp's fields, which the client's types do not list (nor efforts it does not know); it sends them as they are.
  const body = {
    model,
    messages,
    temperature: 0,
    max_tokens: 24,
    ...extra,
  } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming;
  const completion = await t.client().chat.completions.create(body);
  return completion.choices[0]!.message;
}

/** The greedy text itself, left in the content (reasoning_format "none"). */
let raw: string;
beforeAll(async () => {
  raw = (await chat({ reasoning_format: 'none' })).content!;
}, 300_000);

describe('Chat Completions', { timeout: 300_000 }, () => {
  it('returns the reasoning of a prompt that opened the block in reasoning_content, apart from the content', async () => {
    expect(raw.trim().length).toBeGreaterThan(10);
    const split = await chat();
    expect(split.reasoning_content).toBe(raw.trim());
    expect(split.content).toBe('');
    expect(await chat({ reasoning_format: 'deepseek' })).toMatchObject({ reasoning_content: raw.trim() });
  });

  it('streams the reasoning as delta.reasoning_content, joining into what the whole answer holds', async () => {
    const stream = await t.client().chat.completions.create({
      model,
      messages,
      temperature: 0,
      max_tokens: 24,
      stream: true,
    });
    let reasoning = '';
    let content = '';
    let pieces = 0;
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as { content?: string; reasoning_content?: string } | undefined;
      if (delta?.reasoning_content) pieces++;
      reasoning += delta?.reasoning_content ?? '';
      content += delta?.content ?? '';
    }
    expect(reasoning).toBe(raw.trim());
    expect(content).toBe('');
    expect(pieces).toBeGreaterThan(1);
  });

  it('enable_thinking false (chat_template_kwargs) and reasoning_effort "none" close the block in the prompt: all is content', async () => {
    const off = await chat({ chat_template_kwargs: { enable_thinking: false } });
    expect(off.reasoning_content).toBeUndefined();
    expect(off.content!.trim().length).toBeGreaterThan(10);
    expect(await chat({ reasoning_effort: 'none' })).toEqual(off);
    // reasoning_effort reaches the template as it is ("minimal" is read there), and overrides the kwargs' enable_thinking.
    expect(await chat({ reasoning_effort: 'minimal' })).toEqual(off);
    expect(await chat({ reasoning_effort: 'high', chat_template_kwargs: { enable_thinking: false } })).toMatchObject({
      reasoning_content: raw.trim(),
      content: '',
    });
  });

  it("counts the reasoning's tokens in usage, as OpenAI's reasoning models do, and none when there is no reasoning", async () => {
    const usage = async (extra: Extra) =>
      (
        await t.client().chat.completions.create({
          model,
          messages,
          temperature: 0,
          max_tokens: 24,
          ...extra,
        } as OpenAI.Chat.ChatCompletionCreateParamsNonStreaming)
      ).usage!;
    const thinking = await usage({});
    expect(thinking.completion_tokens).toBe(24);
    expect(thinking.completion_tokens_details).toEqual({ reasoning_tokens: 24 });
    expect((await usage({ reasoning_effort: 'none' })).completion_tokens_details).toBeUndefined();
    const response = await t
      .client()
      .responses.create({ model, input: messages, temperature: 0, max_output_tokens: 24 });
    expect(response.usage!.output_tokens_details.reasoning_tokens).toBe(24);
  });

  it('leaves output held to JSON whole in the content: it is the answer from its first token', async () => {
    const json = await t.client().chat.completions.create({
      model,
      messages,
      temperature: 0,
      max_tokens: 24,
      response_format: { type: 'json_object' },
    });
    const message: Message = json.choices[0]!.message;
    expect(message.reasoning_content).toBeUndefined();
    expect(message.content!.trimStart().startsWith('{')).toBe(true);
  });

  it("gives an earlier answer's reasoning_content (Ollama: thinking) back to the template", async () => {
    const conversation = (reasoning: object) => [
      ...messages,
      { role: 'assistant' as const, content: 'Lily had a ball.', ...reasoning },
      { role: 'user' as const, content: 'And then?' },
    ];
    const promptTokens = async (reasoning: object) =>
      (
        await t.client().chat.completions.create({
          model,
          messages: conversation(reasoning),
          max_tokens: 1,
        })
      ).usage!.prompt_tokens;
    const without = await promptTokens({});
    const withReasoning = await promptTokens({ reasoning_content: 'She thinks about the ball and the park.' });
    expect(withReasoning).toBeGreaterThan(without + 5);
    const ollamaCount = await ollama.chat({
      model,
      messages: conversation({ thinking: 'She thinks about the ball and the park.' }),
      options: { num_predict: 1 },
    });
    expect(ollamaCount.prompt_eval_count).toBe(withReasoning);
    const err = (await promptTokens({ reasoning_content: 5 }).catch((e: unknown) => e)) as {
      status: number;
      error: { param: string };
    };
    expect({ status: err.status, param: err.error.param }).toEqual({
      status: 400,
      param: 'messages[1].reasoning_content',
    });
  });

  it('refuses a reasoning_effort, reasoning_format or chat_template_kwargs it cannot read, naming the field', async () => {
    const refused = async (extra: Extra) => {
      const err = (await chat(extra).catch((e: unknown) => e)) as { status: number; error: { param: string } };
      return { status: err.status, param: err.error.param };
    };
    expect(await refused({ reasoning_effort: 'lots' })).toEqual({ status: 400, param: 'reasoning_effort' });
    expect(await refused({ reasoning_format: 'deepseek-legacy' })).toEqual({ status: 400, param: 'reasoning_format' });
    expect(await refused({ chat_template_kwargs: { enable_thinking: 'no' } })).toEqual({
      status: 400,
      param: 'chat_template_kwargs',
    });
  });
});

describe('the Responses API', { timeout: 300_000 }, () => {
  it('answers the reasoning as a reasoning item before the message, and streams it as reasoning_text events', async () => {
    const response = await t
      .client()
      .responses.create({ model, input: messages, temperature: 0, max_output_tokens: 24 });
    const [reasoning, message] = response.output;
    expect(reasoning).toMatchObject({
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: raw.trim() }],
      content: [{ type: 'reasoning_text', text: raw.trim() }],
    });
    expect(message).toMatchObject({ type: 'message', content: [{ type: 'output_text', text: '' }] });

    const events = [];
    const stream = await t.client().responses.create({
      model,
      input: messages,
      temperature: 0,
      max_output_tokens: 24,
      stream: true,
    });
    for await (const event of stream) events.push(event);
    const deltas = events.filter((e) => e.type === 'response.reasoning_text.delta');
    expect(deltas.map((e) => e.delta).join('')).toBe(raw.trim());
    expect(deltas.every((e) => e.output_index === 0)).toBe(true);
    expect(events.find((e) => e.type === 'response.reasoning_text.done')).toMatchObject({ text: raw.trim() });
    const summary = events.filter((e) => e.type === 'response.reasoning_summary_text.delta');
    expect(summary.map((e) => e.delta)).toEqual(deltas.map((e) => e.delta));
    const last = events.at(-1)!;
    expect(last.type === 'response.incomplete' && last.response.output).toEqual(
      response.output.map((item) => ({ ...item, id: expect.any(String) as string })),
    );
  });

  it("reaches the Vercel AI SDK's openai(id) model as its reasoning, whole and streamed", async () => {
    const openai = createOpenAI({ baseURL: `http://127.0.0.1:${t.server.port}/v1`, apiKey: 'none' });
    const options = { model: openai(model), prompt: messages[0]!.content, temperature: 0, maxOutputTokens: 24 };
    const whole = await generateText({ ...options, maxRetries: 0 });
    expect({ reasoning: whole.reasoningText, text: whole.text }).toEqual({ reasoning: raw.trim(), text: '' });
    let reasoning = '';
    for await (const part of streamText({ ...options, maxRetries: 0 }).fullStream)
      if (part.type === 'reasoning-delta') reasoning += part.text;
    expect(reasoning).toBe(raw.trim());
  });

  it('reasoning.effort "none" asks for no reasoning: one message with the text', async () => {
    const response = await t.client().responses.create({
      model,
      input: messages,
      temperature: 0,
      max_output_tokens: 24,
      reasoning: { effort: 'none' },
    });
    expect(response.output.map((item) => item.type)).toEqual(['message']);
    expect(response.output_text).toBe((await chat({ reasoning_effort: 'none' })).content);
  });
});

describe("Ollama's think", { timeout: 300_000 }, () => {
  // Ollama's default repeat penalty (1.1) would change the greedy text: off, as on /v1.
  const options = { temperature: 0, num_predict: 24, repeat_penalty: 1 };

  it("splits a thinking model's reasoning into message.thinking when think is true, a level, or left out", async () => {
    for (const think of [true, 'high', undefined] as const) {
      const reply = await ollama.chat({ model, messages, options, ...(think === undefined ? {} : { think }) });
      expect({ think, thinking: reply.message.thinking, content: reply.message.content }).toEqual({
        think,
        thinking: raw.trim(),
        content: '',
      });
    }
    const generated = await ollama.generate({ model, prompt: messages[0]!.content, options, think: true });
    expect({ thinking: generated.thinking, response: generated.response }).toEqual({
      thinking: raw.trim(),
      response: '',
    });
  });

  it('streams the thinking line by line, and think false closes the block in the prompt: no thinking, all content', async () => {
    let thinking = '';
    for await (const part of await ollama.chat({ model, messages, options, think: true, stream: true }))
      thinking += part.message.thinking ?? '';
    expect(thinking).toBe(raw.trim());

    const off = await ollama.chat({ model, messages, options, think: false });
    expect(off.message.thinking).toBeUndefined();
    expect(off.message.content).toBe((await chat({ chat_template_kwargs: { enable_thinking: false } })).content);
  });

  it('shows the capability, and refuses think for a model whose template cannot think, as Ollama does', async () => {
    expect((await ollama.show({ model })).capabilities).toEqual(['completion', 'thinking']);
    const err = (await ollama
      .chat({ model: 'stories260k', messages, options, think: true })
      .catch((e: unknown) => e)) as { status_code: number; error: string };
    expect({ status: err.status_code, error: err.error }).toEqual({
      status: 400,
      error: '"stories260k" does not support thinking: its chat template writes none',
    });
    // Left out, or false, it is no error there.
    expect(
      (await ollama.chat({ model: 'stories260k', messages, options, think: false })).message.thinking,
    ).toBeUndefined();
  });
});
