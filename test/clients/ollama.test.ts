/**
 * Ollama's clients other than its own against Gufo's Ollama routes on the real engine with
 * stories260K, one server for both (one engine load): their answers are those Ollama's official
 * client gets for the same request.
 *
 * - The Vercel AI SDK's Ollama provider (ollama-ai-provider-v2, `createOllama` with a base URL
 *   ending in /api). It sends `temperature` and `max_output_tokens` beside `options`, where Ollama
 *   (and Gufo) ignore them, so the sampling travels in providerOptions.ollama.options, as with
 *   Ollama itself.
 * - LangChain's ChatOllama (@langchain/ollama): the runner and sampler options it sends that Gufo
 *   does not apply (mirostat, typical_p, num_thread, …) are ignored, as Ollama ignores what it does
 *   not use.
 */
import { ChatOllama } from '@langchain/ollama';
import { generateText, streamText } from 'ai';
import { Ollama } from 'ollama';
import { createOllama } from 'ollama-ai-provider-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from '../backend/fixtures/openai-server';

let t: OpenAiTestServer;
let official: Ollama;
let provider: ReturnType<typeof createOllama>;
const system = 'You tell stories.';
const prompt = 'Once upon a time';
const greedy = { temperature: 0, seed: 42, num_predict: 24 };
const messages = [
  { role: 'system', content: system },
  { role: 'user', content: prompt },
];
const conversation: [string, string][] = messages.map((m) => [m.role === 'user' ? 'human' : m.role, m.content]);

beforeAll(async () => {
  t = await startOpenAiTestServer();
  official = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
  provider = createOllama({ baseURL: `http://127.0.0.1:${t.server.port}/api` });
});
afterAll(() => t?.close());

/** The official client's answer to the same conversation and options. */
async function expected(options: Record<string, number>) {
  return official.chat({ model: 'stories260k', messages, stream: false, options });
}

describe('Vercel AI SDK, ollama-ai-provider-v2', { timeout: 240_000 }, () => {
  it('generateText answers as Ollama answers, with its token counts', async () => {
    const reference = await expected(greedy);
    const result = await generateText({
      model: provider('stories260k'),
      system,
      prompt,
      providerOptions: { ollama: { options: greedy } },
    });
    expect(result.text).toBe(reference.message.content);
    expect(result.text.length).toBeGreaterThan(10);
    expect(result.usage.outputTokens).toBe(reference.eval_count);
    expect(result.usage.inputTokens).toBe(reference.prompt_eval_count);
    expect(result.finishReason).toBe('length');
  });

  it('streamText streams the same text in several parts', async () => {
    const reference = await expected(greedy);
    const result = streamText({
      model: provider('stories260k'),
      system,
      prompt,
      providerOptions: { ollama: { options: greedy } },
    });
    const parts: string[] = [];
    for await (const part of result.textStream) parts.push(part);
    expect(parts.join('')).toBe(reference.message.content);
    expect(parts.length).toBeGreaterThan(2);
    expect((await result.usage).outputTokens).toBe(reference.eval_count);
  });

  it('sends repeat_last_n, which Ollama takes and Gufo applies as the penalty window', async () => {
    const options = { ...greedy, repeat_penalty: 1.8, repeat_last_n: 32 };
    const reference = await expected(options);
    const result = await generateText({
      model: provider('stories260k'),
      system,
      prompt,
      providerOptions: { ollama: { options } },
    });
    expect(result.text).toBe(reference.message.content);
    // The window matters: without the penalty the answer is another.
    expect(result.text).not.toBe((await expected({ ...greedy, repeat_penalty: 1 })).message.content);
  });
});

const chat = (fields: ConstructorParameters<typeof ChatOllama>[0] = {}) =>
  new ChatOllama({
    baseUrl: `http://127.0.0.1:${t.server.port}`,
    model: 'stories260k',
    temperature: 0,
    seed: 42,
    numPredict: 24,
    ...fields,
  });

describe("LangChain's ChatOllama", { timeout: 240_000 }, () => {
  it('invokes and streams the answer Ollama gives the same request', async () => {
    const reference = await expected(greedy);
    expect(reference.message.content.length).toBeGreaterThan(10);

    const answer = await chat().invoke(conversation);
    expect(answer.content).toBe(reference.message.content);
    expect(answer.usage_metadata?.output_tokens).toBe(reference.eval_count);

    const parts: string[] = [];
    for await (const chunk of await chat().stream(conversation)) parts.push(chunk.content as string);
    expect(parts.join('')).toBe(reference.message.content);
    expect(parts.filter((p) => p !== '').length).toBeGreaterThan(2);
  });

  it("ignores the runner and sampler options Ollama's clients send that Gufo does not apply", async () => {
    const plain = await chat().invoke(conversation);
    const tuned = await chat({
      mirostat: 2,
      mirostatTau: 5,
      mirostatEta: 0.1,
      typicalP: 0.7,
      tfsZ: 0.9,
      numThread: 2,
      numGpu: 99,
      useMmap: false,
      numa: true,
      penalizeNewline: true,
      keepAlive: '10m',
    }).invoke(conversation);
    expect(tuned.content).toBe(plain.content);
    // keep_alive "10m" is honoured: the model expires in ten minutes.
    const [loaded] = (await official.ps()).models;
    const left = new Date(loaded!.expires_at).getTime() - Date.now();
    expect(left).toBeGreaterThan(9 * 60_000);
    expect(left).toBeLessThanOrEqual(10 * 60_000);
  });
});
