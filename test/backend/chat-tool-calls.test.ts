/**
 * Tool calls in the app's chat, without the GPU: an answer that holds a call in the chat model's
 * own syntax comes with the call parsed (the server's parser, the family from the model's
 * template), a tool's result is a message of its own, and the prompt gives it to the model as
 * the template does (Qwen 3: a tool turn; Llama 3, whose template knows no tools: a user turn).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openModelText, planPrompt, promptTokens, type PromptTurn } from '../../src-main/backend/chat/prompt';
import type { ChatMessage } from '../../src-main/core/chat-template';
import type { PromptFormat } from '../../src-main/core/prompt-format';
import { ChatStore } from '../../src-main/node/store/chats';
import { testBackend } from '../support/backend';
import { hfTokenizerKvs, LLAMA3_SPEC } from '../support/hf-vocab';
import { writeRandomModel } from '../support/test-models';
import { TINY_CHAT_SHAPE, writeRandomQwen3 } from '../support/tool-models';
import { addModel, answered } from './fixtures/chat-backend';

const CALL = '<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris", "unit": "celsius"}}\n</tool_call>';
const RESULT = '{"temperature": 18, "sky": "sunny"}';
const BRANCH: PromptTurn[] = [
  { role: 'user', content: 'Weather in Paris?' },
  { role: 'assistant', content: `Let me look.\n${CALL}` },
  { role: 'tool', content: RESULT },
];

let dir: string;
const files = { qwen: '', llama: '' };
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-chat-tools-'));
  files.qwen = join(dir, 'qwen3-tools.gguf');
  files.llama = join(dir, 'llama3-tools.gguf');
  await writeRandomQwen3(files.qwen);
  await writeRandomModel(files.llama, {
    ...TINY_CHAT_SHAPE,
    arch: 'llama',
    tokenizer: hfTokenizerKvs(LLAMA3_SPEC),
    name: 'random llama3',
  });
}, 120_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'The weather in a city',
      parameters: {
        type: 'object',
        properties: { city: { type: 'string' }, unit: { enum: ['celsius', 'fahrenheit'] } },
      },
    },
  },
];

/** The prompt of BRANCH for the model at `path`, decoded with its special tokens. */
function promptOf(path: string, format: PromptFormat): string {
  const text = openModelText(path);
  try {
    const plan = planPrompt(text, '', BRANCH, { contextSize: 1024, maxTokens: 64, overflow: 'rolling-window' }, format);
    return text.tokenizer.detokenize(plan.ids, { renderSpecial: true });
  } finally {
    text.close();
  }
}

/** The chat's prompt of BRANCH with TOOLS, and the prompt the server renders for the same messages and tools. */
function chatAndServerPrompts(path: string): { chat: number[]; server: number[]; text: string } {
  const text = openModelText(path);
  try {
    const chat = planPrompt(
      text,
      '',
      BRANCH,
      { contextSize: 1024, maxTokens: 64, overflow: 'rolling-window' },
      'model',
      TOOLS,
    ).ids;
    const messages: ChatMessage[] = BRANCH.map((turn) => ({ role: turn.role, content: turn.content }));
    const server = promptTokens(text, { kind: 'chat', messages, addGenerationPrompt: true, tools: TOOLS }, Infinity);
    return {
      chat,
      server: 'ids' in server ? server.ids : [],
      text: text.tokenizer.detokenize(chat, { renderSpecial: true }),
    };
  } finally {
    text.close();
  }
}

