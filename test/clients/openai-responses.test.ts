/**
 * Gufo's `/v1/responses` with the clients that speak OpenAI's Responses API by default, over real
 * HTTP with stories260K (SwiftShader): the Vercel AI SDK's `openai(id)` model (generateText,
 * streamText, generateObject with a zod schema, a tool call and its result over two steps) and
 * LangChain's `ChatOpenAI` with `useResponsesApi` (invoke, stream, a tool call answered). Greedy
 * answers equal Chat Completions' answers to the same conversation.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOpenAiTestServer, type OpenAiTestServer } from '../backend/fixtures/openai-server';

const model = 'stories260k';
const system = 'You tell stories.';
const question = 'Tell me about Lily and her ball.';

let t: OpenAiTestServer;
let baseURL: string;
beforeAll(async () => {
  t = await startOpenAiTestServer();
  baseURL = `http://127.0.0.1:${t.server.port}/v1`;
});
afterAll(() => t?.close());

/** Chat Completions' greedy answer to the system text and the question. */
async function reference(maxTokens: number) {
  const reply = await t.client().chat.completions.create({
    model,
    messages: [
      { role: 'system', content: system },
      { role: 'user', content: question },
    ],
    temperature: 0,
    max_tokens: maxTokens,
  });
  return { text: reply.choices[0]!.message.content!, usage: reply.usage! };
}

const weather = z.object({ city: z.enum(['Paris', 'Rome']), unit: z.enum(['celsius', 'fahrenheit']) });

describe('the Vercel AI SDK (its default openai(id) model speaks the Responses API)', { timeout: 300_000 }, () => {
  const openai = () => createOpenAI({ baseURL, apiKey: 'none' });

  it('generateText and streamText answer as Chat Completions does', async () => {
    const expected = await reference(24);
    const whole = await generateText({
      model: openai()(model),
      system,
      prompt: question,
      temperature: 0,
      maxOutputTokens: 24,
      maxRetries: 0,
    });
    expect(whole.text).toBe(expected.text);
    expect(whole.usage.inputTokens).toBe(expected.usage.prompt_tokens);
    expect(whole.usage.outputTokens).toBe(expected.usage.completion_tokens);
    expect(whole.finishReason).toBe(expected.usage.completion_tokens === 24 ? 'length' : 'stop');
    expect(whole.response.id).toMatch(/^resp_/);

    const streamed = streamText({
      model: openai()(model),
      system,
      prompt: question,
      temperature: 0,
      maxOutputTokens: 24,
      maxRetries: 0,
    });
    const pieces: string[] = [];
    for await (const piece of streamed.textStream) pieces.push(piece);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(expected.text);
    expect(await streamed.finishReason).toBe(whole.finishReason);
    expect((await streamed.usage).outputTokens).toBe(expected.usage.completion_tokens);
  });

  it('generateObject with a zod schema gets an object valid for it', async () => {
    const schema = z.object({ answer: z.enum(['yes', 'no']), friends: z.number().int().min(0).max(9) });
    const { object, finishReason } = await generateObject({
      model: openai()(model),
      schema,
      system: 'Answer in JSON.',
      prompt: 'Did Lily find the ball? How many friends came?',
      temperature: 0,
      maxOutputTokens: 120,
      maxRetries: 0,
    });
    expect(finishReason).toBe('stop');
    expect(schema.parse(object)).toEqual(object);
  });

  it('makes a tool call, runs the tool, and sends its result back in the next step', async () => {
    const calls: unknown[] = [];
    const result = await generateText({
      model: openai()(model),
      prompt: 'What is the weather in Paris?',
      tools: {
        get_weather: tool({
          description: 'The weather in a city.',
          inputSchema: weather,
          execute: (input) => {
            calls.push(input);
            return Promise.resolve(`Sunny in ${input.city}`);
          },
        }),
      },
      // The first step must call (a story model would not choose to); the second answers freely.
      toolChoice: { type: 'tool', toolName: 'get_weather' },
      prepareStep: ({ stepNumber }) => (stepNumber === 1 ? { toolChoice: 'auto' } : undefined),
      stopWhen: stepCountIs(2),
      temperature: 0,
      // Room for the whole call: stories260K writes JSON nearly a character a token.
      maxOutputTokens: 160,
      maxRetries: 0,
    });
    expect(result.steps).toHaveLength(2);
    const [first, second] = result.steps;
    expect(first!.finishReason).toBe('tool-calls');
    expect(first!.toolCalls).toHaveLength(1);
    expect(first!.toolCalls[0]!.toolName).toBe('get_weather');
    expect(weather.parse(first!.toolCalls[0]!.input)).toEqual(first!.toolCalls[0]!.input);
    expect(calls).toEqual([first!.toolCalls[0]!.input]);
    // The second request carried the call and its output: its prompt is the longer by them.
    expect(second!.usage.inputTokens).toBeGreaterThan(first!.usage.inputTokens! + 4);
    expect(['stop', 'length', 'tool-calls']).toContain(second!.finishReason);

    // Streamed, the same call comes from the function_call events.
    const streamed = streamText({
      model: openai()(model),
      prompt: 'What is the weather in Paris?',
      tools: { get_weather: tool({ description: 'The weather in a city.', inputSchema: weather }) },
      toolChoice: { type: 'tool', toolName: 'get_weather' },
      temperature: 0,
      maxOutputTokens: 160,
      maxRetries: 0,
    });
    const deltas: string[] = [];
    for await (const part of streamed.fullStream) if (part.type === 'tool-input-delta') deltas.push(part.delta);
    const [call] = await streamed.toolCalls;
    expect(call).toMatchObject({ toolName: 'get_weather', input: first!.toolCalls[0]!.input });
    expect(deltas.length).toBeGreaterThan(1);
    expect(JSON.parse(deltas.join(''))).toEqual(call!.input);
    expect(await streamed.finishReason).toBe('tool-calls');
  });

  it('continues a conversation with store: false; the default (item references) is refused, naming why', async () => {
    const first = await generateText({
      model: openai()(model),
      prompt: question,
      temperature: 0,
      maxOutputTokens: 8,
      maxRetries: 0,
    });
    const messages = [
      { role: 'user' as const, content: question },
      ...first.response.messages,
      { role: 'user' as const, content: 'And then?' },
    ];
    const options = { model: openai()(model), messages, temperature: 0, maxOutputTokens: 8, maxRetries: 0 };
    await expect(generateText(options)).rejects.toThrow(/item_reference.*store = false/);
    const next = await generateText({ ...options, providerOptions: { openai: { store: false } } });
    expect(next.usage.inputTokens).toBeGreaterThan(first.usage.inputTokens!);
    expect(next.text.length).toBeGreaterThan(0);
  });
});

