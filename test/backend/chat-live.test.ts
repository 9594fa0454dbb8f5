/**
 * Live numbers while an answer is written, on the real engine (WebGPU on SwiftShader) with
 * stories260K: the model load, then tokens so far and the decode speed, a few times a second;
 * and the loaded models, with their GPU memory, freed on request.
 */
import { describe, expect, it } from 'vitest';
import type { AnswerProgress, GufoEvent } from '../../src-preload/api';
import { testBackend, type TestBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { addModel, answered } from './fixtures/chat-backend';

/** The back end emits progress at most this often (a few times a second). */
const PROGRESS_EVERY_MS = 250;

interface Seen {
  at: number;
  progress: AnswerProgress;
}

/** Every 'chat-progress' of the message, with the time it was emitted, from now on. */
function recordProgress(backend: TestBackend, messageId: () => number | null): Seen[] {
  const seen: Seen[] = [];
  backend.events.subscribe((e: GufoEvent) => {
    if (e.type === 'chat-progress' && e.messageId === messageId())
      seen.push({ at: performance.now(), progress: e.progress });
  });
  return seen;
}

const loadingOf = (seen: Seen[]) => seen.flatMap(({ progress: p }) => (p.phase === 'loading' ? [p] : []));
const generatingOf = (seen: Seen[]) =>
  seen.flatMap(({ at, progress: p }) => (p.phase === 'generating' ? [{ at, ...p }] : []));

// SwiftShader is slow, and slower still on a busy machine.
describe('live answer progress', { timeout: 400_000 }, () => {
  it('reports the model load, then tokens so far and the decode speed while the answer streams, throttled', async () => {
    const backend = testBackend();
    const { api } = backend;
    const model = addModel(backend);
    const id = (
      await api.createChat({ modelId: model.id, preset: 'precise', sampling: { maxTokens: 120 }, contextSize: 256 })
    ).chat.id;
    let messageId: number | null = null;
    const seen = recordProgress(backend, () => messageId);

    messageId = (await api.sendMessage(id, 'Once upon a time')).assistantMessageId;
    const answer = await answered(backend, messageId);
    const endedAt = performance.now();
    expect(answer.status).toBe('done');
    const stats = answer.stats!;

    // The load comes first: bytes uploaded of the model's tensors.
    const loading = loadingOf(seen);
    expect(loading.length).toBeGreaterThan(0);
    expect(seen[0]!.progress.phase).toBe('loading');
    expect(seen.findLastIndex((s) => s.progress.phase === 'loading')).toBeLessThan(
      seen.findIndex((s) => s.progress.phase === 'generating'),
    );
    for (const p of loading) expect(p.doneBytes).toBeLessThanOrEqual(p.totalBytes);

    // Then the tokens so far, several times before the answer ends, never more often than the throttle allows.
    const generating = generatingOf(seen);
    expect(generating.length).toBeGreaterThanOrEqual(2);
    for (const [i, p] of generating.entries()) {
      expect(p.at).toBeLessThan(endedAt);
      expect(p.promptTokens).toBe(stats.promptTokens);
      expect(p.generatedTokens).toBeLessThanOrEqual(stats.generatedTokens);
      // A speed needs two tokens.
      if (p.generatedTokens === 1) expect(p.decodeTokS).toBeNull();
      else expect(p.decodeTokS).toBeGreaterThan(0);
      if (i === 0) continue;
      const before = generating[i - 1]!;
      expect(p.generatedTokens).toBeGreaterThan(before.generatedTokens);
      // Timed here when received: a pause of this process may delay one receipt, not the throttle.
      expect(p.at - before.at).toBeGreaterThanOrEqual(PROGRESS_EVERY_MS * 0.8);
    }
    // The live speed is the engine's own measure so far: within a factor of the final one.
    const last = generating.at(-1)!;
    expect(last.decodeTokS! / stats.decodeTokS).toBeGreaterThan(0.5);
    expect(last.decodeTokS! / stats.decodeTokS).toBeLessThan(2);

    // A second answer finds the model loaded: no load to report.
    seen.length = 0;
    await api.updateChatSettings(id, { sampling: { maxTokens: 8 } });
    messageId = (await api.sendMessage(id, 'The end')).assistantMessageId;
    await answered(backend, messageId);
    expect(loadingOf(seen)).toEqual([]);
    expect(generatingOf(seen).length).toBeGreaterThan(0);
  });

  it('lists the loaded model with its GPU memory; Unload frees it and the next answer loads it again', async () => {
    const backend = testBackend();
    const { api } = backend;
    const model = addModel(backend);
    expect(await api.loadedModels()).toEqual([]);
    const id = (
      await api.createChat({ modelId: model.id, preset: 'precise', sampling: { maxTokens: 8 }, contextSize: 128 })
    ).chat.id;
    await answered(backend, (await api.sendMessage(id, 'Once upon a time')).assistantMessageId);

    const loaded = await api.loadedModels();
    expect(loaded).toEqual([
      { path: STORIES_260K, name: 'stories260K', contextSize: 128, memory: expect.any(Object) as object },
    ]);
    const { memory } = loaded[0]!;
    expect(memory.residentWeightBytes).toBeGreaterThan(0);
    expect(memory.kvBytes).toBeGreaterThan(0);
    const announced = () =>
      backend.seen.flatMap((e) => (e.type === 'loaded-models' ? [e.models.map((m) => m.name)] : []));
    expect(announced()).toEqual([['stories260K']]);

    await api.unloadModel(STORIES_260K);
    expect(await api.loadedModels()).toEqual([]);
    expect(announced()).toEqual([['stories260K'], []]);
    await expect(api.unloadModel('')).rejects.toThrow('unloadModel needs the path of a loaded model');

    let messageId: number | null = null;
    const seen = recordProgress(backend, () => messageId);
    messageId = (await api.sendMessage(id, 'The end')).assistantMessageId;
    expect((await answered(backend, messageId)).status).toBe('done');
    expect(loadingOf(seen).length).toBeGreaterThan(0);
    expect((await api.loadedModels()).map((m) => m.name)).toEqual(['stories260K']);
  });
});
