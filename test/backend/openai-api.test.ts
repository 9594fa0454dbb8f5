/**
 * The OpenAI-compatible API's parts and its HTTP surface, up to the engine: model ids, stop
 * strings, streamed output, queues, metrics, security, request checks and the settings' listener,
 * over real HTTP with the official `openai` client. Generation itself: openai-generation.test.ts.
 */
import { copyFileSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ModelEntry } from '../../src-preload/api';
import { runnableModels, servedModels } from '../../src-main/backend/openai/model-ids';
import { ServerMetrics } from '../../src-main/backend/openai/metrics';
import { OutputText } from '../../src-main/backend/openai/output-text';
import { ModelQueues } from '../../src-main/backend/openai/queue';
import { DEFAULT_MAX_BODY_BYTES } from '../../src-main/backend/openai/service';
import { StopScanner } from '../../src-main/backend/openai/stop-strings';
import { openModelText } from '../../src-main/backend/chat/prompt';
import { openStore } from '../../src-main/node/store/database';
import { DEFAULT_OPENAI_SERVER_SETTINGS, DEFAULT_SETTINGS, SettingsStore } from '../../src-main/node/store/settings';
import { tempDir } from '../support/temp';
import { STORIES_260K } from '../support/paths';
import { errorOf, metric, send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

function entry(path: string, extra: Partial<ModelEntry> = {}): ModelEntry {
  const fileName = path.slice(path.lastIndexOf('/') + 1);
  return {
    id: 1,
    name: fileName.replace(/(-\d{5}-of-\d{5})?\.gguf$/i, ''),
    generalName: 'llama',
    path,
    fileName,
    source: 'folder',
    locations: [{ path, source: 'folder', label: null }],
    parts: 1,
    bytes: 1,
    mtimeMs: 0,
    sha256: null,
    architecture: 'llama',
    parameters: 1,
    fileType: null,
    typeMix: [],
    contextLength: 2048,
    error: null,
    notRunnable: extra.error ?? null,
    noGeneration: null,
    addedAt: '',
    ...extra,
  };
}

describe('model ids', () => {
  it('are library names, lower-cased, told apart by path when they clash, and list only models Gufo can run', () => {
    const entries = [
      entry('/b/Stories260K.gguf'),
      entry('/a/stories260k.GGUF'),
      entry('/c/Qwen3-8B-Q4_K_M-00001-of-00003.gguf'),
      entry('/d/broken.gguf', { error: 'not a GGUF file' }),
      entry('/e/ggml-vocab-baichuan.gguf', { notRunnable: 'vocabulary only' }),
      entry('/ollama/blobs/sha256-1234', { source: 'ollama', name: 'Llama3.2:3B' }),
      entry('/hf/blobs/0a1b', { source: 'huggingface', name: 'org/repo/Tiny-Q8_0' }),
    ];
    const served = runnableModels(entries);
    expect(served.map((m) => [m.id, m.entry.path])).toEqual([
      ['llama3.2:3b', '/ollama/blobs/sha256-1234'],
      ['org/repo/tiny-q8_0', '/hf/blobs/0a1b'],
      ['qwen3-8b-q4_k_m', '/c/Qwen3-8B-Q4_K_M-00001-of-00003.gguf'],
      ['stories260k', '/a/stories260k.GGUF'],
      [expect.stringMatching(/^stories260k-[0-9a-f]{8}$/), '/b/Stories260K.gguf'],
    ]);
    // Models that cannot run keep an id, so a request naming one is told why.
    expect(servedModels(entries).map((m) => m.id)).toEqual(expect.arrayContaining(['broken', 'ggml-vocab-baichuan']));
    // The same files in another order give the same ids.
    const again = runnableModels([entry('/a/stories260k.GGUF'), entry('/b/Stories260K.gguf')]);
    expect(again.map((m) => m.id)).toEqual([served[3]!.id, served[4]!.id]);
  });
});

describe('server settings', () => {
  it('are kept in the SQLite file beside the app settings, each field checked, without mixing the two', () => {
    const path = `${tempDir()}/gufo.db`;
    const { db } = openStore(path);
    const store = new SettingsStore(db);
    expect(store.openAiServer.get()).toEqual(DEFAULT_OPENAI_SERVER_SETTINGS);
    store.openAiServer.update({ enabled: true, port: 8081, apiKey: 'sk-local-key-0001' });
    expect(() => store.openAiServer.update({ host: 'my laptop' })).toThrow(
      'setting "openAiServer.host" must be an IP address (such as 127.0.0.1) or "localhost"',
    );
    expect(() => store.openAiServer.update({ apiKey: 'two words' })).toThrow(/"openAiServer.apiKey" must be null/);
    expect(() => store.openAiServer.update({ theme: 'dark' } as never)).toThrow('unknown setting "openAiServer.theme"');
    expect(() => store.update({ 'openAiServer.port': 1 } as never)).toThrow('unknown setting "openAiServer.port"');
    expect(store.get()).toEqual(DEFAULT_SETTINGS);
    db.close();
    const reopened = openStore(path).db;
    expect(new SettingsStore(reopened).openAiServer.get()).toEqual({
      ...DEFAULT_OPENAI_SERVER_SETTINGS,
      enabled: true,
      port: 8081,
      apiKey: 'sk-local-key-0001',
    });
    reopened.close();
  });
});

describe('stop strings', () => {
  it('cut before the first occurrence of any of them, across pieces', () => {
    const s = new StopScanner(['END', 'stop here']);
    expect(s.push('one two st')).toBe('one two ');
    expect(s.push('op h')).toBe('');
    expect(s.push('ere and more')).toBe('');
    expect(s.stopped).toBe(true);
    expect(s.push('later')).toBe('');
  });

  it('release what turned out not to be one, and the rest at the end', () => {
    const s = new StopScanner(['END']);
    expect(s.push('the EN')).toBe('the ');
    expect(s.push('D')).toBe('');
    const t = new StopScanner(['END']);
    expect(t.push('the EN')).toBe('the ');
    expect(t.push('Dx')).toBe('');
    const u = new StopScanner(['END']);
    expect(u.push('an E')).toBe('an ');
    expect(u.push('Nd')).toBe('ENd');
    expect(u.push(' E')).toBe(' ');
    expect(u.end()).toBe('E');
    expect(u.stopped).toBe(false);
  });

  it('take the earliest of overlapping stops', () => {
    expect(new StopScanner(['cd', 'abc']).push('xabcd')).toBe('x');
    expect(new StopScanner(['abc', 'cd']).push('xabcd')).toBe('x');
    expect(new StopScanner(['bcd', 'c']).push('xabcd')).toBe('xa');
  });
});

describe('output text', () => {
  const story = 'Once upon a time, there was a little girl named Lily.';

  function run(stops: string[]) {
    const text = openModelText(STORIES_260K);
    try {
      const ids = text.tokenizer.tokenize(story);
      const out = new OutputText(text.answerDecoder(true), stops, 0);
      const pieces = ids.map((id) => out.push(id, -0.5, [[id, -0.5]]));
      pieces.push(out.end());
      const piece = (id: number) => new TextDecoder().decode(text.tokenizer.tokenToPiece(id));
      return { ids, out, pieces, piece };
    } finally {
      text.close();
    }
  }

  it('streams the decoded text, every token released with its text and where it starts', () => {
    const { ids, out, pieces, piece } = run(['a dragon']);
    expect(pieces.map((p) => p.text).join('')).toBe(story);
    expect(out.text).toBe(story);
    expect(out.tokens.tokens.map((t) => t.id)).toEqual(ids);
    expect(out.tokens.tokens.every((t) => t.logprob === -0.5)).toBe(true);
    // Each token's text is where its offset says (the first one's leading space is not shown).
    ids.forEach((id, i) => {
      const end = out.tokens.offsets[i + 1] ?? story.length;
      expect(story.slice(out.tokens.offsets[i], end)).toBe(i === 0 ? piece(id).trimStart() : piece(id));
    });
  });

  it('holds back a possible stop string and shows it when it is not one', () => {
    const { pieces, out } = run(['a little boy']);
    expect(pieces.map((p) => p.text).join('')).toBe(story);
    expect(out.stopped).toBe(false);
    // "a little" waited for "girl": no piece ends inside it.
    expect(pieces.some((p) => p.text.endsWith(' a') || p.text.endsWith(' a little'))).toBe(false);
  });

  it('cuts before a stop string, keeping the tokens whose text begins before the cut', () => {
    const { pieces, out, ids, piece } = run(['ittle']);
    expect(out.stopped).toBe(true);
    expect(pieces.map((p) => p.text).join('')).toBe('Once upon a time, there was a l');
    const kept = out.tokens.tokens.map((t) => t.id);
    expect(kept).toEqual(ids.slice(0, kept.length));
    const covered = kept.map((id, i) => (i === 0 ? piece(id).trimStart() : piece(id))).join('');
    expect(covered.startsWith(out.text)).toBe(true);
    expect(covered.length - piece(kept.at(-1)!).length).toBeLessThan(out.text.length);
  });
});

describe('model queues', () => {
  it('run one request per model at a time, in order, and refuse more than the cap with a 503', async () => {
    const depths: [string, number][] = [];
    const queues = new ModelQueues(
      () => 2,
      (model, depth) => depths.push([model, depth]),
    );
    const order: string[] = [];
    let release!: () => void;
    const first = queues.run('m', () => new Promise<void>((r) => (release = r)).then(() => void order.push('first')));
    const second = queues.run('m', () => void order.push('second'));
    const other = queues.run('n', () => void order.push('other'));
    await expect(queues.run('m', () => order.push('third'))).rejects.toMatchObject({
      status: 503,
      code: 'overloaded',
      type: 'server_error',
    });
    await other;
    expect(order).toEqual(['other']);
    release();
    await Promise.all([first, second]);
    expect(order).toEqual(['other', 'first', 'second']);
    await new Promise((r) => setImmediate(r));
    expect(depths.filter(([m]) => m === 'm').map(([, d]) => d)).toEqual([1, 2, 1, 0]);
  });

  it('run up to `parallel` requests per model at once (the slots), the rest in order as each ends', async () => {
    const queues = new ModelQueues(
      () => 8,
      () => {},
      () => 2,
    );
    const started: string[] = [];
    const releases = new Map<string, () => void>();
    const job = (name: string) =>
      queues.run('m', () => {
        started.push(name);
        return new Promise<void>((r) => releases.set(name, r));
      });
    const jobs = ['a', 'b', 'c', 'd'].map(job);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'b']);
    releases.get('b')!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'b', 'c']);
    releases.get('a')!();
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(['a', 'b', 'c', 'd']);
    for (const name of ['c', 'd']) releases.get(name)!();
    await Promise.all(jobs);
  });
});

