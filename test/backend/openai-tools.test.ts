/**
 * Tool calling through the official `openai` client (and Ollama's /api/chat) with the real engine
 * (SwiftShader), on random models whose GGUF carries a real vocabulary and chat template: Qwen 3's
 * (which renders `tools` itself, Hermes-style calls) and Llama 3's (no tools in its template: the
 * fallback describes them in the system prompt). A random model calls a function deterministically
 * only when the call is required, so the calls here are required or named: parsed, valid for the
 * function's schema, finish_reason "tool_calls", streamed or not (streamed arguments, in fragments, equal the
 * non-streamed ones); a tool's result comes back into the rendered prompt.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openModelText, promptTokens, type PromptSource } from '../../src-main/backend/chat/prompt';
import type { ChatMessage } from '../../src-main/core/chat-template';
import { withToolsInText } from '../../src-main/core/tool-calls/index';
import { validates } from '../core/constrained/json-check';
import { hfTokenizerKvs, LLAMA3_SPEC } from '../support/hf-vocab';
import { writeRandomModel } from '../support/test-models';
import { TINY_CHAT_SHAPE, writeRandomQwen3 } from '../support/tool-models';
import { errorOf, send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const weatherSchema = {
  type: 'object',
  properties: { city: { enum: ['Paris', 'Rome'] }, unit: { enum: ['celsius', 'fahrenheit'] } },
  required: ['city', 'unit'],
  additionalProperties: false,
};
const tools: OpenAI.Chat.ChatCompletionFunctionTool[] = [
  {
    type: 'function',
    function: { name: 'get_weather', description: 'The weather in a city now.', parameters: weatherSchema },
  },
  {
    type: 'function',
    function: {
      name: 'get_time',
      description: 'The time in a city.',
      parameters: {
        type: 'object',
        properties: { city: { enum: ['Paris'] } },
        required: ['city'],
        additionalProperties: false,
      },
    },
  },
];
const question: OpenAI.Chat.ChatCompletionMessageParam[] = [
  { role: 'system', content: 'You help with the weather.' },
  { role: 'user', content: 'What is the weather in Paris?' },
];
const schemaOf = (name: string) => tools.find((t) => t.function.name === name)!.function.parameters!;

let dir: string;
let t: OpenAiTestServer;
const files = { qwen: '', llama: '' };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-tools-'));
  files.qwen = join(dir, 'qwen3-tools.gguf');
  files.llama = join(dir, 'llama3-tools.gguf');
  await writeRandomQwen3(files.qwen);
  await writeRandomModel(files.llama, {
    ...TINY_CHAT_SHAPE,
    arch: 'llama',
    tokenizer: hfTokenizerKvs(LLAMA3_SPEC),
    name: 'random llama3',
  });
  t = await startOpenAiTestServer([files.qwen, files.llama]);
}, 120_000);
afterAll(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The model id the server gives a file. */
async function idOf(file: 'qwen' | 'llama'): Promise<string> {
  const list = await t.client().models.list();
  return list.data.map((m) => m.id).find((id) => id.startsWith(file === 'qwen' ? 'qwen3' : 'llama3'))!;
}