describe("LangChain's ChatOpenAI with useResponsesApi", { timeout: 300_000 }, () => {
  const chat = (maxTokens: number) =>
    new ChatOpenAI({
      model,
      useResponsesApi: true,
      temperature: 0,
      maxTokens,
      maxRetries: 0,
      apiKey: 'none',
      configuration: { baseURL },
    });

  it('invoke and stream answer as Chat Completions does', async () => {
    const expected = await reference(24);
    const messages = [new SystemMessage(system), new HumanMessage(question)];
    const reply = await chat(24).invoke(messages);
    expect(reply.text).toBe(expected.text);
    expect(reply.usage_metadata).toMatchObject({
      input_tokens: expected.usage.prompt_tokens,
      output_tokens: expected.usage.completion_tokens,
    });
    let streamed = '';
    let chunks = 0;
    for await (const chunk of await chat(24).stream(messages)) {
      streamed += chunk.text;
      chunks++;
    }
    expect(chunks).toBeGreaterThan(1);
    expect(streamed).toBe(expected.text);
  });

  it('makes a required tool call, and answers after its result', async () => {
    const tools = [
      {
        type: 'function' as const,
        function: {
          name: 'get_weather',
          description: 'The weather in a city.',
          parameters: z.toJSONSchema(weather),
        },
      },
    ];
    const question = new HumanMessage('What is the weather in Paris?');
    const call = await chat(160).bindTools(tools, { tool_choice: 'get_weather' }).invoke([question]);
    expect(call).toBeInstanceOf(AIMessage);
    expect(call.tool_calls).toHaveLength(1);
    const made = call.tool_calls![0]!;
    expect(made.name).toBe('get_weather');
    expect(weather.parse(made.args)).toEqual(made.args);
    expect(made.id).toMatch(/^call_/);

    const answer = await chat(8)
      .bindTools(tools)
      .invoke([question, call, new ToolMessage({ tool_call_id: made.id!, content: 'Sunny, 22 degrees' })]);
    expect(answer.usage_metadata!.input_tokens).toBeGreaterThan(call.usage_metadata!.input_tokens + 4);
  });
});
