/**
 * Ollama's API on the listeners that serve /v1, through Ollama's official `ollama` client: on the
 * `gufo serve` port (beside the app's token-guarded API) and on the settings' own listener, with
 * the real engine (WebGPU on SwiftShader) and stories260K; with it, a model without a chat
 * template on the chat routes of both APIs (/v1 and /api). Then Ollama's other clients, whose
 * answers are those the official client gets for the same request:
 *
 * - the Vercel AI SDK's Ollama provider (ollama-ai-provider-v2, `createOllama` with a base URL
 *   ending in /api). It sends `temperature` and `max_output_tokens` beside `options`, where Ollama
 *   (and Gufo) ignore them, so the sampling travels in providerOptions.ollama.options, as with
 *   Ollama itself;
 * - LangChain's ChatOllama (@langchain/ollama): the runner and sampler options it sends that Gufo
 *   does not apply (mirostat, typical_p, num_thread, …) are ignored, as Ollama ignores what it does
 *   not use.
 *
 * Then what Ollama's clients send that Gufo does not refuse: options it does not apply (ignored,
 * as Ollama ignores them), repeat_last_n (applied), a message's null content, and keep_alive (how
 * long the model stays loaded). One server for all (one engine load); the keep_alive tests, which
 * unload the model, come last.
 */
import { ChatOllama } from '@langchain/ollama';
import { generateText, streamText } from 'ai';
import { Ollama } from 'ollama';
import { createOllama } from 'ollama-ai-provider-v2';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openModelText } from '../../src-main/backend/chat/prompt';
import { startOpenAiServer, type OpenAiListener } from '../../src-main/backend/openai/listener';
import { parseKeepAlive } from '../../src-main/backend/ollama/keep-alive';
import { OLLAMA_API_VERSION } from '../../src-main/backend/ollama/routes';
import { STORIES_260K } from '../support/paths';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
let ollama: Ollama;
const model = 'stories260k:latest';
const messages = [
  { role: 'system', content: 'You tell stories.' },
  { role: 'user', content: 'Once upon a time' },
];
const greedy = { temperature: 0, repeat_penalty: 1, seed: 42 };

