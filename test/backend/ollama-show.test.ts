/**
 * `POST /api/show` through Ollama's official client: capabilities from the model's template and
 * metadata (stories260K has no template of its own; copies of it carry Qwen 2.5's template, which
 * renders tools, DeepSeek R1's, which thinks, and a pooling type, which makes an embedding model),
 * and model_info as the file's GGUF metadata, read here independently of the server.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GgufType } from '../../src-main/core/gguf/values';
import { openGguf } from '../../src-main/node/gguf-io';
import { stringKv, writeStoriesWith } from '../support/gguf-variants';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

let t: OpenAiTestServer;
let ollama: Ollama;
let dir: string;
const template = (name: string) => readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates', name), 'utf8');

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'gufo-show-'));
  const tools = join(dir, 'stories-tools.gguf');
  const thinking = join(dir, 'stories-thinking.gguf');
  const embedding = join(dir, 'stories-embedding.gguf');
  await writeStoriesWith(tools, [stringKv('tokenizer.chat_template', template('qwen-2.5.jinja'))]);
  await writeStoriesWith(thinking, [stringKv('tokenizer.chat_template', template('deepseek-r1-distill.jinja'))]);
  await writeStoriesWith(embedding, [{ key: 'llama.pooling_type', type: GgufType.UINT32, value: 1 }]);
  t = await startOpenAiTestServer([STORIES_260K, tools, thinking, embedding]);
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('/api/show', { timeout: 120_000 }, () => {
  it('lists the capabilities the template and metadata give: completion, tools, thinking, embedding', async () => {
    const capabilities = async (model: string) => (await ollama.show({ model })).capabilities;
    expect(await capabilities('stories260k')).toEqual(['completion']);
    expect(await capabilities('stories-tools')).toEqual(['completion', 'tools']);
    expect(await capabilities('stories-thinking:latest')).toEqual(['completion', 'thinking']);
    expect(await capabilities('stories-embedding')).toEqual(['embedding']);
    // The template shown is the one the capabilities came from.
    expect((await ollama.show({ model: 'stories-tools' })).template).toBe(template('qwen-2.5.jinja'));
  });

  it("answers the file's GGUF metadata as model_info, the tokenizer's arrays null unless verbose", async () => {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const info = (await ollama.show({ model: 'stories260k' })).model_info as unknown as Record<string, unknown>;
      expect(info).toMatchObject({
        'general.architecture': 'llama',
        'llama.context_length': gguf.get('llama.context_length'),
        'llama.embedding_length': gguf.get('llama.embedding_length'),
        'llama.block_count': gguf.get('llama.block_count'),
        'llama.attention.head_count': gguf.get('llama.attention.head_count'),
        'tokenizer.ggml.model': 'llama',
        'tokenizer.ggml.bos_token_id': gguf.get('tokenizer.ggml.bos_token_id'),
        'tokenizer.ggml.tokens': null,
        'tokenizer.ggml.scores': null,
      });
      expect(info['llama.embedding_length']).toBe(64);
      const elements = gguf.tensors.reduce((sum, t) => sum + t.ne.reduce((a, b) => a * Number(b), 1), 0);
      expect(info['general.parameter_count']).toBe(elements);
      // Every key of the file is there but the name and the template, which Ollama leaves out.
      expect(Object.keys(info).sort()).toEqual(
        gguf.kvs
          .map((kv) => kv.key)
          .filter((k) => k !== 'general.name' && k !== 'tokenizer.chat_template')
          .concat(gguf.get('general.parameter_count') === undefined ? ['general.parameter_count'] : [])
          .sort(),
      );

      // The official client has no "verbose" field: sent as Ollama's CLI sends it (`ollama show --verbose`).
      const raw = await send(
        t.server.port,
        'POST',
        '/api/show',
        {},
        JSON.stringify({ model: 'stories260k', verbose: true }),
      );
      const verbose = (JSON.parse(raw.body) as { model_info: Record<string, unknown> }).model_info;
      const tokens = verbose['tokenizer.ggml.tokens'] as string[];
      expect(tokens).toHaveLength(512);
      expect(tokens[1]).toBe('<s>');
      expect((verbose['tokenizer.ggml.scores'] as number[]).every((s) => typeof s === 'number')).toBe(true);
    } finally {
      file.close();
    }
  });
});
