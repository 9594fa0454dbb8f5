/**
 * What Ollama's clients send that Gufo does not refuse: options it does not apply (ignored, as
 * Ollama ignores them), repeat_last_n (applied), a message's null content, and keep_alive (how long
 * the model stays loaded), through Ollama's official client on the real engine with stories260K.
 */
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseKeepAlive } from '../../src-main/backend/ollama/keep-alive';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
let ollama: Ollama;
const model = 'stories260k';
const messages = [{ role: 'user', content: 'Once upon a time' }];
const greedy = { temperature: 0, repeat_penalty: 1, seed: 42, num_predict: 40 };

beforeAll(async () => {
  t = await startOpenAiTestServer();
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(() => t?.close());

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
    const plain = await ollama.chat({ model, messages, stream: false, options: greedy });
    expect(plain.message.content.length).toBeGreaterThan(20);
    const ignored = await ollama.chat({
      model,
      messages,
      stream: false,
      options: {
        ...greedy,
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
    const penalized = { ...greedy, repeat_penalty: 1.8 };
    const off = await ollama.chat({ model, messages, stream: false, options: { ...penalized, repeat_last_n: 0 } });
    expect(off.message.content).toBe(plain.message.content);
    const on = await ollama.chat({ model, messages, stream: false, options: { ...penalized, repeat_last_n: 64 } });
    expect(on.message.content).not.toBe(plain.message.content);
    const whole = await ollama.chat({ model, messages, stream: false, options: { ...penalized, repeat_last_n: -1 } });
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
      const contentOf = (text: string) => (JSON.parse(text) as { message: { content: string } }).message.content;
      expect(contentOf(reply.body)).toBe(contentOf(empty.body));
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
