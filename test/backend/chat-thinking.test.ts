/**
 * A chat's thinking switch (ChatSettings.thinking), with the real engine (SwiftShader) and
 * stories260K given a DeepSeek-R1-like template (fixtures/thinker.ts): the switch reaches the
 * template as enable_thinking, and an answer whose prompt opened the reasoning block keeps the
 * opening tag, so the chat shows it as thinking folded above the answer.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { testBackend } from '../support/backend';
import { tempDir } from '../support/temp';
import { addModel, answered } from './fixtures/chat-backend';
import { writeThinker } from './fixtures/thinker';

describe("a chat's thinking switch", { timeout: 180_000 }, () => {
  it('reaches the template: on or the default opens the reasoning block, kept in the answer; off closes it in the prompt', async () => {
    const path = join(tempDir(), 'thinker.gguf');
    await writeThinker(path);
    const backend = testBackend();
    const { api } = backend;
    const model = addModel(backend, path);
    const ask = async (thinking?: boolean | null) => {
      const chat = await api.createChat({
        modelId: model.id,
        preset: 'precise',
        sampling: { maxTokens: 8 },
        ...(thinking === undefined ? {} : { thinking }),
      });
      expect(chat.settings.thinking).toBe(thinking ?? null);
      const { assistantMessageId } = await api.sendMessage(chat.chat.id, 'Tell me about Lily.');
      const answer = await answered(backend, assistantMessageId);
      expect(answer.error).toBeNull();
      return { content: answer.content, promptTokens: answer.stats!.promptTokens, id: chat.chat.id };
    };

    const byDefault = await ask();
    expect(byDefault.content.startsWith('<think>\n')).toBe(true);
    expect(byDefault.content.length).toBeGreaterThan('<think>\n'.length);
    expect(await ask(true)).toMatchObject({ content: byDefault.content, promptTokens: byDefault.promptTokens });

    const off = await ask(false);
    expect(off.content).not.toContain('<think>');
    // The closed block "<think>\n\n</think>\n\n" is longer than the opening "<think>\n".
    expect(off.promptTokens).toBeGreaterThan(byDefault.promptTokens);

    // Turned on in a chat's settings; anything but true, false or null is refused, naming the setting.
    expect((await api.updateChatSettings(off.id, { thinking: true })).settings.thinking).toBe(true);
    await expect(api.updateChatSettings(off.id, { thinking: 'yes' as never })).rejects.toThrow(
      `chat setting "thinking" must be true, false, or null for the template's default (got "yes")`,
    );
  });
});