describe('metrics', () => {
  it('are Prometheus text with escaped labels', () => {
    const m = new ServerMetrics();
    m.request('/v1/completions', 200);
    m.request('/v1/completions', 200);
    m.request('/v1/completions', 400);
    m.loaded('a"b', 1500);
    m.generated({ model: 'a"b', promptTokens: 5, completionTokens: 7, ttftMs: 250, prefillTokS: 40, decodeTokS: 12 });
    m.generated({ model: 'a"b', promptTokens: 3, completionTokens: 2, ttftMs: 750, prefillTokS: 30, decodeTokS: 10 });
    m.queueDepth('a"b', 0);
    const text = m.render();
    expect(text).toContain('# TYPE gufo_openai_requests_total counter\n');
    expect(metric(text, 'gufo_openai_requests_total{endpoint="/v1/completions",status="200"}')).toBe(2);
    expect(metric(text, 'gufo_openai_requests_total{endpoint="/v1/completions",status="400"}')).toBe(1);
    expect(metric(text, 'gufo_openai_prompt_tokens_total{model="a\\"b"}')).toBe(8);
    expect(metric(text, 'gufo_openai_completion_tokens_total{model="a\\"b"}')).toBe(9);
    expect(metric(text, 'gufo_openai_time_to_first_token_seconds_sum{model="a\\"b"}')).toBe(1);
    expect(metric(text, 'gufo_openai_time_to_first_token_seconds_count{model="a\\"b"}')).toBe(2);
    expect(metric(text, 'gufo_openai_decode_tokens_per_second{model="a\\"b"}')).toBe(10);
    expect(metric(text, 'gufo_openai_model_load_seconds{model="a\\"b"}')).toBe(1.5);
    expect(text).toContain('gufo_openai_queue_depth{model="a\\"b"} 0\n');
    expect(text.endsWith('\n')).toBe(true);
  });
});