beforeAll(async () => {
  t = await startOpenAiTestServer();
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(() => t?.close());

describe("Ollama's API on the gufo serve port", { timeout: 240_000 }, () => {
  it('says it is running to API clients at / and still serves the page to browsers', async () => {
    const probe = await send(t.server.port, 'GET', '/');
    expect(probe).toMatchObject({ status: 200, body: 'Ollama is running' });
    expect((await send(t.server.port, 'HEAD', '/')).status).toBe(200);
    const page = await send(t.server.port, 'GET', '/?token=x', { accept: 'text/html,application/xhtml+xml' });
    expect(page.body).toContain('<title>Gufo</title>');
    expect(await ollama.version()).toEqual({ version: OLLAMA_API_VERSION });
  });

  it('lists, shows and reports loaded models with Ollama names', async () => {
    const { models } = await ollama.list();
    expect(models).toEqual([
      expect.objectContaining({
        name: model,
        model,
        size: expect.any(Number) as number,
        details: expect.objectContaining({
          format: 'gguf',
          family: 'llama',
          parameter_size: expect.stringMatching(/K$/) as string,
        }) as object,
      }),
    ]);
    const shown = await ollama.show({ model: 'stories260k' });
    expect(shown.details.family).toBe('llama');
    expect(shown.capabilities).toEqual(['completion']);
    expect(typeof shown.template).toBe('string');
    expect((shown.model_info as unknown as Record<string, unknown>)['general.architecture']).toBe('llama');
    // Loading with an empty prompt, as Ollama does; then the model is in /api/ps.
    const loaded = await ollama.generate({ model, prompt: '' });
    expect(loaded).toMatchObject({ done: true, done_reason: 'load', response: '' });
    const ps = await ollama.ps();
    expect(ps.models).toEqual([expect.objectContaining({ name: model, size_vram: expect.any(Number) as number })]);
    expect(ps.models[0]!.size_vram).toBeGreaterThan(0);
  });

  it("chats, streamed and not, with /v1's greedy answer for the same prompt", async () => {
    const v1 = await t.client().chat.completions.create({
      model: 'stories260k',
      messages: messages as never,
      temperature: 0,
      max_tokens: 20,
      seed: 42,
    });
    const expected = v1.choices[0]!.message.content!;
    expect(expected.length).toBeGreaterThan(0);

    const whole = await ollama.chat({ model, messages, stream: false, options: { ...greedy, num_predict: 20 } });
    expect(whole).toMatchObject({
      model,
      done: true,
      message: { role: 'assistant', content: expected },
      done_reason: v1.choices[0]!.finish_reason,
    });
    expect(whole.prompt_eval_count).toBe(v1.usage!.prompt_tokens);
    expect(whole.eval_count).toBe(v1.usage!.completion_tokens);
    expect(whole.eval_duration).toBeGreaterThan(0);

    let streamed = '';
    let parts = 0;
    let last: { done: boolean; eval_count?: number } | undefined;
    for await (const part of await ollama.chat({
      model,
      messages,
      stream: true,
      options: { ...greedy, num_predict: 20 },
    })) {
      streamed += part.message.content;
      parts += 1;
      last = part;
    }
    expect(streamed).toBe(expected);
    expect(parts).toBeGreaterThan(2);
    expect(last).toMatchObject({ done: true, eval_count: whole.eval_count });
  });

  it('generates raw text as /v1/completions does, and stops at num_predict and at stop strings', async () => {
    const v1 = await t
      .client()
      .completions.create({ model: 'stories260k', prompt: 'Once upon a time', max_tokens: 24, temperature: 0 });
    const raw = await ollama.generate({
      model,
      prompt: 'Once upon a time',
      raw: true,
      stream: false,
      options: { ...greedy, num_predict: 24 },
    });
    expect(raw.response).toBe(v1.choices[0]!.text);
    expect(raw.response!.startsWith(', there was a little girl named Lily.')).toBe(true);
    expect(raw).toMatchObject({ done_reason: 'length', eval_count: 24 });

    const short = await ollama.generate({
      model,
      prompt: 'Once upon a time',
      raw: true,
      stream: false,
      options: { ...greedy, num_predict: 3 },
    });
    expect(short).toMatchObject({ eval_count: 3, done_reason: 'length' });
    expect(raw.response!.startsWith(short.response!)).toBe(true);

    const stopped = await ollama.generate({
      model,
      prompt: 'Once upon a time',
      raw: true,
      stream: false,
      options: { ...greedy, num_predict: 24, stop: ['Lily'] },
    });
    expect(stopped).toMatchObject({ response: ', there was a little girl named ', done_reason: 'stop' });

    // Not raw: the prompt is a user message in the model's template, with the system prompt.
    const templated = await ollama.generate({
      model,
      prompt: 'Once upon a time',
      system: 'You tell stories.',
      stream: false,
      options: { ...greedy, num_predict: 20 },
    });
    const chat = await ollama.chat({ model, messages, stream: false, options: { ...greedy, num_predict: 20 } });
    expect(templated.response).toBe(chat.message.content);
  });

  it('holds the answer to JSON with format "json" (as /v1\'s json_object) and to a JSON Schema (valid JSON that follows it)', async () => {
    const question = [{ role: 'user', content: 'Give me JSON' }];
    const v1 = await t.client().chat.completions.create({
      model: 'stories260k',
      messages: question as never,
      temperature: 0,
      max_tokens: 12,
      response_format: { type: 'json_object' },
    });
    const json = await ollama.chat({
      model,
      messages: question,
      format: 'json',
      stream: false,
      options: { ...greedy, num_predict: 12 },
    });
    expect(json.message.content).toBe(v1.choices[0]!.message.content);
    expect(json.message.content.trimStart().startsWith('{')).toBe(true);
    const schema = {
      type: 'object',
      properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer' } },
      required: ['answer', 'n'],
      additionalProperties: false,
    };
    const held = await ollama.generate({
      model,
      prompt: 'A name',
      format: schema,
      stream: false,
      options: { ...greedy, num_predict: 120 },
    });
    expect(held.done_reason).toBe('stop');
    const value = JSON.parse(held.response!) as { answer: string; n: number };
    expect(Object.keys(value).sort()).toEqual(['answer', 'n']);
    expect(['yes', 'no']).toContain(value.answer);
    expect(Number.isInteger(value.n)).toBe(true);
  });

  it("answers errors in Ollama's shape and status", async () => {
    await expect(ollama.chat({ model: 'nope', messages, stream: false })).rejects.toMatchObject({
      status_code: 404,
      error: expect.stringContaining('model "nope" not found') as string,
    });
    await expect(ollama.generate({ model, prompt: 'x', images: ['aGk='], stream: false })).rejects.toMatchObject({
      status_code: 400,
      error: expect.stringContaining('images are not supported') as string,
    });
    const tools = [
      { type: 'function', function: { name: 'f g', description: 'f', parameters: { type: 'object', properties: {} } } },
    ];
    await expect(ollama.chat({ model, messages, tools, stream: false })).rejects.toMatchObject({
      status_code: 400,
      error: expect.stringContaining('tools[0].function.name') as string,
    });
    await expect(ollama.embed({ model, input: [] })).rejects.toMatchObject({
      status_code: 400,
      error: '"input" must be a string or an array of strings',
    });
    await expect(ollama.chat({ model, messages, stream: false, options: { temperature: 9 } })).rejects.toMatchObject({
      status_code: 400,
      error: expect.stringContaining('"options.temperature" must be a number from 0 to 2') as string,
    });
    const missing = await send(t.server.port, 'POST', '/api/push');
    expect(missing.status).toBe(404);
    expect(JSON.parse(missing.body)).toEqual({ error: 'no such route: POST /api/push' });
  });

  it("refuses other sites' pages and needs the API key when one is set, as /v1 does; the app's own API is not reachable at /api/", async () => {
    const fromPage = await send(t.server.port, 'GET', '/api/tags', { origin: 'http://evil.example' });
    expect(fromPage.status).toBe(403);
    expect((JSON.parse(fromPage.body) as { error: string }).error).toContain('requests from web pages are refused');
    // The app's methods moved under /gufo/api/: the old path is Ollama's, with or without the token.
    const old = await send(
      t.server.port,
      'POST',
      '/api/appInfo',
      { 'x-gufo-token': t.server.token, 'content-type': 'application/json' },
      '[]',
    );
    expect(old.status).toBe(404);
    expect(JSON.parse(old.body)).toEqual({ error: 'no such route: POST /api/appInfo' });
    expect((await send(t.server.port, 'POST', '/gufo/api/appInfo', {}, '[]')).status).toBe(401);
    expect(
      (await send(t.server.port, 'POST', '/gufo/api/appInfo', { 'x-gufo-token': t.server.token }, '[]')).status,
    ).toBe(200);

    await t.backend.api.updateOpenAiServerSettings({ apiKey: 'sk-ollama-test-key' });
    try {
      await expect(ollama.list()).rejects.toMatchObject({ status_code: 401 });
      const keyed = new Ollama({
        host: `http://127.0.0.1:${t.server.port}`,
        headers: { Authorization: 'Bearer sk-ollama-test-key' },
      });
      expect((await keyed.list()).models).toHaveLength(1);
    } finally {
      await t.backend.api.updateOpenAiServerSettings({ apiKey: null });
    }
  });
});

describe("Ollama's API on the settings' own listener", { timeout: 240_000 }, () => {
  let listener: OpenAiListener;
  beforeAll(async () => {
    listener = await startOpenAiServer(t.service, { host: '127.0.0.1', port: 0 });
  });
  afterAll(() => listener?.close());

  it('serves the same routes at its root', async () => {
    const client = new Ollama({ host: `http://127.0.0.1:${listener.port}` });
    expect((await send(listener.port, 'GET', '/')).body).toBe('Ollama is running');
    expect((await client.list()).models.map((m) => m.name)).toEqual([model]);
    const answer = await client.generate({
      model,
      prompt: 'Once upon a time',
      raw: true,
      stream: false,
      options: { ...greedy, num_predict: 8 },
    });
    expect(answer.response!.startsWith(', there was')).toBe(true);
    expect((await send(listener.port, 'GET', '/api/tags', { host: 'evil.example' })).status).toBe(403);
  });
});

describe('a model without a chat template on the chat routes', { timeout: 240_000 }, () => {
  // stories260K has no tokenizer.chat_template: the messages are its prompt as plain text, as in
  // the app and `gufo chat` (core/prompt-format.ts's defaultPromptFormat), never wrapped in a
  // template's turns it was not trained on.
  const prompt = 'Once upon a time';
  let promptIds: number;
  beforeAll(() => {
    const text = openModelText(STORIES_260K);
    promptIds = text.tokenizer.tokenize(prompt, { addBos: true, parseSpecial: false }).length;
    text.close();
  });

  it("/v1/chat/completions' prompt is the message as written, answered as /v1/completions continues it", async () => {
    expect(promptIds).toBe(5);
    const chat = await t.client().chat.completions.create({
      model: 'stories260k',
      messages: [{ role: 'user', content: prompt }],
      temperature: 0,
      max_tokens: 12,
    });
    expect(chat.usage!.prompt_tokens).toBe(promptIds);
    const completion = await t
      .client()
      .completions.create({ model: 'stories260k', prompt, temperature: 0, max_tokens: 12 });
    expect(chat.choices[0]!.message.content).toBe(completion.choices[0]!.text);
  });

  it("Ollama's /api/chat and /api/generate count the same prompt", async () => {
    const options = { temperature: 0, num_predict: 4 };
    const chat = await ollama.chat({
      model: 'stories260k',
      messages: [{ role: 'user', content: prompt }],
      stream: false,
      options,
    });
    expect(chat.prompt_eval_count).toBe(promptIds);
    const generated = await ollama.generate({ model: 'stories260k', prompt, stream: false, options });
    expect(generated.prompt_eval_count).toBe(promptIds);
  });
});

describe("Ollama's other clients", () => {
  const system = 'You tell stories.';
  const prompt = 'Once upon a time';
  const greedy = { temperature: 0, seed: 42, num_predict: 24 };
  const conversation: [string, string][] = [
    ['system', system],
    ['human', prompt],
  ];
  const provider = (id: string) => createOllama({ baseURL: `http://127.0.0.1:${t.server.port}/api` })(id);

  /** The official client's answer to the same conversation and options. */
  const expected = (options: Record<string, number>) =>
    ollama.chat({ model: 'stories260k', messages, stream: false, options });
  /** Its answer with `greedy`, asked once for the three cases that compare with it. */
  let greedyAnswer: ReturnType<typeof expected> | undefined;
  const greedyReference = () => (greedyAnswer ??= expected(greedy));

  describe('Vercel AI SDK, ollama-ai-provider-v2', { timeout: 240_000 }, () => {
    it('generateText answers as Ollama answers, with its token counts', async () => {
      const reference = await greedyReference();
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
      const reference = await greedyReference();
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
      const reference = await greedyReference();
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
      const [loaded] = (await ollama.ps()).models;
      const left = new Date(loaded!.expires_at).getTime() - Date.now();
      expect(left).toBeGreaterThan(9 * 60_000);
      expect(left).toBeLessThanOrEqual(10 * 60_000);
    });
  });
});

describe("what Ollama's clients send that Gufo does not refuse", () => {
  const model = 'stories260k';
  const messages = [{ role: 'user', content: 'Once upon a time' }];
  const greedy = { temperature: 0, repeat_penalty: 1, seed: 42, num_predict: 16 };

  const loaded = async () =>
    (await ollama.ps()).models.map((m) => ({ name: m.name, expires_at: new Date(m.expires_at).toISOString() }));

  describe('keep_alive as Ollama reads it', () => {
    it('is seconds as a number, a Go duration as text; negative is forever (null), as is longer than a timer waits', () => {
      expect(parseKeepAlive(30)).toBe(30_000);
      expect(parseKeepAlive(0.5)).toBe(500);
      expect(parseKeepAlive('5m')).toBe(300_000);
      expect(parseKeepAlive('1h30m')).toBe(5_400_000);
      expect(parseKeepAlive('1.5s')).toBe(1500);
      expect(parseKeepAlive('250ms')).toBe(250);
      expect(parseKeepAlive('0')).toBe(0);
      expect(parseKeepAlive('0s')).toBe(0);
      expect(parseKeepAlive(-1)).toBeNull();
      expect(parseKeepAlive('-5m')).toBeNull();
      expect(parseKeepAlive('10000h')).toBeNull();
      expect(parseKeepAlive(undefined)).toBeNull();
      for (const bad of ['5', 'm', '5 m', '5d', '', true, {}])
        expect(() => parseKeepAlive(bad)).toThrow(/"keep_alive" must be a duration such as "5m", "1h30m" or "0"/);
    });
  });

  describe("Ollama's tolerance", { timeout: 240_000 }, () => {
    it('ignores options Gufo does not apply, and applies repeat_last_n', async () => {
      // 40 tokens: the answer repeats itself late enough that 16 would not show the penalty window.
      const long = { ...greedy, num_predict: 40 };
      const plain = await ollama.chat({ model, messages, stream: false, options: long });
      expect(plain.message.content.length).toBeGreaterThan(20);
      const ignored = await ollama.chat({
        model,
        messages,
        stream: false,
        options: {
          ...long,
          mirostat: 2,
          mirostat_tau: 5,
          mirostat_eta: 0.1,
          typical_p: 0.5,
          tfs_z: 0.5,
          num_gqa: 8,
          penalize_newline: true,
          numa: true,
          num_thread: 2,
          num_gpu: 99,
          use_mmap: false,
          bogus: 'x',
        } as never,
      });
      expect(ignored.message.content).toBe(plain.message.content);

      // A window of 0 turns the penalty off: the answer is the unpenalized one; 64 tokens change it.
      const penalized = { ...long, repeat_penalty: 1.8 };
      const off = await ollama.chat({ model, messages, stream: false, options: { ...penalized, repeat_last_n: 0 } });
      expect(off.message.content).toBe(plain.message.content);
      const on = await ollama.chat({ model, messages, stream: false, options: { ...penalized, repeat_last_n: 64 } });
      expect(on.message.content).not.toBe(plain.message.content);
      const whole = await ollama.chat({
        model,
        messages,
        stream: false,
        options: { ...penalized, num_predict: 16, repeat_last_n: -1 },
      });
      expect(whole.done).toBe(true);
      await expect(
        ollama.chat({ model, messages, stream: false, options: { ...greedy, repeat_last_n: 'x' } as never }),
      ).rejects.toMatchObject({ status_code: 400, error: expect.stringContaining('options.repeat_last_n') as string });
    });

    it('reads a null or missing content as empty, as Ollama does', async () => {
      const body = (content: unknown) =>
        JSON.stringify({
          model,
          stream: false,
          options: greedy,
          messages: [
            { role: 'system', ...(content === undefined ? {} : { content }) },
            { role: 'user', content: 'Once upon a time' },
          ],
        });
      const empty = await send(t.server.port, 'POST', '/api/chat', {}, body(''));
      expect(empty.status).toBe(200);
      for (const content of [null, undefined]) {
        const reply = await send(t.server.port, 'POST', '/api/chat', {}, body(content));
        expect(reply.status).toBe(200);
        const answerOf = (text: string) => {
          const { message, prompt_eval_count } = JSON.parse(text) as {
            message: { content: string };
            prompt_eval_count: number;
          };
          return { content: message.content, prompt_eval_count };
        };
        // The same prompt (token count) and answer as the empty content's.
        expect(answerOf(reply.body)).toEqual(answerOf(empty.body));
      }
    });

    it('keeps the model loaded as keep_alive says, and reports the load time of this request only', async () => {
      const ask = (keep_alive?: string | number) =>
        ollama.generate({ model, prompt: 'Once', raw: true, stream: false, options: greedy, keep_alive });
      // Loaded by the tests before: no load in this request.
      expect((await ask()).load_duration).toBe(0);
      expect(await loaded()).toEqual([{ name: 'stories260k:latest', expires_at: '0001-01-01T00:00:00.000Z' }]);

      // 0: unloaded before the answer ends.
      const once = await ask(0);
      expect(once.load_duration).toBe(0);
      expect(await loaded()).toEqual([]);
      const reloaded = await ask('2s');
      expect(reloaded.load_duration).toBeGreaterThan(0);
      const [kept] = await loaded();
      const left = new Date(kept!.expires_at).getTime() - Date.now();
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThanOrEqual(2000);
      await new Promise((done) => setTimeout(done, left + 500));
      expect(await loaded()).toEqual([]);

      // An empty prompt loads (done_reason "load"), for as long as asked; with keep_alive 0 it unloads at once.
      expect(await ollama.generate({ model, prompt: '', keep_alive: -1 })).toMatchObject({ done_reason: 'load' });
      expect(await loaded()).toHaveLength(1);
      expect(await ollama.chat({ model, messages: [], keep_alive: '0s' })).toMatchObject({
        done: true,
        done_reason: 'unload',
      });
      expect(await loaded()).toEqual([]);

      // Embeddings too: loaded for this request, unloaded after it.
      const embedded = await ollama.embed({ model, input: 'Once', keep_alive: 0 });
      expect(embedded.embeddings[0]).toHaveLength(64);
      expect(embedded.load_duration).toBeGreaterThan(0);
      expect(await loaded()).toEqual([]);

      await expect(ask('5')).rejects.toMatchObject({
        status_code: 400,
        error: expect.stringContaining('"keep_alive" must be a duration') as string,
      });
    });
  });
});
