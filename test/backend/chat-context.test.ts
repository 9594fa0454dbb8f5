/**
 * Answers that reach the end of a small context, on the real engine (WebGPU on SwiftShader) with
 * stories260K in plain completion: "stop" ends the answer there, the truncating policies go on
 * from a prompt that leaves out the oldest messages, and say so in the answer's stats.
 */
import { describe, expect, it } from 'vitest';
import type { MessageRole } from '../../src-preload/api';
import { openModelText } from '../../src-main/backend/chat/prompt';
import { ChatStore } from '../../src-main/node/store/chats';
import { testBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { addModel, answered } from './fixtures/chat-backend';

const EARLIER = ['Tom had a red ball.', 'He liked it.', 'Sue had a big dog.', 'The dog was happy.'];

/** A chat in plain completion with EARLIER as its first messages (user, assistant, ...), then `question` asked. */
async function ask(
  contextSize: number,
  maxTokens: number,
  overflow: 'stop' | 'truncate-middle' | 'rolling-window',
  earlier: string[],
  question: string,
) {
  const backend = testBackend();
  const model = addModel(backend);
  const store = new ChatStore(backend.context.db);
  const id = (
    await backend.api.createChat({
      modelId: model.id,
      preset: 'precise',
      sampling: { maxTokens },
      contextSize,
      contextOverflow: overflow,
    })
  ).chat.id;
  let parentId: number | null = null;
  earlier.forEach((content, i) => {
    const role: MessageRole = i % 2 === 0 ? 'user' : 'assistant';
    parentId = store.addMessage({ chatId: id, parentId, role, content, status: 'done' }).id;
  });
  store.setActiveLeaf(id, parentId);
  const { assistantMessageId } = await backend.api.sendMessage(id, question);
  return { backend, id, answer: await answered(backend, assistantMessageId) };
}

/** The greedy text of stories260K after `prompt` (plain completion), `n` tokens at most. */
async function greedy(
  backend: ReturnType<typeof testBackend>,
  prompt: string,
  n: number,
  ctx: number,
): Promise<string> {
  const text = openModelText(STORIES_260K);
  try {
    const ids = text.tokenizer.tokenize(prompt, { addBos: true, parseSpecial: false });
    const result = await backend.context.engines.withModel({ path: STORIES_260K, ctx }, ({ host }) =>
      host.generate({ prompt: ids, maxTokens: n, stop: [...text.vocab.eog] }),
    );
    const decoder = text.answerDecoder(false);
    return result.ids.map((id) => decoder.push(id)).join('') + decoder.flush();
  } finally {
    text.close();
  }
}

describe('answers at the end of the context', { timeout: 240_000 }, () => {
  it('"stop" ends the answer where the context ends, with the reason "context"', async () => {
    const { backend, answer } = await ask(48, 1024, 'stop', [], 'Once upon a time');
    expect(answer.status).toBe('done');
    expect(answer.stats).toMatchObject({ stopReason: 'context' });
    expect(answer.stats!.promptTokens + answer.stats!.generatedTokens).toBe(48);
    expect(answer.stats!.leftOutMessages).toBeUndefined();
    expect(answer.stats!.contextSize).toBe(48);
    // The model's own greedy text up to the end of the context: nothing was left out or added.
    expect(answer.content).toBe(await greedy(backend, 'Once upon a time', answer.stats!.generatedTokens, 48));
  });

  it('an answer whose length limit falls where the context ends names the context, the limit it reached', async () => {
    const { answer } = await ask(48, 43, 'stop', [], 'Once upon a time');
    expect(answer.stats!.promptTokens).toBe(5);
    expect(answer.stats).toMatchObject({ generatedTokens: 43, stopReason: 'context' });
  });

  it('a stop while the prompt is read reports the tokens read, not the whole prompt', async () => {
    const backend = testBackend();
    const text = openModelText(STORIES_260K);
    try {
      const prompt = text.tokenizer.tokenize(EARLIER.join(' ').repeat(10), { addBos: true, parseSpecial: false });
      expect(prompt.length).toBeGreaterThan(200);
      const result = await backend.context.engines.withModel({ path: STORIES_260K, ctx: 512 }, ({ host }) => {
        const stop = new AbortController();
        const generated = host.generate({ prompt, maxTokens: 8 }, { signal: stop.signal });
        // The cancel follows the request at once: the engine sees it after its first batch of the prompt.
        stop.abort();
        return generated;
      });
      expect(result).toMatchObject({ ids: [], stopReason: 'cancelled' });
      expect(result.timings.cachedTokens).toBe(0);
      expect(result.timings.promptTokens).toBeGreaterThan(0);
      expect(result.timings.promptTokens).toBeLessThan(prompt.length);
    } finally {
      text.close();
      await backend.close();
    }
  });

  it.each(['truncate-middle', 'rolling-window'] as const)(
    'with %s, an answer that fills the context goes on without the oldest messages, and says how many',
    async (overflow) => {
      const { backend, id, answer } = await ask(96, 80, overflow, EARLIER, 'Once upon a time');
      expect(answer.status).toBe('done');
      const { generatedTokens, stopReason, leftOutMessages, contextSize } = answer.stats!;
      // More tokens than the first prompt left room for: the answer went on.
      expect(generatedTokens).toBe(80);
      expect(stopReason).toBe('length');
      // The answer so far outgrows all but the question: both exchanges before it are left out.
      expect({ leftOutMessages, contextSize }).toEqual({ leftOutMessages: 4, contextSize: 96 });
      // Its first part is the model's greedy text for the whole conversation up to the end of the context.
      const whole = `${EARLIER.join('\n')}\nOnce upon a time`;
      const firstPart = await greedy(backend, whole, 200, 96);
      expect(firstPart.length).toBeGreaterThan(40);
      expect(answer.content.length).toBeGreaterThan(firstPart.length);
      expect(answer.content.startsWith(firstPart)).toBe(true);
      // The stats are stored with the answer: a reload shows them.
      const reloaded = (await backend.api.getChat(id)).messages.find((m) => m.id === answer.id)!;
      expect(reloaded.stats).toMatchObject({ leftOutMessages: 4, contextSize: 96 });
    },
  );
});
