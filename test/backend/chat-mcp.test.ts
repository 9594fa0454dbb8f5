/**
 * MCP servers in the app's chat, against servers written with the official SDK
 * (test/support/mcp/server.mjs, over stdio and Streamable HTTP): Settings › Tools' servers with
 * their status, an answer's calls asked about, run, and saved as tool messages (a crash, a hang,
 * garbage and a refusal each a clear message), the model going on once every call has a
 * result, Stop cancelling a running call, and a required tool choice making a random model call.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServerView, ToolCallState } from '../../src-preload/api';
import { unansweredCall } from '../../src-main/backend/chat/mcp-tools';
import { TOOL_CALL_SYNTAX } from '../../src-main/core/tool-calls/index';
import { ChatStore } from '../../src-main/node/store/chats';
import { testBackend, type TestBackend } from '../support/backend';
import { serveHttp } from '../support/mcp/server.mjs';
import { tempDir } from '../support/temp';
import { writeRandomQwen3 } from '../support/tool-models';
import { addModel, answered } from './fixtures/chat-backend';

const SERVER = join(__dirname, '../support/mcp/server.mjs');
const call = (name: string, args: object) => `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

let http: { url: string; close(): Promise<void> };
let modelDir = '';
let modelFile = '';
beforeAll(async () => {
  http = await serveHttp();
  modelDir = mkdtempSync(join(tmpdir(), 'gufo-chat-mcp-'));
  modelFile = join(modelDir, 'qwen3-tools.gguf');
  await writeRandomQwen3(modelFile);
}, 120_000);
afterAll(async () => {
  await http?.close();
  if (modelDir) rmSync(modelDir, { recursive: true, force: true });
});

function mcpJson(): string {
  return JSON.stringify({
    mcpServers: {
      local: {
        command: process.execPath,
        args: [SERVER, '--env', 'GUFO_TEST_SECRET'],
        env: { GUFO_TEST_SECRET: 's3cret' },
      },
      web: { url: http.url },
    },
  });
}

/** Resolves with the servers once `ready` holds for them. */
function serversWhen(backend: TestBackend, ready: (servers: McpServerView[]) => boolean): Promise<McpServerView[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the MCP servers did not reach the state')), 30_000);
    const check = (servers: McpServerView[]) => {
      if (!ready(servers)) return;
      clearTimeout(timer);
      stop();
      resolve(servers);
    };
    const stop = backend.events.subscribe((e) => e.type === 'mcp-servers' && check(e.servers));
    void backend.api.listMcpServers().then(check);
  });
}

