/**
 * JSON mode of the OpenAI-compatible API (response_format json_object / json_schema) with the real
 * engine (SwiftShader) and stories260K, through the official `openai` client: a story model that
 * never saw JSON answers with documents that parse and follow the schema, streamed or not; an
 * answer cut by max_tokens ends with finish_reason "length" and is the start of a valid document.
 */
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isComplete, matchBytes, start } from '../../src-main/core/constrained/json-matcher';
import { ANY_OBJECT } from '../../src-main/core/constrained/json-schema';
import { utf8, validates } from '../core/constrained/json-check';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const model = 'stories260k';
const messages = [
  { role: 'system' as const, content: 'Answer in JSON.' },
  { role: 'user' as const, content: 'Did Lily find the ball? How many friends came?' },
];
const schema = {
  type: 'object',
  properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer' } },
  required: ['answer', 'n'],
  additionalProperties: false,
};
const jsonSchema = { type: 'json_schema' as const, json_schema: { name: 'answer', schema, strict: true } };

let t: OpenAiTestServer;
beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

/** The streamed answer to the same request, assembled. */
async function streamed(
  body: Pick<OpenAI.Chat.ChatCompletionCreateParamsStreaming, 'max_tokens' | 'response_format'>,
): Promise<{ content: string; finish: string | null }> {
  const stream = await t.client().chat.completions.create({ model, messages, temperature: 0, ...body, stream: true });
  let content = '';
  let finish: string | null = null;
  for await (const chunk of stream) {
    content += chunk.choices[0]?.delta.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { content, finish };
}

describe('JSON mode through the OpenAI-compatible API', { timeout: 300_000 }, () => {
  it('answers a json_schema request with a document valid for the schema, streamed or not', async () => {
    const whole = await t
      .client()
      .chat.completions.create({ model, messages, temperature: 0, max_tokens: 120, response_format: jsonSchema });
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    const value = JSON.parse(choice.message.content!) as unknown;
    expect(validates(value, schema), choice.message.content!).toBe(true);
    expect(await streamed({ max_tokens: 120, response_format: jsonSchema })).toEqual({
      content: choice.message.content,
      finish: 'stop',
    });
  });

  it('holds json_object output to a JSON object; cut by max_tokens, it is the start of one and finishes with "length"', async () => {
    const client = t.client();
    const whole = await client.chat.completions.create({
      model,
      messages,
      temperature: 0,
      max_tokens: 12,
      response_format: { type: 'json_object' },
    });
    const { message, finish_reason } = whole.choices[0]!;
    const text = message.content!;
    expect(text.trimStart().startsWith('{'), text).toBe(true);
    const state = matchBytes(start(ANY_OBJECT), utf8(text));
    expect(state, text).not.toBeNull();
    if (finish_reason === 'stop') expect(typeof JSON.parse(text)).toBe('object');
    else expect(isComplete(state!)).toBe(false);
    expect(whole.usage!.completion_tokens).toBeLessThanOrEqual(12);
    expect(await streamed({ max_tokens: 12, response_format: { type: 'json_object' } })).toEqual({
      content: text,
      finish: finish_reason,
    });

    // Sampled rather than greedy, the answer is held all the same.
    const sampled = await client.chat.completions.create({
      model,
      messages,
      temperature: 1,
      seed: 5,
      max_tokens: 12,
      response_format: { type: 'json_object' },
    });
    expect(matchBytes(start(ANY_OBJECT), utf8(sampled.choices[0]!.message.content!))).not.toBeNull();
  });

  it("takes zod 4's minimum/maximum (and pattern, format, minLength) and holds the answer to them", async () => {
    // z.object({ name: z.string(), age: z.number().int().min(0).max(150) }) as zod 4 writes it, with more keywords.
    const bounded = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: {
        name: { type: 'string', minLength: 1, maxLength: 12 },
        age: { type: 'integer', minimum: 0, maximum: 150 },
        score: { type: 'number', exclusiveMinimum: 0, maximum: 1 },
        code: { type: 'string', pattern: '^[A-Z]{2}-[0-9]{2,3}$' },
        day: { type: 'string', format: 'date' },
      },
      required: ['name', 'age', 'score', 'code', 'day'],
      additionalProperties: false,
    };
    for (const temperature of [0, 1]) {
      const reply = await t.client().chat.completions.create({
        model,
        messages,
        temperature,
        seed: 3,
        max_tokens: 200,
        response_format: { type: 'json_schema', json_schema: { name: 'person', schema: bounded, strict: true } },
      });
      const choice = reply.choices[0]!;
      expect(choice.finish_reason, choice.message.content!).toBe('stop');
      const value = JSON.parse(choice.message.content!) as unknown;
      expect(validates(value, bounded), choice.message.content!).toBe(true);
    }
  });

  it('holds /v1/completions output to the schema too', async () => {
    const reply = await send(
      t.server.port,
      'POST',
      '/v1/completions',
      { 'content-type': 'application/json' },
      JSON.stringify({
        model,
        prompt: 'Once upon a time',
        max_tokens: 120,
        temperature: 0,
        response_format: jsonSchema,
      }),
    );
    expect(reply.status).toBe(200);
    const choice = (JSON.parse(reply.body) as OpenAI.Completion).choices[0]!;
    expect(choice.finish_reason).toBe('stop');
    expect(validates(JSON.parse(choice.text), schema), choice.text).toBe(true);
  });
});
