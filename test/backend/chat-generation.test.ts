/**
 * Answers written by the real engine (WebGPU on SwiftShader) with stories260K: streaming, stop,
 * regenerate, edit, branches, and the tree as a new back end reads it back.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChat, stopTokenIds } from '../../src-main/core/chat-template';
import { createTokenizer, readVocab } from '../../src-main/core/tokenizer/index';
import { openGguf } from '../../src-main/node/gguf-io';
import { testBackend } from '../support/backend';
import { engineGate } from '../support/engine-gate';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { addModel, answered, deltaCount, deltas } from './fixtures/chat-backend';

// SwiftShader is slow, and slower still on a busy machine.
describe('chat answers on the engine', { timeout: 180_000 }, () => {
  it("streams an answer whose deltas are its stored text: the engine's greedy output for the rendered chat", async () => {
    const backend = testBackend();
    const { api } = backend;
    const model = addModel(backend);
    const system = 'You tell stories.';
    const id = (
      await api.createChat({
        modelId: model.id,
        systemPrompt: system,
        preset: 'precise',
        sampling: { maxTokens: 20 },
        contextSize: 256,
        promptFormat: 'llama2',
      })
    ).chat.id;

    const { userMessageId, assistantMessageId } = await api.sendMessage(id, 'Once upon a time');
    const created = backend.seen.flatMap((e) => (e.type === 'chat-message' ? [e.message] : []));
    expect(created.map((m) => [m.id, m.role, m.status, m.content])).toEqual([
      [userMessageId, 'user', 'done', 'Once upon a time'],
      [assistantMessageId, 'assistant', 'streaming', ''],
    ]);
    // The first message names the chat.
    expect((await api.listChats())[0]).toMatchObject({ id, title: 'Once upon a time' });
    // While the answer loads, the context bar counts the prompt it is written after (issue #30 item 15).
    const during = await api.getChat(id);
    expect(during.messages.find((m) => m.id === assistantMessageId)!.status).toBe('streaming');

    const answer = await answered(backend, assistantMessageId);
    expect(answer.status).toBe('done');
    expect(answer.content.length).toBeGreaterThan(0);
    expect(deltas(backend, assistantMessageId).join('')).toBe(answer.content);
    const view = await api.getChat(id);
    expect(view.messages.find((m) => m.id === assistantMessageId)).toEqual(answer);
    expect(view.activeLeafId).toBe(assistantMessageId);

    // The same prompt, built and run here without the chat code.
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const vocab = readVocab(gguf);
      const tokenizer = createTokenizer(vocab);
      const messages = [
        { role: 'system', content: system },
        { role: 'user', content: 'Once upon a time' },
      ];
      const prompt = tokenizer.tokenize(
        renderChat(vocab, messages, { architecture: 'llama', addBos: vocab.addBos }).prompt,
        { addBos: true, parseSpecial: true },
      );
      const stop = [...new Set([...stopTokenIds(vocab), ...vocab.eog])];
      const direct = await backend.context.engines.withModel({ path: STORIES_260K, ctx: 256 }, ({ host }) =>
        host.generate({ prompt, maxTokens: 20, stop }),
      );
      expect(answer.content).toBe(tokenizer.detokenize(direct.ids.filter((t) => !stop.includes(t))));
      expect(answer.stats).toMatchObject({
        promptTokens: prompt.length,
        reusedTokens: 0,
        generatedTokens: direct.ids.length,
        stopReason: direct.stopReason,
      });
      expect(answer.stats!.ttftMs).toBeGreaterThan(0);
      expect(answer.stats!.decodeTokS).toBeGreaterThan(0);
      expect(answer.stats!.prefillTokS).toBeGreaterThan(0);
      expect(view.contextUsage).toMatchObject({ contextSize: 256, droppedMessages: 0 });
      expect(view.contextUsage!.usedTokens).toBeGreaterThan(prompt.length);
      // Not the empty answer as a finished turn of its own: the count the answer's progress starts from.
      expect(during.contextUsage!.usedTokens).toBe(prompt.length);
    } finally {
      file.close();
    }
  });

  it('a base model continues the text as written (plain completion) and stops at the answer length limit', async () => {
    const backend = testBackend();
    const model = addModel(backend);
    const id = (
      await backend.api.createChat({
        modelId: model.id,
        preset: 'precise',
        sampling: { maxTokens: 16 },
        contextSize: 256,
      })
    ).chat.id;
    const { assistantMessageId } = await backend.api.sendMessage(id, 'Once upon a time');
    const answer = await answered(backend, assistantMessageId);
    // llama.cpp's greedy continuation of "Once upon a time" with stories260K.
    const llamaCpp =
      ', there was a little girl named Lily. She loved to play outside in the park. One day, she saw a big, red ball.';
    expect(answer.content.length).toBeGreaterThan(20);
    expect(llamaCpp.startsWith(answer.content)).toBe(true);
    expect(answer.stats).toMatchObject({ generatedTokens: 16, stopReason: 'length' });
  });

  it('stops, regenerates and edits as branches, one answer at a time, and a new back end reads the same tree', async () => {
    const dataDir = join(tempDir(), 'home');
    // The engine waits after each token until the back end has handled it: a stop asked on a delta lands with the next token.
    const backend = testBackend({ dataDir, engineLauncher: engineGate().launcher });
    const { api } = backend;
    const model = addModel(backend);
    const id = (
      await api.createChat({ modelId: model.id, preset: 'precise', sampling: { maxTokens: 16 }, contextSize: 256 })
    ).chat.id;

    const first = await api.sendMessage(id, 'Once upon a time');
    const a1 = await answered(backend, first.assistantMessageId);

    // Regenerate: a sibling answer to the same message; greedy, so the same text, with the prompt reused from the KV cache.
    const regen = await api.regenerate(id, first.assistantMessageId);
    await expect(api.sendMessage(id, 'Meanwhile')).rejects.toThrow(
      `an answer is still being written in chat ${id}; stop it or wait for it to finish first`,
    );
    const a1b = await answered(backend, regen.assistantMessageId);
    expect(a1b).toMatchObject({ parentId: first.userMessageId, status: 'done', content: a1.content });
    expect(a1b.stats!.reusedTokens).toBeGreaterThan(0);

    // A follow-up goes under the newest answer (the active leaf).
    const second = await api.sendMessage(id, 'The cat sat on the mat');
    const a2 = await answered(backend, second.assistantMessageId);
    expect((await api.getChat(id)).messages.find((m) => m.id === second.userMessageId)!.parentId).toBe(
      regen.assistantMessageId,
    );
    expect(a2.status).toBe('done');

    // Edit the first message: a sibling user message with its own answer, stopped mid-stream.
    await api.updateChatSettings(id, { sampling: { maxTokens: 200 } });
    const edit = await api.editMessage(id, first.userMessageId, 'The dog ran');
    await deltaCount(backend, edit.assistantMessageId, 3);
    await api.stopGeneration(id);
    const stopped = (await api.getChat(id)).messages.find((m) => m.id === edit.assistantMessageId)!;
    expect(stopped.status).toBe('stopped');
    expect(stopped.stats?.stopReason).toBe('cancelled');
    expect(stopped.content).toBe(deltas(backend, edit.assistantMessageId).join(''));
    expect(stopped.stats!.generatedTokens).toBeLessThan(20);
    expect(
      backend.seen.filter((e) => e.type === 'chat-message' && e.message.id === edit.assistantMessageId).at(-1),
    ).toMatchObject({ message: stopped });
    await api.stopGeneration(id); // nothing to stop: no-op

    const tree = await api.getChat(id);
    const parentOf = (messageId: number) => tree.messages.find((m) => m.id === messageId)!.parentId;
    expect(parentOf(edit.userMessageId)).toBeNull();
    expect(parentOf(edit.assistantMessageId)).toBe(edit.userMessageId);
    expect(tree.activeLeafId).toBe(edit.assistantMessageId);

    // Back to the first branch: it continues down the newest answers to the follow-up's answer.
    const switched = await api.selectBranch(id, first.userMessageId);
    expect(switched.activeLeafId).toBe(second.assistantMessageId);
    expect((await api.selectBranch(id, first.assistantMessageId)).activeLeafId).toBe(first.assistantMessageId);
    const before = await api.getChat(id);
    await backend.close();

    const reopened = testBackend({ dataDir });
    const after = await reopened.api.getChat(id);
    expect(after.messages).toEqual(before.messages);
    expect(after.activeLeafId).toBe(first.assistantMessageId);
    expect(after.settings).toEqual(before.settings);
    expect(after.messages).toHaveLength(7);
    // Finished answers are searchable.
    const word = a2.content.match(/\p{L}{3,}/u)![0];
    expect((await reopened.api.searchMessages(word)).map((h) => h.messageId)).toContain(second.assistantMessageId);
  });

  it('queues answers of different chats on the engine, stops a queued one at once, and interrupts running ones on close', async () => {
    const dataDir = join(tempDir(), 'home');
    const gate = engineGate();
    const backend = testBackend({ dataDir, engineLauncher: gate.launcher });
    const { api } = backend;
    const model = addModel(backend);
    const chat = async (maxTokens: number) =>
      (await api.createChat({ modelId: model.id, preset: 'precise', sampling: { maxTokens }, contextSize: 256 })).chat
        .id;
    const [a, b, c] = [await chat(40), await chat(16), await chat(16)];

    // A is held at its third token while B and C are asked and B is stopped: still being written, however fast the engine.
    const aHeld = gate.holdAfter(3);
    const first = await api.sendMessage(a, 'Once upon a time');
    await aHeld;
    expect(deltas(backend, first.assistantMessageId).length).toBeGreaterThan(0);
    const queued = await api.sendMessage(b, 'The dog');
    const next = await api.sendMessage(c, 'The cat');
    // B waits behind A on the one engine: stopping it ends it at once, with nothing written.
    await api.stopGeneration(b);
    expect((await api.getChat(b)).messages[1]).toMatchObject({
      id: queued.assistantMessageId,
      status: 'stopped',
      content: '',
      stats: null,
    });
    expect((await api.getChat(a)).messages[1]!.status).toBe('streaming');
    gate.release();
    // C runs once A is done.
    const [doneA, doneC] = await Promise.all([
      answered(backend, first.assistantMessageId),
      answered(backend, next.assistantMessageId),
    ]);
    expect([doneA.status, doneC.status]).toEqual(['done', 'done']);
    expect(doneC.content).toBe(deltas(backend, next.assistantMessageId).join(''));
    expect(doneC.content.length).toBeGreaterThan(0);

    // Closing the back end mid-answer: the answer is cancelled and kept as interrupted.
    await api.updateChatSettings(a, { sampling: { maxTokens: 300 } });
    const longHeld = gate.holdAfter(3);
    const long = await api.sendMessage(a, 'Tell me more');
    await longHeld;
    expect(deltas(backend, long.assistantMessageId).length).toBeGreaterThan(0);
    // Held until the close has cancelled it: the answer cannot end first.
    gate.releaseOnCancel();
    await backend.close();

    const reopened = testBackend({ dataDir });
    const interrupted = (await reopened.api.getChat(a)).messages.find((m) => m.id === long.assistantMessageId)!;
    expect(interrupted).toMatchObject({
      status: 'interrupted',
      content: deltas(backend, long.assistantMessageId).join(''),
    });
    expect(interrupted.stats?.stopReason).toBe('cancelled');
  });
});