/** Resolves with the chat's next tool-call state matching `state` ('asking', 'running', or null). */
function toolCallWhen(
  backend: TestBackend,
  chatId: number,
  state: ToolCallState['state'] | null,
): Promise<ToolCallState | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no tool call state ${state} in chat ${chatId}`)), 60_000);
    const stop = backend.events.subscribe((e) => {
      if (e.type !== 'chat-tool-call' || e.chatId !== chatId || (e.toolCall?.state ?? null) !== state) return;
      clearTimeout(timer);
      stop();
      resolve(e.toolCall);
    });
  });
}

/** A chat on the random Qwen 3 with the servers' tools and an answer making `calls`, as the model would write it. */
async function chatCalling(backend: TestBackend, calls: string[], toolUse = {}) {
  const model = addModel(backend, modelFile);
  const chat = await backend.api.createChat({ modelId: model.id, sampling: { maxTokens: 4, temperature: 0 } });
  const chatId = chat.chat.id;
  await backend.api.updateChatSettings(chatId, { toolUse: { mcpServers: ['local', 'web'], ...toolUse } });
  const store = new ChatStore(backend.context.db);
  const user = store.addMessage({ chatId, parentId: null, role: 'user', content: 'Sums?', status: 'done' });
  const answer = store.addMessage({
    chatId,
    parentId: user.id,
    role: 'assistant',
    content: calls.join('\n'),
    status: 'done',
  });
  store.setActiveLeaf(chatId, answer.id);
  return { chatId, answer, store };
}

describe('MCP servers in the app chat', () => {
  it('keeps servers from an mcp.json, each with its status, command line and tools; a mistake names its field', async () => {
    const backend = testBackend();
    await expect(backend.api.importMcpServers('{"mcpServers": {"x": {"args": []}}}')).rejects.toThrow(
      'mcpServers.x must have "command" (a stdio server) or "url"',
    );
    await expect(backend.api.saveMcpServer('w', { url: 'ftp://x' })).rejects.toThrow('the server.url must be an http');
    await backend.api.importMcpServers(mcpJson());
    const servers = await serversWhen(backend, (s) => s.length === 2 && s.every((v) => v.status.state === 'ready'));
    const local = servers.find((s) => s.name === 'local')!;
    expect(local.commandLine).toBe(`GUFO_TEST_SECRET=… ${process.execPath} ${SERVER} --env GUFO_TEST_SECRET`);
    expect(JSON.stringify(backend.seen.filter((e) => e.type === 'mcp-servers').map((e) => e.type))).not.toContain(
      's3cret',
    );
    const tools = (s: McpServerView) => (s.status.state === 'ready' ? s.status.tools.map((t) => t.name) : []);
    expect(tools(local)).toEqual(['add', 'weather', 'forecast', 'fail', 'crash', 'hang', 'garbage', 'env_value']);
    expect(tools(servers.find((s) => s.name === 'web')!)).toEqual([
      'add',
      'weather',
      'forecast',
      'fail',
      'hang',
      'garbage',
    ]);
    await expect(backend.api.saveMcpServer('web', { url: http.url })).rejects.toThrow('exists already');

    const off = await backend.api.setMcpServerEnabled('web', false);
    expect(off.find((s) => s.name === 'web')!.status).toEqual({ state: 'disabled' });
    await backend.api.saveMcpServer('bad', { command: join(tempDir(), 'no-such-program') });
    const failed = await serversWhen(backend, (s) => s.find((v) => v.name === 'bad')?.status.state === 'failed');
    expect(failed.find((s) => s.name === 'bad')!.status).toMatchObject({
      state: 'failed',
      reason: expect.stringMatching(/ENOENT|closed/) as unknown,
    });
    expect((await backend.api.deleteMcpServer('bad')).map((s) => s.name)).toEqual(['local', 'web']);

    // A Streamable HTTP server that wants a header gets it from the entry's headers.
    const guarded = await serveHttp({ name: 'X-Token', value: 'abc' });
    try {
      await backend.api.saveMcpServer('open', { url: guarded.url });
      await backend.api.saveMcpServer('keyed', { url: guarded.url, headers: { 'X-Token': 'abc' } });
      const both = await serversWhen(backend, (s) =>
        ['open', 'keyed'].every((n) => ['ready', 'failed'].includes(s.find((v) => v.name === n)?.status.state ?? '')),
      );
      expect(both.find((s) => s.name === 'keyed')!.status.state).toBe('ready');
      expect(both.find((s) => s.name === 'open')!.status).toMatchObject({
        state: 'failed',
        reason: expect.stringContaining('missing header') as unknown,
      });
    } finally {
      await guarded.close();
    }
  });

  it('asks about each call, saves each result as a tool message, then the model answers them', async () => {
    const backend = testBackend({ mcpTimeouts: { callTimeoutMs: 1500 } });
    await backend.api.importMcpServers(mcpJson());
    const { chatId, answer, store } = await chatCalling(backend, [
      call('add', { a: 2, b: 3 }),
      call('env_value', {}),
      call('hang', {}),
    ]);
    const asking = (await backend.api.getChat(chatId)).toolCall;
    expect(asking).toEqual({
      messageId: answer.id,
      index: 0,
      server: 'local',
      name: 'add',
      arguments: '{"a":2,"b":3}',
      state: 'asking',
    });

    const next = toolCallWhen(backend, chatId, 'asking');
    await backend.api.answerToolCall(chatId, 'run');
    expect(await next).toMatchObject({ index: 1, name: 'env_value' });
    const [sum] = store.messages(chatId).filter((m) => m.role === 'tool');
    expect(sum).toMatchObject({ parentId: answer.id, content: '5', status: 'done', error: null });

    // The env value reaches the server's process; a hang is cut off by the timeout and said.
    const third = toolCallWhen(backend, chatId, 'asking');
    await backend.api.answerToolCall(chatId, 'run');
    expect(await third).toMatchObject({ index: 2, name: 'hang' });
    await expect(backend.api.answerToolCall(chatId, 'maybe' as 'run')).rejects.toThrow('"run", "always" or "deny"');
    const done = toolCallWhen(backend, chatId, null);
    await backend.api.answerToolCall(chatId, 'always');
    await done;
    const results = store.messages(chatId).filter((m) => m.role === 'tool');
    expect(results.map((m) => [m.content, m.status])).toEqual([
      ['5', 'done'],
      ['s3cret', 'done'],
      [expect.stringContaining('timed out'), 'error'],
    ]);
    expect(results[2]!.error).toMatch(/^local\/hang: .*timed out/);
    expect((await backend.api.getChat(chatId)).settings.toolUse!.allowedTools).toEqual(['local/hang']);

    // Every call has its result: the model answers, under the last one.
    const view = await backend.api.getChat(chatId);
    const reply = view.messages.find((m) => m.role === 'assistant' && m.parentId === results[2]!.id)!;
    expect(await answered(backend, reply.id)).toMatchObject({ status: 'done' });
  });

  it('says what went wrong when a server crashes, answers garbage, or a call is refused, and goes on', async () => {
    const backend = testBackend();
    await backend.api.importMcpServers(mcpJson());
    const { chatId, store } = await chatCalling(
      backend,
      [call('crash', {}), call('garbage', {}), call('fail', {}), call('add', { a: 1 })],
      {
        allowedTools: ['local/crash', 'local/garbage', 'local/fail'],
      },
    );
    // The allowed calls run one after another without asking, until the one that is not allowed.
    expect(await backend.api.getChat(chatId).then((v) => v.toolCall)).toMatchObject({ name: 'crash', state: 'asking' });
    const asked = toolCallWhen(backend, chatId, 'asking');
    await backend.api.answerToolCall(chatId, 'run');
    expect(await asked).toMatchObject({ index: 3, name: 'add' });
    const errors = store
      .messages(chatId)
      .filter((m) => m.role === 'tool')
      .map((m) => m.error);
    expect(errors[0]).toMatch(/^local\/crash: .*Connection closed.*crashing on purpose/);
    expect(errors[1]).toMatch(/^local\/garbage: .*Invalid tools\/call result/);
    expect(errors[2]).toBe('the weather service is down');

    const ended = toolCallWhen(backend, chatId, null);
    await backend.api.answerToolCall(chatId, 'deny');
    await ended;
    const last = store
      .messages(chatId)
      .filter((m) => m.role === 'tool')
      .at(-1)!;
    expect(last).toMatchObject({ content: 'Error: the user denied this call', status: 'error' });
    // The crashed server starts again for the next call.
    expect((await backend.api.listMcpServers()).find((s) => s.name === 'local')!.status.state).not.toBe('disabled');
  });

  it('Stop cancels a running call; the model does not go on', async () => {
    const backend = testBackend();
    await backend.api.importMcpServers(mcpJson());
    const { chatId, store } = await chatCalling(backend, [call('hang', {})]);
    const running = toolCallWhen(backend, chatId, 'running');
    await backend.api.answerToolCall(chatId, 'run');
    await running;
    const ended = toolCallWhen(backend, chatId, null);
    await backend.api.stopGeneration(chatId);
    await ended;
    const messages = store.messages(chatId);
    expect(messages.at(-1)).toMatchObject({ role: 'tool', status: 'stopped', error: 'stopped' });
    const withTools = await backend.api.getChat(chatId);
    expect(withTools.toolCall).toBeNull();
    // The context bar counts the running servers' tools, which the template renders into the prompt.
    const without = await backend.api.updateChatSettings(chatId, { toolUse: { mcpServers: [] } });
    expect(without.contextUsage!.usedTokens).toBeLessThan(withTools.contextUsage!.usedTokens - 100);
  });

  it('a required tool choice makes the model call the tool, with arguments held to its schema', async () => {
    const backend = testBackend();
    await backend.api.importMcpServers(mcpJson());
    const model = addModel(backend, modelFile);
    const chat = await backend.api.createChat({ modelId: model.id, sampling: { maxTokens: 80, temperature: 0 } });
    const chatId = chat.chat.id;
    await expect(backend.api.updateChatSettings(chatId, { toolUse: { maxRounds: 0 } })).rejects.toThrow(
      'chat setting "toolUse.maxRounds" must be a whole number from 1 to 100',
    );
    await backend.api.updateChatSettings(chatId, { toolUse: { mcpServers: ['local'], toolChoice: 'forecast' } });
    const asking = toolCallWhen(backend, chatId, 'asking');
    const sent = await backend.api.sendMessage(chatId, 'Tomorrow?');
    expect(await answered(backend, sent.assistantMessageId)).toMatchObject({ status: 'done' });
    const state = await asking;
    expect(state).toMatchObject({ messageId: sent.assistantMessageId, name: 'forecast', server: 'local' });
    expect(JSON.parse(state!.arguments)).toHaveProperty('unit', expect.stringMatching(/^(celsius|fahrenheit)$/));
  });

  it('stops asking after the chat’s rounds of calls since the user’s message', () => {
    const turn = (role: 'user' | 'assistant' | 'tool', content = 'x') => ({ role, content, status: 'done' });
    const syntax = TOOL_CALL_SYNTAX.hermes;
    const round = [turn('assistant', call('add', { a: 1, b: 1 })), turn('tool', '2')];
    const branch = [turn('user'), ...round, ...round, turn('assistant', call('add', { a: 1, b: 2 }))];
    expect(unansweredCall(branch, syntax, 3)).toMatchObject({ at: 5, index: 0 });
    expect(unansweredCall(branch, syntax, 2)).toBeNull();
    expect(unansweredCall([...branch, { role: 'tool', content: 'x', status: 'stopped' }], syntax, 8)).toBeNull();
  });
});
