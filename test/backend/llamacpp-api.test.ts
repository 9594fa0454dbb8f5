/**
 * llama.cpp's native routes through raw HTTP (llama.cpp has no official JS client), with the real
 * engine and stories260K: /health, /completion (whole and streamed, equal to /v1/completions'
 * generation), /tokenize and /detokenize, the model picked when none is named, llama.cpp's error
 * shape, and /v1's access rules; the UI's page and files still served beside them.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openModelText } from '../../src-main/backend/chat/prompt';
import { STORIES_260K, TINY_RANDOM_LLAMA } from '../support/paths';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const json = { 'content-type': 'application/json' };
const prompt = 'Once upon a time';

let t: OpenAiTestServer;
const post = (path: string, body: object, headers: Record<string, string> = {}) =>
  send(t.server.port, 'POST', path, { ...json, ...headers }, JSON.stringify(body));

beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

/** A reply's JSON body, read as the fields a test looks at. */
interface Reply {
  content?: string;
  tokens?: unknown[];
  error?: { code: number; message: string; type: string };
}
const bodyOf = (reply: { body: string }) => JSON.parse(reply.body) as Reply;

/** The events of a llama.cpp stream: `data: <json>` each, no [DONE]. */
function events(body: string): Record<string, unknown>[] {
  return body
    .split('\n\n')
    .filter((e) => e !== '')
    .map((e) => {
      expect(e.startsWith('data: ')).toBe(true);
      return JSON.parse(e.slice('data: '.length)) as Record<string, unknown>;
    });
}