describe('the HTTP API, up to the engine', () => {
  let t: OpenAiTestServer;
  let port: number;
  const json = { 'content-type': 'application/json' };
  const chat = (body: object) =>
    JSON.stringify({ model: 'stories260k', messages: [{ role: 'user', content: 'Hi' }], ...body });

  beforeAll(async () => {
    t = await startOpenAiTestServer();
    port = t.server.port;
  });
  afterAll(() => t?.close());

  it('lists the library models with the official client', async () => {
    const list = await t.client().models.list();
    expect(list.data).toEqual([
      { id: 'stories260k', object: 'model', created: expect.any(Number) as number, owned_by: 'gufo' },
    ]);
    expect((await t.client().models.retrieve('stories260k')).id).toBe('stories260k');
    await expect(t.client().models.retrieve('nope')).rejects.toMatchObject({ status: 404, code: 'model_not_found' });
  });

  it('lists only models Gufo can run, and answers a request naming another with a 400 saying why', async () => {
    const vocab = join(t.backend.context.modelsDir, 'ggml-vocab-baichuan.gguf');
    copyFileSync(join(STORIES_260K, '..', 'vocab', 'ggml-vocab-baichuan.gguf'), vocab);
    try {
      expect((await t.client().models.list()).data.map((m) => m.id)).toEqual(['stories260k']);
      const why = /The model "ggml-vocab-baichuan" cannot be run: vocabulary only/;
      await expect(t.client().models.retrieve('ggml-vocab-baichuan')).rejects.toMatchObject({
        status: 400,
        code: 'model_not_supported',
        message: expect.stringMatching(why) as string,
      });
      const chatting = t
        .client()
        .chat.completions.create({ model: 'ggml-vocab-baichuan', messages: [{ role: 'user', content: 'Hi' }] });
      await expect(chatting).rejects.toMatchObject({
        status: 400,
        code: 'model_not_supported',
        param: 'model',
        message: expect.stringMatching(why) as string,
      });
      expect((await t.backend.api.openAiServerStatus()).modelIds).toEqual(['stories260k']);
    } finally {
      unlinkSync(vocab);
    }
  });

  it('answers malformed JSON, bad parameters and unknown models with OpenAI-shaped errors', async () => {
    const bad = await send(port, 'POST', '/v1/chat/completions', json, '{"model": "stories260k", ');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body)).toEqual({
      error: {
        message: 'the request body is not valid JSON',
        type: 'invalid_request_error',
        param: 'body',
        code: 'invalid_json',
      },
    });

    const client = t.client();
    const refused = (body: object) =>
      client.chat.completions.create({ model: 'stories260k', messages: [{ role: 'user', content: 'Hi' }], ...body });
    await expect(refused({ temperature: 3 })).rejects.toMatchObject({
      status: 400,
      param: 'temperature',
      code: 'invalid_value',
    });
    await expect(refused({ n: 9 })).rejects.toMatchObject({
      status: 400,
      param: 'n',
      code: 'invalid_value',
      message: expect.stringContaining('"n" must be a whole number from 1 to 8') as string,
    });
    await expect(refused({ top_logprobs: 2 })).rejects.toMatchObject({ status: 400, param: 'top_logprobs' });
    await expect(refused({ stop: ['a', ''] })).rejects.toMatchObject({ status: 400, param: 'stop' });
    await expect(refused({ messages: [{ role: 'wizard', content: 'x' }] })).rejects.toMatchObject({
      status: 400,
      param: 'messages[0].role',
    });
    await expect(
      refused({ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'x' } }] }] }),
    ).rejects.toMatchObject({ status: 400, param: 'messages[0].content[0]' });
    await expect(refused({ functions: [{ name: 'f' }] })).rejects.toMatchObject({
      status: 400,
      param: 'functions',
      code: 'unsupported_parameter',
    });
    await expect(refused({ tools: [{ type: 'function', function: {} }] })).rejects.toMatchObject({
      status: 400,
      param: 'tools[0].function.name',
    });
    // JSON mode: a schema outside the supported subset, or malformed, is refused before any engine work.
    const schema = (s: unknown) => ({
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: s } },
    });
    await expect(
      refused(schema({ type: 'object', properties: { n: { type: 'integer', multipleOf: 2 } } })),
    ).rejects.toMatchObject({
      status: 400,
      param: 'response_format',
      code: 'invalid_json_schema',
      error: {
        message: 'response_format.json_schema.schema: unsupported JSON Schema keyword "multipleOf" at #/properties/n',
      },
    });
    await expect(refused(schema({ type: 'object', required: ['a'] }))).rejects.toMatchObject({
      status: 400,
      param: 'response_format',
      message: expect.stringContaining('names "a", which is not in "properties"') as string,
    });
    await expect(
      refused({ response_format: { type: 'json_schema', json_schema: { name: 'x' } } }),
    ).rejects.toMatchObject({ status: 400, param: 'response_format', code: 'missing_required_parameter' });
    await expect(refused({ response_format: { type: 'xml' } })).rejects.toMatchObject({
      status: 400,
      param: 'response_format',
      message: expect.stringContaining('"xml"') as string,
    });
    await expect(refused({ model: 'gpt-4o' })).rejects.toMatchObject({
      status: 404,
      code: 'model_not_found',
      type: 'invalid_request_error',
    });
    await expect(client.completions.create({ model: 'stories260k', prompt: [[1, 99999]] })).rejects.toMatchObject({
      status: 400,
      param: 'prompt',
    });

    const route = await send(port, 'POST', '/v1/audio/speech', json, '{}');
    expect(route.status).toBe(404);
    expect(errorOf(route.body).code).toBe('unknown_url');
    expect((await send(port, 'GET', '/v1/chat/completions')).status).toBe(405);
  });

  it('refuses web pages of other origins (403) but not its own page or programs', async () => {
    const foreign = await send(
      port,
      'POST',
      '/v1/chat/completions',
      { ...json, origin: 'https://evil.example' },
      chat({}),
    );
    expect(foreign.status).toBe(403);
    expect(errorOf(foreign.body)).toMatchObject({ type: 'permission_error', code: 'forbidden_origin' });
    for (const origin of ['null', `http://127.0.0.1:${port + 1}`, `http://localhost:${port}`]) {
      expect((await send(port, 'GET', '/v1/models', { origin })).status).toBe(403);
    }
    expect((await send(port, 'GET', '/v1/models', { origin: `http://127.0.0.1:${port}` })).status).toBe(200);
    expect((await send(port, 'GET', '/metrics', { origin: 'https://evil.example' })).status).toBe(403);
    // DNS rebinding: the UI server checks the Host of every route, /v1 included.
    expect((await send(port, 'GET', '/v1/models', { host: `evil.example:${port}` })).status).toBe(403);
  });

  it('requires the API key as a Bearer token once one is set (401 otherwise)', async () => {
    await t.backend.api.updateOpenAiServerSettings({ apiKey: 'sk-local-key-0001' });
    try {
      await expect(t.client().models.list()).rejects.toMatchObject({ status: 401, code: 'invalid_api_key' });
      await expect(t.client('sk-local-key-0002').models.list()).rejects.toMatchObject({ status: 401 });
      expect((await t.client('sk-local-key-0001').models.list()).data).toHaveLength(1);
      expect((await send(port, 'GET', '/metrics')).status).toBe(401);
    } finally {
      await t.backend.api.updateOpenAiServerSettings({ apiKey: null });
    }
    expect((await t.client().models.list()).data).toHaveLength(1);
  });

  it('refuses a prompt longer than the context, and an oversized body, before any engine work', async () => {
    await t.backend.api.updateOpenAiServerSettings({ contextSize: 32 });
    try {
      const long = 'Once upon a time there was a little girl. '.repeat(8);
      await expect(t.client().completions.create({ model: 'stories260k', prompt: long })).rejects.toMatchObject({
        status: 400,
        code: 'context_length_exceeded',
        param: 'prompt',
        message: expect.stringMatching(
          /the prompt has (at least )?\d+ tokens, and the context of "stories260k" holds 32/,
        ) as string,
      });
      await expect(
        t.client().chat.completions.create({ model: 'stories260k', messages: [{ role: 'user', content: long }] }),
      ).rejects.toMatchObject({
        status: 400,
        code: 'context_length_exceeded',
        param: 'messages',
      });
    } finally {
      await t.backend.api.updateOpenAiServerSettings({ contextSize: 4096 });
    }
    t.service.override({ maxBodyBytes: 2000 });
    try {
      const big = await send(
        port,
        'POST',
        '/v1/completions',
        json,
        JSON.stringify({ model: 'stories260k', prompt: 'x'.repeat(3000) }),
      );
      expect(big.status).toBe(413);
      expect(errorOf(big.body).code).toBe('request_too_large');
    } finally {
      t.service.override({ maxBodyBytes: DEFAULT_MAX_BODY_BYTES });
    }
    const metrics = (await send(port, 'GET', '/metrics')).body;
    expect(metric(metrics, 'gufo_openai_requests_total{endpoint="/v1/completions",status="413"}')).toBe(1);
    // Nothing reached the engine: no load, no tokens.
    expect(metrics).not.toContain('gufo_openai_model_load_seconds{');
    expect(metrics).not.toContain('gufo_openai_prompt_tokens_total{');
  });

  it('runs a listener of its own as the settings say, with its own Host check', async () => {
    const api = t.backend.api;
    await expect(api.updateOpenAiServerSettings({ port: 70000 })).rejects.toThrow(
      /setting "openAiServer.port" must be a whole number from 0/,
    );
    await expect(api.updateOpenAiServerSettings({ enabled: true, host: '0.0.0.0' })).rejects.toThrow(
      /serving the API on 0.0.0.0, beyond this machine, needs an API key/,
    );
    expect((await api.openAiServerStatus()).settings.enabled).toBe(false);

    const busy = await api.updateOpenAiServerSettings({ enabled: true, port });
    expect(busy).toMatchObject({ url: null, error: `port ${port} is already in use on 127.0.0.1` });

    const on = await api.updateOpenAiServerSettings({ enabled: true, port: 0 });
    expect(on).toMatchObject({ error: null, apiKeyOverridden: false, modelIds: ['stories260k'] });
    expect(on.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    const own = Number(new URL(on.url!).port);
    const client = new OpenAI({ baseURL: on.url!, apiKey: 'none', maxRetries: 0 });
    expect((await client.models.list()).data.map((m) => m.id)).toEqual(['stories260k']);
    const rebound = await send(own, 'GET', '/v1/models', { host: `evil.example:${own}` });
    expect(rebound.status).toBe(403);
    expect(errorOf(rebound.body).code).toBe('forbidden_host');
    // Its root is Ollama's ("Ollama is running"); it serves no page.
    expect((await send(own, 'GET', '/', {})).body).toBe('Ollama is running');
    expect((await send(own, 'GET', '/index.html', {})).status).toBe(404);

    const off = await api.updateOpenAiServerSettings({ enabled: false });
    expect(off).toMatchObject({ url: null, error: null });
    await expect(client.models.list()).rejects.toThrow(/Connection error/);
  });
});
