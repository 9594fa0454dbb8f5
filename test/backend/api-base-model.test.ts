/**
 * A base model (stories260K: no tokenizer.chat_template) on the chat routes: the messages are its
 * prompt as plain text, as in the app and `gufo chat` (core/prompt-format.ts's defaultPromptFormat),
 * never wrapped in a template's turns it was not trained on. Real server, official clients, real engine.
 */
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openModelText } from '../../src-main/backend/chat/prompt';
import { STORIES_260K } from '../support/paths';
import { startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
let ollama: Ollama;
const prompt = 'Once upon a time';
let promptIds: number;

beforeAll(async () => {
  t = await startOpenAiTestServer();
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
  const text = openModelText(STORIES_260K);
  promptIds = text.tokenizer.tokenize(prompt, { addBos: true, parseSpecial: false }).length;
  text.close();
});
afterAll(() => t?.close());

describe('a model without a chat template on the chat routes', { timeout: 240_000 }, () => {
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
