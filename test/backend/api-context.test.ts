/**
 * A full context through the APIs, with the official `openai` and `ollama` clients on a real
 * server (stories260K on SwiftShader) served with a 48-token context: an answer that the context
 * ends has finish_reason / done_reason "length" and fills the context exactly; a prompt that
 * cannot fit is a 400 naming the token counts, before any generation.
 */
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const CONTEXT = 48;
let t: OpenAiTestServer;
let ollama: Ollama;

beforeAll(async () => {
  t = await startOpenAiTestServer();
  await t.backend.api.updateOpenAiServerSettings({ contextSize: CONTEXT });
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(() => t?.close());

const long = 'Once upon a time there was a little girl. '.repeat(8);

/**
 * How many messages before the last (and after the system prompt) fit num_ctx, found through the
 * API itself with truncate false: the most for which the request is not refused.
 */
async function keptCount(messages: { role: string; content: string }[], options: object): Promise<number> {
  let count = 0;
  for (let n = 1; n < messages.length - 1; n++) {
    const tried = [messages[0]!, ...messages.slice(messages.length - 1 - n)];
    const ok = await ollama
      .chat({ model: 'stories260k', messages: tried, stream: false, options, truncate: false } as never)
      .then(
        () => true,
        () => false,
      );
    if (!ok) break;
    count = n;
  }
  return count;
}

describe('a full context through the APIs', { timeout: 240_000 }, () => {
  it('OpenAI: an answer the context ends has finish_reason "length", streamed or not', async () => {
    const whole = await t
      .client()
      .completions.create({ model: 'stories260k', prompt: 'Once upon a time', max_tokens: 1000, temperature: 0 });
    expect(whole.choices[0]!.finish_reason).toBe('length');
    expect(whole.usage!.prompt_tokens + whole.usage!.completion_tokens).toBe(CONTEXT);

    const stream = await t.client().completions.create({
      model: 'stories260k',
      prompt: 'Once upon a time',
      max_tokens: 1000,
      temperature: 0,
      stream: true,
      stream_options: { include_usage: true },
    });
    let finish: string | null = null;
    let used = 0;
    for await (const chunk of stream) {
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) used = chunk.usage.prompt_tokens + chunk.usage.completion_tokens;
    }
    expect(finish).toBe('length');
    expect(used).toBe(CONTEXT);

    // A chat answer without max_tokens runs to the end of the context.
    const chat = await t.client().chat.completions.create({
      model: 'stories260k',
      messages: [{ role: 'user', content: 'Once upon a time' }],
      temperature: 0,
    });
    expect(chat.choices[0]!.finish_reason).toBe('length');
    expect(chat.usage!.prompt_tokens + chat.usage!.completion_tokens).toBe(CONTEXT);
  });

  it('OpenAI: a prompt that cannot fit is a 400 naming its tokens and the context', async () => {
    await expect(
      t.client().chat.completions.create({ model: 'stories260k', messages: [{ role: 'user', content: long }] }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
      param: 'messages',
      message: expect.stringMatching(
        new RegExp(
          `the prompt has (at least )?\\d+ tokens, and the context of "stories260k" holds ${CONTEXT} with the answer; shorten the messages$`,
        ),
      ) as string,
    });
  });

  it('Ollama: an answer the context (num_ctx) ends has done_reason "length"', async () => {
    const generated = await ollama.generate({
      model: 'stories260k',
      prompt: 'Once upon a time',
      raw: true,
      stream: false,
      options: { temperature: 0, num_predict: -1, num_ctx: 32 },
    });
    expect(generated.done_reason).toBe('length');
    expect(generated.prompt_eval_count + generated.eval_count).toBe(32);
    // The same answer ended by num_predict first is "length" too, and shorter.
    const short = await ollama.generate({
      model: 'stories260k',
      prompt: 'Once upon a time',
      raw: true,
      stream: false,
      options: { temperature: 0, num_predict: 5, num_ctx: 32 },
    });
    expect(short).toMatchObject({ done_reason: 'length', eval_count: 5 });
    expect(generated.response!.startsWith(short.response!)).toBe(true);
  });

  it("Ollama: a conversation too long for num_ctx loses its oldest messages but the system's (truncate, default true); truncate false is a 400", async () => {
    const history = Array.from({ length: 8 }, (_, i) => ({
      role: i % 2 === 0 ? 'user' : 'assistant',
      content: i % 2 === 0 ? `Tell me about cat number ${i}.` : `Cat number ${i - 1} sat on a mat.`,
    }));
    const messages = [
      { role: 'system', content: 'You tell stories.' },
      ...history,
      { role: 'user', content: 'Once upon a time' },
    ];
    const options = { temperature: 0, num_predict: 4, num_ctx: 96 };
    // num_ctx only lowers the server's context.
    await t.backend.api.updateOpenAiServerSettings({ contextSize: 256 });
    try {
      // Without truncation it does not fit.
      await expect(
        ollama.chat({ model: 'stories260k', messages, stream: false, options, truncate: false } as never),
      ).rejects.toMatchObject({
        status_code: 400,
        error: expect.stringMatching(
          /^the prompt has (at least )?\d+ tokens, and the context of "stories260k" holds 96 with the answer/,
        ) as string,
      });
      const answered = await ollama.chat({ model: 'stories260k', messages, stream: false, options });
      expect(answered).toMatchObject({ done: true, done_reason: 'length', eval_count: 4 });
      // Room to answer is kept: num_predict's 4 tokens.
      expect(answered.prompt_eval_count).toBeLessThanOrEqual(96 - 4);
      // The system prompt and the newest messages stay: the same answer as for the most of them that fit.
      // Told apart with truncate false, which refuses only what leaves no token: a context 4 - 1 tokens smaller holds as much.
      const count = await keptCount(messages, { ...options, num_ctx: 96 - 4 + 1 });
      expect(count).toBeGreaterThan(0);
      expect(count).toBeLessThan(history.length);
      const direct = await ollama.chat({
        model: 'stories260k',
        messages: [messages[0]!, ...messages.slice(messages.length - 1 - count)],
        stream: false,
        options,
      });
      expect(answered.message.content).toBe(direct.message.content);
      expect(answered.prompt_eval_count).toBe(direct.prompt_eval_count);
    } finally {
      await t.backend.api.updateOpenAiServerSettings({ contextSize: CONTEXT });
    }
  });

  it('Ollama: a conversation that cannot fit is a 400 naming its tokens and the context', async () => {
    const refused = ollama.chat({
      model: 'stories260k',
      messages: [{ role: 'user', content: long }],
      stream: false,
      options: { num_ctx: 32 },
    });
    await expect(refused).rejects.toMatchObject({
      status_code: 400,
      error: expect.stringMatching(
        /^the prompt has (at least )?\d+ tokens, and the context of "stories260k" holds 32 with the answer/,
      ) as string,
    });
  });
});
