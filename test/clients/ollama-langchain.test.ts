/**
 * LangChain's ChatOllama (@langchain/ollama) against Gufo's Ollama routes on the real engine with
 * stories260K: its answers are those Ollama's official client gets for the same request, and the
 * runner and sampler options it sends that Gufo does not apply (mirostat, typical_p, num_thread,
 * …) are ignored, as Ollama ignores what it does not use.
 */
import { ChatOllama } from '@langchain/ollama';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from '../backend/fixtures/openai-server';

let t: OpenAiTestServer;
let official: Ollama;
const messages = [
  { role: 'system', content: 'You tell stories.' },
  { role: 'user', content: 'Once upon a time' },
];
const conversation: [string, string][] = messages.map((m) => [m.role === 'user' ? 'human' : m.role, m.content]);

beforeAll(async () => {
  t = await startOpenAiTestServer();
  official = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(() => t?.close());

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
    const reference = await official.chat({
      model: 'stories260k',
      messages,
      stream: false,
      options: { temperature: 0, seed: 42, num_predict: 24 },
    });
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
