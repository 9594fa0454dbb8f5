/**
 * A chat's KV cache types reach the engine (WebGPU on SwiftShader): a chat that names none loads
 * its model with the server's default (`gufo serve --cache-type-k/-v`), a chat's own types
 * override it, a change reloads the model, and the answer's statistics and the loaded model's
 * memory say which types were used, the KV bytes those of the estimate (llama.cpp's).
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { estimateKvCache } from '../../src-main/core/model-summary';
import { testBackend } from '../support/backend';
import { tempDir } from '../support/temp';
import { writeRandomModel } from '../support/test-models';
import { addModel, answered } from './fixtures/chat-backend';

const CONTEXT = 128;

describe("a chat's KV cache types on the engine", { timeout: 180_000 }, () => {
  it("loads the chat's model with the server's default, then with the chat's own types, reloading it", async () => {
    // One layer, 2 KV heads of 32: whole q8_0 and q4_0 blocks.
    const path = join(tempDir(), 'heads-32.gguf');
    await writeRandomModel(path, { nLayer: 1, nEmbd: 64, nFf: 64, nHead: 2, contextLength: 512 });
    const backend = testBackend({ kvTypes: { k: 'q4_0', v: 'q4_0' } });
    const { api } = backend;
    const model = addModel(backend, path);
    const chat = await api.createChat({
      modelId: model.id,
      preset: 'precise',
      sampling: { maxTokens: 4 },
      contextSize: CONTEXT,
      promptFormat: 'completion',
    });
    const id = chat.chat.id;
    expect(chat.kvCacheDefault).toEqual({ k: 'q4_0', v: 'q4_0' });
    // What the New chat dialog offers as "Default", before any chat exists.
    expect(await api.kvCacheDefault()).toEqual({ k: 'q4_0', v: 'q4_0' });

    const ask = async (text: string) => {
      const { assistantMessageId } = await api.sendMessage(id, text);
      const answer = await answered(backend, assistantMessageId);
      expect(answer.error).toBeNull();
      const [loaded] = await api.loadedModels();
      return { stats: answer.stats!, memory: loaded!.memory };
    };
    const estimate = (k: string, v: string) => estimateKvCache(1, 2, 32, 32, CONTEXT, null, { k, v }).bytes;

    // No type of its own: the server's.
    const first = await ask('Once upon a time');
    expect(first.stats.kvCacheTypes).toEqual({ k: 'q4_0', v: 'q4_0' });
    expect(first.memory.kvTypes).toEqual({ k: 'q4_0', v: 'q4_0' });
    expect(first.memory.kvBytes).toBe(estimate('q4_0', 'q4_0'));

    // Its own K type overrides the server's; V keeps the default. The model loads again.
    await api.updateChatSettings(id, { kvCacheTypes: { k: 'q8_0' } });
    const loadsBefore = backend.seen.filter((e) => e.type === 'chat-progress' && e.progress.phase === 'loading').length;
    const second = await ask('Tom had a ball.');
    expect(second.stats.kvCacheTypes).toEqual({ k: 'q8_0', v: 'q4_0' });
    expect(second.memory.kvTypes).toEqual({ k: 'q8_0', v: 'q4_0' });
    expect(second.memory.kvBytes).toBe(estimate('q8_0', 'q4_0'));
    const loadsAfter = backend.seen.filter((e) => e.type === 'chat-progress' && e.progress.phase === 'loading').length;
    expect(loadsAfter).toBeGreaterThan(loadsBefore);

    // f16, named by the chat, against a server default of q4_0.
    await api.updateChatSettings(id, { kvCacheTypes: { k: 'f16', v: 'f16' } });
    const third = await ask('The end.');
    expect(third.stats.kvCacheTypes).toEqual({ k: 'f16', v: 'f16' });
    expect(third.memory.kvBytes).toBe(estimate('f16', 'f16'));
  });
});