/** A streamed answer assembled: its content, the calls from delta.tool_calls, the finish reason. */
async function streamed(body: OpenAI.Chat.ChatCompletionCreateParamsNonStreaming) {
  const stream = await t.client().chat.completions.create({ ...body, stream: true });
  let content = '';
  let finish: string | null = null;
  const calls: { id: string; name: string; arguments: string }[] = [];
  for await (const chunk of stream) {
    const delta = chunk.choices[0]?.delta;
    content += delta?.content ?? '';
    for (const call of delta?.tool_calls ?? []) {
      const c = (calls[call.index] ??= { id: '', name: '', arguments: '' });
      c.id += call.id ?? '';
      c.name += call.function?.name ?? '';
      c.arguments += call.function?.arguments ?? '';
    }
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { content, calls, finish };
}

/** The prompt's ids as the server renders them, decoded with special tokens. */
function rendered(file: string, source: PromptSource): { ids: number[]; text: string } {
  const text = openModelText(file);
  try {
    const tokens = promptTokens(text, source, Infinity);
    if (!('ids' in tokens)) throw new Error('prompt not tokenized');
    return { ids: tokens.ids, text: text.tokenizer.detokenize(tokens.ids, { renderSpecial: true }) };
  } finally {
    text.close();
  }
}

/** Qwen 3's prompt as its template renders the tools, the question, then `turns`. */
function qwenWithTools(turns: ChatMessage[]): { ids: number[]; text: string } {
  const messages = [...(question as ChatMessage[]), ...turns];
  return rendered(files.qwen, {
    kind: 'chat',
    addGenerationPrompt: true,
    tools: tools as unknown as Record<string, unknown>[],
    messages,
  });
}

describe('tool calling through the OpenAI-compatible API', { timeout: 600_000 }, () => {
  it('Qwen 3 (its own template renders the tools): a named call, and a required one streamed, parsed and valid for the schema', async () => {
    const model = await idOf('qwen');
    const whole = await t.client().chat.completions.create({
      model,
      messages: question,
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      temperature: 0,
      max_tokens: 80,
    });
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const call = choice.message.tool_calls![0]!;
    expect(call.type).toBe('function');
    expect(call.id).toMatch(/^call_[A-Za-z0-9_-]+$/);
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('get_weather');
    expect(validates(JSON.parse(call.function.arguments), weatherSchema), call.function.arguments).toBe(true);

    const s = await streamed({
      model,
      messages: question,
      tools,
      tool_choice: 'required',
      temperature: 0,
      max_tokens: 80,
    });
    expect(s.finish).toBe('tool_calls');
    expect(s.calls.length).toBeGreaterThanOrEqual(1);
    for (const c of s.calls) {
      expect(c.id).toMatch(/^call_/);
      expect(['get_weather', 'get_time']).toContain(c.name);
      expect(validates(JSON.parse(c.arguments), schemaOf(c.name)), c.arguments).toBe(true);
    }
  });

  it('Qwen 3: n choices each parse a call of their own', async () => {
    const whole = await t.client().chat.completions.create({
      model: await idOf('qwen'),
      messages: question,
      tools,
      tool_choice: { type: 'function', function: { name: 'get_weather' } },
      temperature: 1,
      seed: 4,
      max_tokens: 80,
      n: 2,
    });
    expect(whole.choices.map((c) => c.index)).toEqual([0, 1]);
    for (const choice of whole.choices) {
      expect(choice.finish_reason).toBe('tool_calls');
      expect(choice.message.content).toBeNull();
      const call = choice.message.tool_calls![0]!;
      if (call.type !== 'function') throw new Error('not a function call');
      expect(call.function.name).toBe('get_weather');
      expect(validates(JSON.parse(call.function.arguments), weatherSchema), call.function.arguments).toBe(true);
    }
  });

  it("Qwen 3: a forced call to a function with zod 4's integer bounds is answered, not refused, and its arguments hold to them", async () => {
    const model = await idOf('qwen');
    // z.object({ name: z.string().max(8), age: z.number().int().min(0).max(150) }) as zod 4 writes it.
    const parameters = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      properties: { name: { type: 'string', maxLength: 8 }, age: { type: 'integer', minimum: 0, maximum: 150 } },
      required: ['name', 'age'],
      additionalProperties: false,
    };
    const reply = await t.client().chat.completions.create({
      model,
      messages: question,
      tools: [{ type: 'function', function: { name: 'add_person', parameters } }],
      tool_choice: 'required',
      temperature: 0,
      max_tokens: 80,
    });
    const choice = reply.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('not a function call');
    expect(call.function.name).toBe('add_person');
    expect(validates(JSON.parse(call.function.arguments), parameters), call.function.arguments).toBe(true);
  });

  it('Qwen 3: the tools and a tool result are rendered by the template into the prompt (call → result → answer)', async () => {
    const model = await idOf('qwen');
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      ...question,
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc', content: 'Sunny, 22 degrees' },
    ];
    const answer = await t.client().chat.completions.create({ model, messages, tools, temperature: 0, max_tokens: 4 });
    const prompt = qwenWithTools([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          {
            id: 'call_abc',
            type: 'function',
            function: { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
          },
        ],
      },
      { role: 'tool', tool_call_id: 'call_abc', name: 'get_weather', content: 'Sunny, 22 degrees' },
    ]);
    expect(answer.usage!.prompt_tokens).toBe(prompt.ids.length);
    expect(prompt.text).toContain('<tool_response>\nSunny, 22 degrees\n</tool_response>');
    expect(prompt.text).toContain(
      '<tool_call>\n{"name": "get_weather", "arguments": {"city":"Paris","unit":"celsius"}}\n</tool_call>',
    );
    expect(prompt.text).toContain('"name": "get_time"');
    expect(['stop', 'length', 'tool_calls']).toContain(answer.choices[0]!.finish_reason);
  });

  it('Llama 3 (no tools in its template): the fallback describes them in the system prompt, and a required call is parsed', async () => {
    const model = await idOf('llama');
    const whole = await t.client().chat.completions.create({
      model,
      messages: question,
      tools,
      tool_choice: 'required',
      temperature: 0,
      max_tokens: 80,
    });
    const choice = whole.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    const call = choice.message.tool_calls![0]!;
    if (call.type !== 'function') throw new Error('not a function call');
    expect(validates(JSON.parse(call.function.arguments), schemaOf(call.function.name)), call.function.arguments).toBe(
      true,
    );

    const functions = tools.map((tool) => ({ type: 'function', function: tool.function }));
    const prompt = rendered(files.llama, {
      kind: 'chat',
      addGenerationPrompt: true,
      messages: withToolsInText(question as { role: string; content: string }[], functions),
      prefill: '<tool_call>\n',
    });
    expect(whole.usage!.prompt_tokens).toBe(prompt.ids.length);
    expect(prompt.text).toContain('You help with the weather.\n\n# Tools');
    expect(prompt.text).toContain('"name":"get_weather"');

    // The same request streamed: its argument fragments join into the same arguments.
    const s = await streamed({
      model,
      messages: question,
      tools,
      tool_choice: 'required',
      temperature: 0,
      max_tokens: 80,
    });
    expect(s).toMatchObject({
      content: '',
      finish: 'tool_calls',
      calls: [{ name: call.function.name, arguments: call.function.arguments }],
    });
  });

  it("Ollama's /api/chat takes tools and tool messages, rendered into the prompt", async () => {
    const model = await idOf('qwen');
    const body = {
      model,
      stream: false,
      options: { temperature: 0, num_predict: 2 },
      tools,
      messages: [
        ...question,
        {
          role: 'assistant',
          content: '',
          tool_calls: [{ function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } }],
        },
        { role: 'tool', tool_name: 'get_weather', content: 'Sunny, 22 degrees' },
      ],
    };
    const reply = await send(
      t.server.port,
      'POST',
      '/api/chat',
      { 'content-type': 'application/json' },
      JSON.stringify(body),
    );
    expect(reply.status, reply.body).toBe(200);
    const prompt = qwenWithTools([
      {
        role: 'assistant',
        content: '',
        tool_calls: [
          { type: 'function', function: { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } } },
        ],
      },
      { role: 'tool', name: 'get_weather', content: 'Sunny, 22 degrees' },
    ]);
    expect((JSON.parse(reply.body) as { prompt_eval_count: number }).prompt_eval_count).toBe(prompt.ids.length);
  });

  it('refuses bad tools with a 400 naming the field', async () => {
    const model = await idOf('qwen');
    const post = async (extra: object) => {
      const reply = await send(
        t.server.port,
        'POST',
        '/v1/chat/completions',
        { 'content-type': 'application/json' },
        JSON.stringify({ model, messages: question, ...extra }),
      );
      expect(reply.status, reply.body).toBe(400);
      return errorOf(reply.body);
    };
    expect((await post({ tools: [{ type: 'function', function: { name: 'bad name!' } }] })).param).toBe(
      'tools[0].function.name',
    );
    expect((await post({ tools: [{ type: 'retrieval' }] })).param).toBe('tools[0]');
    expect((await post({ tools, tool_choice: { type: 'function', function: { name: 'nope' } } })).message).toContain(
      '"nope"',
    );
    expect((await post({ tool_choice: 'required' })).param).toBe('tool_choice');
    expect(
      (
        await post({
          tools: [
            {
              type: 'function',
              function: {
                name: 'f',
                parameters: { type: 'object', properties: { a: { type: 'string', pattern: 'x' } } },
              },
            },
          ],
          tool_choice: 'required',
        })
      ).param,
    ).toBe('tools[0].function.parameters');
    expect(
      (
        await post({
          messages: [
            ...question,
            {
              role: 'assistant',
              content: null,
              tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: 'not json' } }],
            },
          ],
        })
      ).param,
    ).toBe('messages[2].tool_calls[0].function.arguments');
  });
});
