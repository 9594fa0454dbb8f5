/**
 * A model over the memory budget in the app: the engine pool's load rejects with the engine's one
 * sentence, a chat's answer ends as an error showing it, and the same pool then loads the context
 * the sentence names and answers.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { EnginePool } from '../../src-main/backend/engine-pool';
import { testBackend } from '../support/backend';
import { storiesPlan, storiesRefusal } from '../support/memory-fit';
import { STORIES_260K } from '../support/paths';
import { addModel, answered } from './fixtures/chat-backend';

const FITS = 300;
// Engine processes inherit this process's environment (this file runs in a process of its own).
const before = process.env.GUFO_MEMORY_BUDGET;
process.env.GUFO_MEMORY_BUDGET = String(storiesPlan(FITS).total);
afterAll(() => {
  if (before === undefined) delete process.env.GUFO_MEMORY_BUDGET;
  else process.env.GUFO_MEMORY_BUDGET = before;
});

describe('a model over the memory budget', () => {
  it('the engine pool rejects its load with the sentence, then loads the context it names', async () => {
    const pool = new EnginePool();
    try {
      await expect(pool.withModel({ path: STORIES_260K, ctx: 1024 }, () => 'loaded')).rejects.toThrow(
        storiesRefusal(1024, FITS),
      );
      const ctx = await pool.withModel({ path: STORIES_260K, ctx: FITS }, ({ info }) => info.model!.ctx);
      expect(ctx).toBe(FITS);
    } finally {
      await pool.close();
    }
  });

  it("a chat's answer ends as an error with the sentence; a chat with the context it names answers", async () => {
    const backend = testBackend();
    const { api } = backend;
    const model = addModel(backend);
    const big = (await api.createChat({ modelId: model.id, sampling: { maxTokens: 4 }, contextSize: 2048 })).chat.id;
    const refused = await answered(backend, (await api.sendMessage(big, 'Once upon a time')).assistantMessageId);
    expect(refused).toMatchObject({ status: 'error', content: '', error: storiesRefusal(2048, FITS) });
    const small = (await api.createChat({ modelId: model.id, sampling: { maxTokens: 4 }, contextSize: FITS })).chat.id;
    const answer = await answered(backend, (await api.sendMessage(small, 'Once upon a time')).assistantMessageId);
    expect(answer.status, answer.error ?? '').toBe('done');
    expect(answer.content.length).toBeGreaterThan(0);
  });
});