describe('tool calls in the app chat', () => {
  it("shows an answer's call parsed in the model's syntax, and keeps a tool's result as a message of its own", async () => {
    const backend = testBackend();
    const model = addModel(backend, files.qwen);
    const chat = await backend.api.createChat({ modelId: model.id });
    const chatId = chat.chat.id;
    const store = new ChatStore(backend.context.db);
    const user = store.addMessage({
      chatId,
      parentId: null,
      role: 'user',
      content: BRANCH[0]!.content,
      status: 'done',
    });
    const answer = store.addMessage({
      chatId,
      parentId: user.id,
      role: 'assistant',
      content: BRANCH[1]!.content,
      status: 'done',
    });
    const result = store.addMessage({ chatId, parentId: answer.id, role: 'tool', content: RESULT, status: 'done' });
    const plain = store.addMessage({
      chatId,
      parentId: result.id,
      role: 'assistant',
      content: 'It is sunny, 18 °C.',
      status: 'done',
    });
    store.setActiveLeaf(chatId, plain.id);

    const view = await backend.api.getChat(chatId);
    const byId = new Map(view.messages.map((m) => [m.id, m]));
    expect(byId.get(answer.id)!.toolCalls).toEqual({
      content: 'Let me look.\n',
      calls: [{ name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' }],
    });
    expect(byId.get(answer.id)!.content).toBe(BRANCH[1]!.content);
    expect(byId.get(result.id)).toMatchObject({ role: 'tool', content: RESULT });
    expect(byId.get(result.id)!.toolCalls).toBeUndefined();
    expect(byId.get(plain.id)!.toolCalls).toBeUndefined();
    // The usage bar counts the tool turn as the prompt renders it.
    expect(view.contextUsage!.usedTokens).toBeGreaterThan(0);

    // Plain completion has no turns: the text is shown as written.
    const completion = await backend.api.updateChatSettings(chatId, { promptFormat: 'completion' });
    expect(completion.messages.find((m) => m.id === answer.id)!.toolCalls).toBeUndefined();
  });

  it("gives a tool's result to the model as its template does, and asks for the answer after it", () => {
    const qwen = promptOf(files.qwen, 'model');
    expect(qwen).toContain(CALL);
    expect(qwen).toContain(
      `<|im_start|>user\n<tool_response>\n${RESULT}\n</tool_response><|im_end|>\n<|im_start|>assistant\n`,
    );
    expect(qwen.endsWith('<|im_start|>assistant\n')).toBe(true);
    // Llama 3's template knows no tool role: the result is a user turn in <tool_response> tags.
    const llama = promptOf(files.llama, 'model');
    expect(llama).toContain(
      `<|start_header_id|>user<|end_header_id|>\n\n<tool_response>\n${RESULT}\n</tool_response><|eot_id|>`,
    );
    expect(llama.endsWith('<|start_header_id|>assistant<|end_header_id|>\n\n')).toBe(true);
  });

  it("sends a tool's result under the answer that called it and answers it; the answer can be regenerated", async () => {
    const backend = testBackend();
    const model = addModel(backend, files.qwen);
    const chat = await backend.api.createChat({ modelId: model.id, sampling: { maxTokens: 4, temperature: 0 } });
    const chatId = chat.chat.id;
    const store = new ChatStore(backend.context.db);
    const user = store.addMessage({
      chatId,
      parentId: null,
      role: 'user',
      content: BRANCH[0]!.content,
      status: 'done',
    });
    const call = store.addMessage({
      chatId,
      parentId: user.id,
      role: 'assistant',
      content: BRANCH[1]!.content,
      status: 'done',
    });
    store.setActiveLeaf(chatId, call.id);

    await expect(backend.api.sendToolResult(chatId, ' ')).rejects.toThrow('a tool result needs some text');
    await expect(backend.api.sendToolResult(chatId, RESULT, user.id)).rejects.toThrow(
      `message ${user.id} is a user message, not a assistant message`,
    );
    const sent = await backend.api.sendToolResult(chatId, RESULT);
    expect(store.message(sent.toolMessageId)).toMatchObject({ role: 'tool', parentId: call.id, content: RESULT });
    expect(await answered(backend, sent.assistantMessageId)).toMatchObject({
      parentId: sent.toolMessageId,
      status: 'done',
    });

    const again = await backend.api.regenerate(chatId, sent.assistantMessageId);
    expect(await answered(backend, again.assistantMessageId)).toMatchObject({
      parentId: sent.toolMessageId,
      status: 'done',
    });
  });

  it("keeps a chat's tools (an OpenAI tools list, checked as the server checks them) and gives them to the template as the server does", async () => {
    const backend = testBackend();
    const model = addModel(backend, files.qwen);
    const chatId = (await backend.api.createChat({ modelId: model.id })).chat.id;
    await expect(
      backend.api.updateChatSettings(chatId, { tools: [{ type: 'function', function: { name: 'bad name!' } }] }),
    ).rejects.toThrow(
      'chat setting "tools[0].function.name": tools[0].function.name must be 1 to 64 letters, digits, "_", "." or "-"',
    );
    await expect(backend.api.updateChatSettings(chatId, { tools: [TOOLS[0], TOOLS[0]] })).rejects.toThrow(
      'chat setting "tools[1].function.name": tools[1].function.name: "get_weather" is offered twice',
    );
    await expect(backend.api.updateChatSettings(chatId, { tools: 'get_weather' as never })).rejects.toThrow(
      'chat setting "tools": "tools" must be a list of at most 128 functions',
    );
    const before = (await backend.api.getChat(chatId)).contextUsage!.usedTokens;
    const view = await backend.api.updateChatSettings(chatId, { tools: TOOLS });
    expect(view.settings.tools).toEqual(TOOLS);
    expect(view.contextUsage!.usedTokens).toBeGreaterThan(before);
    expect((await backend.api.getChat(chatId)).settings.tools).toEqual(TOOLS);
    // [] takes them away.
    expect((await backend.api.updateChatSettings(chatId, { tools: [] })).settings.tools).toBeUndefined();

    // Qwen 3's template renders them itself; Llama 3's knows none, so they are described in the system prompt.
    const qwen = chatAndServerPrompts(files.qwen);
    expect(qwen.chat).toEqual(qwen.server);
    expect(qwen.text).toContain('<tools>\n{"type": "function", "function": {"name": "get_weather"');
    const llama = chatAndServerPrompts(files.llama);
    expect(llama.chat).toEqual(llama.server);
    expect(llama.text).toContain('# Tools');
  });
});
