/**
 * Embeddings through the official clients against a real back end (engine on SwiftShader): OpenAI's
 * `client.embeddings.create` on /v1/embeddings (strings, batches, token ids, float and base64) and
 * Ollama's `ollama.embed` / `ollama.embeddings`, on a random qwen3 embedding model (pooling_type
 * last, as Qwen3-Embedding) whose vectors equal llama.cpp's, and on stories260K, a generation
 * model (mean pooling).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ollama } from 'ollama';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cosineDistance, llamaEmbeddings, llamaPromptIds } from '../support/llama';
import { STORIES_260K } from '../support/paths';
import { writeRandomModel } from '../support/test-models';
import { writeRandomBert } from '../support/bert-model';
import { send, startOpenAiTestServer, type OpenAiTestServer } from './fixtures/openai-server';

const dir = mkdtempSync(join(tmpdir(), 'gufo-embeddings-api-'));
const embedder = join(dir, 'embed-qwen3.gguf');
const bert = join(dir, 'embed-bert.gguf');
let t: OpenAiTestServer;
let ollama: Ollama;

beforeAll(async () => {
  await writeRandomModel(embedder, {
    arch: 'qwen3',
    nLayer: 2,
    nEmbd: 64,
    nFf: 128,
    nHead: 4,
    nHeadKv: 2,
    scale: 0.1,
    randomNorms: true,
    poolingType: 3,
  });
  await writeRandomBert(bert, { nLayer: 2, nEmbd: 64, nFf: 256, nHead: 4, poolingType: 2 });
  t = await startOpenAiTestServer([STORIES_260K, embedder, bert]);
  ollama = new Ollama({ host: `http://127.0.0.1:${t.server.port}` });
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

const texts = ['Once upon a time', 'The cat sat on the mat.'];

describe('embeddings through the official clients', { timeout: 240_000 }, () => {
  it("OpenAI's client: a batch of texts, equal to llama.cpp's, unit-length, with usage", async () => {
    const ref = await llamaEmbeddings(embedder, texts);
    const client = t.client();
    // The client asks for base64 and decodes it when no encoding_format is given.
    const answer = await client.embeddings.create({ model: 'embed-qwen3', input: texts });
    expect(answer.model).toBe('embed-qwen3');
    expect(answer.data.map((d) => d.index)).toEqual([0, 1]);
    for (const [i, d] of answer.data.entries()) {
      expect(d.embedding).toHaveLength(64);
      expect(cosineDistance(d.embedding, ref[i]!)).toBeLessThan(1e-4);
      expect(Math.hypot(...d.embedding)).toBeCloseTo(1, 5);
    }
    const asFloats = await client.embeddings.create({
      model: 'embed-qwen3',
      input: texts[0]!,
      encoding_format: 'float',
    });
    expect(asFloats.data[0]!.embedding.length).toBe(64);
    expect(cosineDistance(asFloats.data[0]!.embedding, answer.data[0]!.embedding)).toBeLessThan(1e-12);
    expect(answer.usage.prompt_tokens).toBeGreaterThan(asFloats.usage.prompt_tokens);
    expect(answer.usage.total_tokens).toBe(answer.usage.prompt_tokens);

    // Token ids as they are: the same vector as the text they tokenize to.
    const ids = await llamaPromptIds(embedder, texts[0]!);
    const byIds = await client.embeddings.create({ model: 'embed-qwen3', input: ids, encoding_format: 'float' });
    expect(byIds.usage.prompt_tokens).toBe(ids.length);
    expect(cosineDistance(byIds.data[0]!.embedding, asFloats.data[0]!.embedding)).toBeLessThan(1e-12);
  });

  it("OpenAI's client on a bert encoder (WordPiece, cls pooling): llama.cpp's vectors", async () => {
    const ref = await llamaEmbeddings(bert, texts);
    const answer = await t.client().embeddings.create({ model: 'embed-bert', input: texts, encoding_format: 'float' });
    for (const [i, d] of answer.data.entries()) {
      expect(d.embedding).toHaveLength(64);
      expect(cosineDistance(d.embedding, ref[i]!)).toBeLessThan(1e-4);
    }
    // [CLS] the words [SEP]
    expect(answer.usage.prompt_tokens).toBe(6 + 9);
  });

  it("an embedding model is refused for generation with why, on /v1 and on Ollama's /api/chat", async () => {
    await expect(
      t.client().chat.completions.create({ model: 'embed-bert', messages: [{ role: 'user', content: 'hi' }] }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('an embedding model (bert)') as string,
    });
    const chat = await send(
      t.server.port,
      'POST',
      '/api/chat',
      { 'content-type': 'application/json' },
      JSON.stringify({ model: 'embed-bert', messages: [{ role: 'user', content: 'hi' }] }),
    );
    expect(chat.status).toBe(400);
    expect(chat.body).toContain('an embedding model (bert)');
  });

  it('a generation model embeds too (mean pooling)', async () => {
    const answer = await t
      .client()
      .embeddings.create({ model: 'stories260k', input: 'Once upon a time', encoding_format: 'float' });
    expect(answer.data[0]!.embedding).toHaveLength(64);
    expect(Math.hypot(...answer.data[0]!.embedding)).toBeCloseTo(1, 5);
  });

  it('refuses what it cannot do, naming the field', async () => {
    const client = t.client();
    await expect(client.embeddings.create({ model: 'embed-qwen3', input: 'x', dimensions: 32 })).rejects.toMatchObject({
      status: 400,
      param: 'dimensions',
      message: expect.stringContaining('64 dimensions') as string,
    });
    await expect(client.embeddings.create({ model: 'embed-qwen3', input: [[1, 99999]] })).rejects.toMatchObject({
      status: 400,
      param: 'input',
      message: expect.stringContaining('token id 99999') as string,
    });
    await expect(client.embeddings.create({ model: 'embed-qwen3', input: [] })).rejects.toMatchObject({
      status: 400,
      param: 'input',
    });
    await expect(
      client.embeddings.create({ model: 'embed-qwen3', input: 'x', encoding_format: 'int8' as never }),
    ).rejects.toMatchObject({ status: 400, param: 'encoding_format' });
    await expect(client.embeddings.create({ model: 'embed-qwen3', input: 'word '.repeat(400) })).rejects.toMatchObject({
      status: 400,
      code: 'context_length_exceeded',
    });
    await expect(client.embeddings.create({ model: 'nope', input: 'x' })).rejects.toMatchObject({ status: 404 });
    expect((await send(t.server.port, 'GET', '/v1/embeddings')).status).toBe(405);
  });

  it("Ollama's client: embed (batch, truncate) and the older embeddings, the vectors /v1 gives", async () => {
    const v1 = await t.client().embeddings.create({ model: 'embed-qwen3', input: texts, encoding_format: 'float' });
    const answer = await ollama.embed({ model: 'embed-qwen3', input: texts });
    expect(answer.model).toBe('embed-qwen3');
    expect(answer.embeddings).toHaveLength(2);
    for (const [i, v] of answer.embeddings.entries())
      expect(cosineDistance(v, v1.data[i]!.embedding)).toBeLessThan(1e-12);
    expect(answer.prompt_eval_count).toBe(v1.usage.prompt_tokens);
    expect(answer.total_duration).toBeGreaterThan(0);

    const older = await ollama.embeddings({ model: 'embed-qwen3', prompt: texts[0]! });
    expect(cosineDistance(older.embedding, v1.data[0]!.embedding)).toBeLessThan(1e-12);

    // Longer than the context: cut to fit by default, refused with truncate false.
    const long = 'word '.repeat(50);
    const cut = await ollama.embed({ model: 'embed-qwen3', input: long, options: { num_ctx: 8 } });
    expect(cut.prompt_eval_count).toBe(8);
    await expect(
      ollama.embed({ model: 'embed-qwen3', input: long, truncate: false, options: { num_ctx: 8 } }),
    ).rejects.toMatchObject({
      status_code: 400,
      error: expect.stringContaining('more than the context of 8') as string,
    });
  });
});
