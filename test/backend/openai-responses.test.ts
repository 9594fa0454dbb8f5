/**
 * `POST /v1/responses` (OpenAI's Responses API) with the real engine (SwiftShader) and stories260K,
 * through the official `openai` client: the answer is Chat Completions' answer to the same
 * conversation (same prompt tokens, same greedy text), streamed as typed events in OpenAI's order,
 * held to a `text.format` schema, and tool calls out (function_call items valid for the schema)
 * and back in (function_call_output items rendered as Chat Completions renders tool messages).
 * Stateless: fields that need stored responses are a 400 naming them.
 *
 * The clients that speak the Responses API by default run against the same server (one engine
 * load and one compilation of the masked sampler for the file): the Vercel AI SDK's `openai(id)`
 * model (generateText, streamText, generateObject with a zod schema, a tool call and its result
 * over two steps) and LangChain's `ChatOpenAI` with `useResponsesApi` (invoke, stream, a tool call
 * answered). Greedy answers equal Chat Completions' answers to the same conversation.
 */
import { createOpenAI } from '@ai-sdk/openai';
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, stepCountIs, streamText, tool } from 'ai';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { validates } from '../core/constrained/json-check';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const model = 'stories260k';
const instructions = 'You tell stories.';
const question = 'Tell me about Lily and her ball.';
const weatherSchema = {
  type: 'object',
  properties: { city: { enum: ['Paris', 'Rome'] }, unit: { enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const tools: OpenAI.Responses.FunctionTool[] = [
  {
    type: 'function',
    name: 'get_weather',
    description: 'The weather in a city.',
    parameters: weatherSchema,
    strict: true,
  },
  {
    type: 'function',
    name: 'get_time',
    description: 'The time in a city.',
    parameters: {
      type: 'object',
      properties: { city: { enum: ['Paris'] } },
      required: ['city'],
      additionalProperties: false,
    },
    strict: true,
  },
];

let t: OpenAiTestServer;
beforeAll(async () => {
  t = await startOpenAiTestServer();
});
afterAll(() => t?.close());

/** The same conversation through Chat Completions. */
function chat(body: Partial<OpenAI.Chat.ChatCompletionCreateParamsNonStreaming>) {
  return t.client().chat.completions.create({
    model,
    messages: [
      { role: 'system', content: instructions },
      { role: 'user', content: question },
    ],
    temperature: 0,
    ...body,
  });
}

async function post(
  body: object,
): Promise<{ status: number; error: { param: string | null; message: string; code: string } }> {
  const reply = await send(
    t.server.port,
    'POST',
    '/v1/responses',
    { 'content-type': 'application/json' },
    JSON.stringify(body),
  );
  return { status: reply.status, error: (JSON.parse(reply.body) as { error: never }).error };
}

/** The server's /v1, for the clients that take a base URL. */
const baseURL = () => `http://127.0.0.1:${t.server.port}/v1`;

/** Chat Completions' greedy 24-token answer to the instructions and the question, asked once for the clients' tests. */
let reference: Promise<{ text: string; usage: OpenAI.CompletionUsage }> | undefined;
const chatReference = () =>
  (reference ??= chat({ max_tokens: 24 }).then((reply) => ({
    text: reply.choices[0]!.message.content!,
    usage: reply.usage!,
  })));

const weather = z.object({ city: z.enum(['Paris', 'Rome']), unit: z.enum(['celsius', 'fahrenheit']) });

describe('the Vercel AI SDK (its default openai(id) model speaks the Responses API)', { timeout: 300_000 }, () => {
  const openai = () => createOpenAI({ baseURL: baseURL(), apiKey: 'none' });

  it('generateText and streamText answer as Chat Completions does', async () => {
    const expected = await chatReference();
    // The same request both ways.
    const request = {
      model: openai()(model),
      system: instructions,
      prompt: question,
      temperature: 0,
      maxOutputTokens: 24,
      maxRetries: 0,
    };
    const whole = await generateText(request);
    expect(whole.text).toBe(expected.text);
    expect(whole.usage.inputTokens).toBe(expected.usage.prompt_tokens);
    expect(whole.usage.outputTokens).toBe(expected.usage.completion_tokens);
    expect(whole.finishReason).toBe(expected.usage.completion_tokens === 24 ? 'length' : 'stop');
    expect(whole.response.id).toMatch(/^resp_/);

    const streamed = streamText(request);
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
      // The first step must call (a story model would not choose to); the second answers freely,
      // in a few tokens: only its prompt is checked.
      toolChoice: { type: 'tool', toolName: 'get_weather' },
      prepareStep: ({ stepNumber }) => (stepNumber === 1 ? { toolChoice: 'auto', maxOutputTokens: 8 } : undefined),
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
      configuration: { baseURL: baseURL() },
    });

  it('invoke and stream answer as Chat Completions does', async () => {
    const expected = await chatReference();
    const messages = [new SystemMessage(instructions), new HumanMessage(question)];
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

describe('the Responses API', { timeout: 300_000 }, () => {
  it("answers as Chat Completions does: the same prompt and text, in a message item, with usage; a length cut is status 'incomplete'", async () => {
    // Asked again right before: the cached_tokens below count its prompt in the slot's KV cache.
    const reference = await chat({ max_tokens: 24 });
    const response = await t.client().responses.create({
      model,
      instructions,
      input: [{ role: 'user', content: [{ type: 'input_text', text: question }] }],
      temperature: 0,
      max_output_tokens: 24,
    });
    expect(response.id).toMatch(/^resp_[0-9a-f]+$/);
    expect(response.object).toBe('response');
    expect(response.model).toBe(model);
    expect(response.output).toHaveLength(1);
    const message = response.output[0]!;
    if (message.type !== 'message') throw new Error(`not a message: ${message.type}`);
    expect(message.id).toMatch(/^msg_/);
    expect(message.role).toBe('assistant');
    expect(message.content).toHaveLength(1);
    expect(response.output_text).toBe(reference.choices[0]!.message.content);
    expect(response.output_text.length).toBeGreaterThan(0);
    expect(response.usage).toMatchObject({
      input_tokens: reference.usage!.prompt_tokens,
      output_tokens: reference.usage!.completion_tokens,
      total_tokens: reference.usage!.total_tokens,
      // The reference's prompt, in the KV cache of a slot but for its last token.
      input_tokens_details: { cached_tokens: reference.usage!.prompt_tokens - 1 },
    });
    const cut = reference.choices[0]!.finish_reason === 'length';
    expect(response.status).toBe(cut ? 'incomplete' : 'completed');
    expect(response.incomplete_details).toEqual(cut ? { reason: 'max_output_tokens' } : null);
    expect(message.status).toBe(cut ? 'incomplete' : 'completed');

    // A plain string input is one user message.
    const plain = await t
      .client()
      .responses.create({ model, instructions, input: question, temperature: 0, max_output_tokens: 24 });
    expect(plain.output_text).toBe(response.output_text);
  });

  it('streams typed events in order, numbered, whose deltas join into the whole answer', async () => {
    const body = { model, input: question, temperature: 0, max_output_tokens: 40 };
    const whole = await t.client().responses.create(body);
    const stream = await t.client().responses.create({ ...body, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const types = events.map((e) => e.type);
    const deltas = types.filter((type) => type === 'response.output_text.delta').length;
    expect(deltas).toBeGreaterThan(1);
    expect(types).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      ...Array<string>(deltas).fill('response.output_text.delta'),
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      // OpenAI's last event for an answer its length limit cut is response.incomplete.
      `response.${whole.status}`,
    ]);
    const text = events.flatMap((e) => (e.type === 'response.output_text.delta' ? [e.delta] : [])).join('');
    expect(text).toBe(whole.output_text);
    const done = events.at(-1)!;
    if (done.type !== 'response.completed' && done.type !== 'response.incomplete') throw new Error(done.type);
    expect(done.response.output).toEqual([
      expect.objectContaining({ type: 'message', status: whole.status, content: [expect.objectContaining({ text })] }),
    ]);
    expect(done.response.usage!.output_tokens).toBe(whole.usage!.output_tokens);

    // The client's stream helper assembles the same response.
    const helper = await t.client().responses.stream(body).finalResponse();
    expect(helper.output_text).toBe(whole.output_text);
    expect(helper.status).toBe(whole.status);
  });

  it('holds the answer to text.format json_schema, streamed or not', async () => {
    const schema = {
      type: 'object',
      properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer', minimum: 0, maximum: 9 } },
      required: ['answer', 'n'],
      additionalProperties: false,
    };
    const body = {
      model,
      instructions: 'Answer in JSON.',
      input: 'Did Lily find the ball?',
      temperature: 0,
      max_output_tokens: 120,
      text: { format: { type: 'json_schema' as const, name: 'answer', schema, strict: true } },
    };
    const whole = await t.client().responses.create(body);
    expect(whole.status).toBe('completed');
    expect(validates(JSON.parse(whole.output_text), schema), whole.output_text).toBe(true);
    const streamed = await t.client().responses.stream(body).finalResponse();
    expect(streamed.output_text).toBe(whole.output_text);
    // json_object: an object, or the start of one when the length limit cut it.
    const object = await t
      .client()
      .responses.create({ ...body, max_output_tokens: 24, text: { format: { type: 'json_object' } } });
    expect(object.output_text.trimStart()).toMatch(/^\{/);
    if (object.status === 'completed') expect(typeof JSON.parse(object.output_text)).toBe('object');
    else expect(() => JSON.parse(object.output_text) as unknown).toThrow();
  });

  it('answers a required call as a function_call item valid for its schema, streamed with its argument events', async () => {
    const body = { model, input: 'What is the weather in Paris?', tools, temperature: 0, max_output_tokens: 80 };
    const named = await t
      .client()
      .responses.create({ ...body, tool_choice: { type: 'function', name: 'get_weather' } });
    expect(named.status).toBe('completed');
    const call = named.output.find((item) => item.type === 'function_call')!;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', status: 'completed' });
    expect(call.call_id).toMatch(/^call_/);
    expect(call.id).toMatch(/^fc_/);
    expect(validates(JSON.parse(call.arguments), weatherSchema), call.arguments).toBe(true);

    // Cut short by max_output_tokens, the call stays a call with the arguments so far, marked incomplete.
    const cut = await t.client().responses.create({
      ...body,
      tool_choice: { type: 'function', name: 'get_weather' },
      max_output_tokens: named.usage!.output_tokens - 3,
    });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.output).toEqual([expect.objectContaining({ type: 'function_call', status: 'incomplete' })]);

    // One call (parallel_tool_calls: false): several would run to the length limit on a story model.
    const stream = await t.client().responses.create({
      ...body,
      tool_choice: 'required',
      parallel_tool_calls: false,
      stream: true,
    });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) events.push(event);
    const done = events.at(-1)!;
    if (done.type !== 'response.completed') throw new Error(done.type);
    const calls = done.response.output.filter((item) => item.type === 'function_call');
    expect(done.response.output).toHaveLength(1);
    expect(calls).toHaveLength(1);
    expect(events.map((e) => e.type)).toEqual(
      expect.arrayContaining([
        'response.output_item.added',
        'response.function_call_arguments.delta',
        'response.output_item.done',
      ]),
    );
    for (const [index, c] of calls.entries()) {
      const fragments = events.flatMap((e) =>
        e.type === 'response.function_call_arguments.delta' && e.item_id === c.id ? [e.delta] : [],
      );
      expect(fragments.join('')).toBe(c.arguments);
      expect(events).toContainEqual(
        expect.objectContaining({
          type: 'response.function_call_arguments.done',
          item_id: c.id,
          arguments: c.arguments,
        }),
      );
      const schema = tools.find((tool) => tool.name === c.name)!.parameters!;
      expect(validates(JSON.parse(c.arguments), schema), `call ${index}: ${c.arguments}`).toBe(true);
    }
  });

  it('takes function_call and function_call_output items back, rendered as Chat Completions renders a tool round trip', async () => {
    const args = '{"city":"Paris","unit":"celsius"}';
    const reference = await chat({
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: args } }],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 22 degrees' },
      ],
      tools: tools.map(({ name, description, parameters }) => ({
        type: 'function' as const,
        function: { name, description: description!, parameters: parameters! },
      })),
      max_tokens: 8,
    });
    const response = await t.client().responses.create({
      model,
      input: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: args },
        { type: 'function_call_output', call_id: 'call_1', output: 'Sunny, 22 degrees' },
      ],
      tools,
      temperature: 0,
      max_output_tokens: 8,
    });
    expect(response.usage!.input_tokens).toBe(reference.usage!.prompt_tokens);
    expect(response.output_text).toBe(reference.choices[0]!.message.content ?? '');
    // Without the output, the prompt is shorter: the result was rendered.
    const asked = await t.client().responses.create({
      model,
      input: [{ role: 'user', content: 'What is the weather in Paris?' }],
      tools,
      temperature: 0,
      max_output_tokens: 1,
    });
    expect(asked.usage!.input_tokens).toBeLessThan(response.usage!.input_tokens);
  });

  it('ends a stream whose engine dies mid-answer with an error event and response.failed', async () => {
    const served = await t.service.resolve(model);
    const pid = await t.service.engines.withModel(
      { path: served.entry.path, ctx: t.service.contextFor(served) },
      ({ host }) => Promise.resolve(host.pid),
    );
    expect(pid).not.toBeNull();
    const stream = await t
      .client()
      .responses.create({ model, input: question, temperature: 0, max_output_tokens: 200, stream: true });
    const events: OpenAI.Responses.ResponseStreamEvent[] = [];
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.output_text.delta' && events.length === 5) process.kill(pid!, 'SIGKILL');
    }
    const [error, failed] = events.slice(-2);
    expect(error).toMatchObject({ type: 'error', code: 'engine_crashed' });
    expect(failed).toMatchObject({
      type: 'response.failed',
      response: { status: 'failed', error: { code: 'engine_crashed' } },
    });
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    // The next request loads the model again.
    const again = await t.client().responses.create({ model, input: question, temperature: 0, max_output_tokens: 4 });
    expect(again.output_text.length).toBeGreaterThan(0);
  });

  it('refuses what needs stored responses, and bad fields, with a 400 naming the field', async () => {
    const base = { model, input: question };
    expect(await post({ ...base, previous_response_id: 'resp_1' })).toMatchObject({
      status: 400,
      error: { param: 'previous_response_id', code: 'unsupported_parameter' },
    });
    expect(await post({ ...base, conversation: 'conv_1' })).toMatchObject({
      status: 400,
      error: { param: 'conversation' },
    });
    const reference = await post({
      ...base,
      input: [
        { role: 'user', content: 'hi' },
        { type: 'item_reference', id: 'msg_1' },
      ],
    });
    expect(reference).toMatchObject({ status: 400, error: { param: 'input[1]' } });
    expect(reference.error.message).toContain('store = false');
    expect(await post({ ...base, tools: [{ type: 'function', name: 'bad name!' }] })).toMatchObject({
      status: 400,
      error: { param: 'tools[0].name' },
    });
    expect(await post({ ...base, tools: [{ type: 'web_search' }] })).toMatchObject({
      status: 400,
      error: { param: 'tools[0]' },
    });
    expect(await post({ ...base, tools, tool_choice: { type: 'function', name: 'nope' } })).toMatchObject({
      status: 400,
      error: { param: 'tool_choice' },
    });
    expect(
      await post({ ...base, tools, tool_choice: 'required', text: { format: { type: 'json_object' } } }),
    ).toMatchObject({
      status: 400,
      error: { param: 'text.format' },
    });
    expect(await post({ ...base, text: { format: { type: 'json_schema', name: 'x' } } })).toMatchObject({
      status: 400,
      error: {
        param: 'text.format',
        message: '"text.format.schema" is required: the JSON Schema the answer must follow',
      },
    });
    expect(
      await post({ ...base, input: [{ role: 'user', content: [{ type: 'input_image', image_url: 'x' }] }] }),
    ).toMatchObject({
      status: 400,
      error: { param: 'input[0].content[0]' },
    });
    expect(
      await post({ ...base, input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: 'nope' }] }),
    ).toMatchObject({
      status: 400,
      error: { param: 'input[0].arguments' },
    });
    expect(await post({ model })).toMatchObject({
      status: 400,
      error: { param: 'input', code: 'missing_required_parameter' },
    });
    const stored = await send(t.server.port, 'GET', '/v1/responses/resp_1');
    expect(stored.status).toBe(404);
    expect(stored.body).toContain('keeps no responses');
  });
});