describe("llama.cpp's routes", { timeout: 240_000 }, () => {
  it('tokenize and detokenize with llama.cpp field names, as the model tokenizer does', async () => {
    const text = openModelText(STORIES_260K);
    try {
      const ids = text.tokenizer.tokenize(prompt, { parseSpecial: true });
      const plain = await post('/tokenize', { content: prompt });
      expect(plain.status).toBe(200);
      expect(JSON.parse(plain.body)).toEqual({ tokens: ids });
      const special = JSON.parse((await post('/tokenize', { content: prompt, add_special: true })).body) as {
        tokens: number[];
      };
      expect(special.tokens).toEqual([text.vocab.bos, ...ids]);
      const pieces = JSON.parse((await post('/tokenize', { content: prompt, with_pieces: true })).body) as {
        tokens: { id: number; piece: string }[];
      };
      expect(pieces.tokens.map((p) => p.id)).toEqual(ids);
      expect(pieces.tokens.map((p) => p.piece).join('')).toBe(` ${prompt}`);
      const back = await post('/detokenize', { tokens: ids });
      expect(JSON.parse(back.body)).toEqual({ content: text.tokenizer.detokenize(ids, { renderSpecial: true }) });
      expect(bodyOf(back).content?.trim()).toBe(prompt);
    } finally {
      text.close();
    }
  });

  it("completes as /v1/completions does, in llama.cpp's shape, whole and streamed", async () => {
    const reference = await t
      .client()
      .completions.create({ model: 'stories260k', prompt, max_tokens: 8, temperature: 0 });
    const whole = await post('/completion', { prompt, n_predict: 8, temperature: 0 });
    expect(whole.status).toBe(200);
    const body = JSON.parse(whole.body) as Record<string, unknown> & { timings: Record<string, number> };
    expect(body).toMatchObject({
      content: reference.choices[0]!.text,
      stop: true,
      model: 'stories260k',
      tokens_predicted: 8,
      tokens_evaluated: reference.usage!.prompt_tokens,
      tokens_cached: reference.usage!.prompt_tokens - 1,
      stop_type: 'limit',
      stopping_word: '',
    });
    expect(body.timings.predicted_n).toBe(8);
    expect(body.timings.prompt_n).toBe(reference.usage!.prompt_tokens);
    expect(body.timings.predicted_per_second).toBeGreaterThan(0);

    const streamed = await post('/completion', { prompt, n_predict: 8, temperature: 0, stream: true });
    expect(streamed.status).toBe(200);
    expect(streamed.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(streamed.body).not.toContain('[DONE]');
    const all = events(streamed.body);
    const last = all.at(-1)!;
    expect(all.slice(0, -1).every((e) => e.stop === false && typeof e.content === 'string')).toBe(true);
    expect(all.map((e) => e.content).join('')).toBe(body.content);
    expect(last).toMatchObject({ stop: true, content: '', tokens_predicted: 8, stop_type: 'limit' });

    // A stop word: the content ends before it, and the reply names it.
    const content = body.content as string;
    const word = content.split(' ').filter((w) => w !== '')[2]!;
    const stopped = bodyOf(await post('/completion', { prompt, n_predict: 8, temperature: 0, stop: [word] }));
    expect(stopped).toMatchObject({
      stop_type: 'word',
      stopping_word: word,
      content: content.slice(0, content.indexOf(word)),
    });

    // Token ids as the prompt.
    const text = openModelText(STORIES_260K);
    const ids = [text.vocab.bos!, ...text.tokenizer.tokenize(prompt)];
    text.close();
    const fromIds = bodyOf(await post('/completion', { prompt: ids, n_predict: 8, temperature: 0 }));
    expect(fromIds.content).toBe(body.content);
  });

  it('answers /health, 503 while a model loads', async () => {
    const ok = await send(t.server.port, 'GET', '/health');
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.body)).toEqual({ status: 'ok' });
    let reply: Promise<Awaited<ReturnType<typeof send>>> | null = null;
    // A larger context than the one loaded: the engine loads the model again.
    const path = (await t.service.models())[0]!.entry.path;
    const onLoadStart = () => void (reply = send(t.server.port, 'GET', '/health'));
    await t.backend.context.engines.withModel({ path, ctx: 1 << 16, onLoadStart }, async () => {});
    const loading = await reply!;
    expect(loading.status).toBe(503);
    expect(JSON.parse(loading.body)).toEqual({
      error: { code: 503, message: 'Loading model', type: 'unavailable_error' },
    });
    expect((await send(t.server.port, 'GET', '/health')).status).toBe(200);
  });

  it("answers bad requests with llama.cpp's error shape, behind /v1's access rules, beside the UI's page", async () => {
    const bad = await post('/completion', { prompt: 'x', n_predict: 0 });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({
      error: { code: 400, message: '"n_predict" must be -1 (no limit) or at least 1', type: 'invalid_request_error' },
    });
    expect(bodyOf(await post('/detokenize', { tokens: [1, 1e6] })).error?.message).toBe(
      'token id 1000000 is not in the vocabulary of 512 tokens',
    );
    expect(bodyOf(await post('/tokenize', { content: 'x', model: 'nope' })).error?.code).toBe(404);
    expect((await send(t.server.port, 'GET', '/completion')).status).toBe(405);

    expect((await post('/tokenize', { content: 'x' }, { origin: 'https://evil.example' })).status).toBe(403);
    await t.backend.api.updateOpenAiServerSettings({ apiKey: 'sk-local-key-0001' });
    try {
      expect((await send(t.server.port, 'GET', '/health')).status).toBe(401);
      expect((await post('/tokenize', { content: 'x' })).status).toBe(401);
      const keyed = await post('/tokenize', { content: 'x' }, { authorization: 'Bearer sk-local-key-0001' });
      expect(keyed.status).toBe(200);
    } finally {
      await t.backend.api.updateOpenAiServerSettings({ apiKey: null });
    }

    const page = await send(t.server.port, 'GET', '/', { accept: 'text/html' });
    expect(page.body).toContain('<title>Gufo</title>');
    expect((await send(t.server.port, 'GET', '/index.html')).body).toContain('<title>Gufo</title>');
  });
});

describe("llama.cpp's routes with several models", { timeout: 240_000 }, () => {
  let two: OpenAiTestServer;
  beforeAll(async () => {
    two = await startOpenAiTestServer([STORIES_260K, TINY_RANDOM_LLAMA]);
  });
  afterAll(() => two?.close());

  it('take the model named, else the one loaded, else a 400 naming the choices', async () => {
    const ask = (body: object) =>
      send(two.server.port, 'POST', '/tokenize', json, JSON.stringify({ content: prompt, ...body }));
    const none = await ask({});
    expect(none.status).toBe(400);
    expect(bodyOf(none).error?.message).toBe(
      '"model" is required with several models in the library and none loaded: one of "llama-2-tiny-random", "stories260k"',
    );
    const stories = bodyOf(await ask({ model: 'stories260k' })).tokens as number[];
    const tiny = bodyOf(await ask({ model: 'llama-2-tiny-random' })).tokens as number[];
    expect(stories).not.toEqual(tiny);
    // Once a generation has loaded one, it is the one served.
    const made = await send(
      two.server.port,
      'POST',
      '/completion',
      json,
      JSON.stringify({ model: 'llama-2-tiny-random', prompt, n_predict: 2 }),
    );
    expect(made.status).toBe(200);
    expect(bodyOf(await ask({})).tokens).toEqual(tiny);
  });
});
