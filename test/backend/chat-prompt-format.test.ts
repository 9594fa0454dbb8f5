/**
 * A chat's prompt format: plain completion for a base model (no chat template), a built-in
 * family chosen instead, the model's own template where it has one, and the choice kept in SQLite.
 * Answers on the engine are in chat-generation.test.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openModelText, planPrompt, type PromptTurn } from '../../src-main/backend/chat/prompt';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { testBackend } from '../support/backend';
import { STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';
import { addModel } from './fixtures/chat-backend';

const SYSTEM = 'You tell stories.';
const BRANCH: PromptTurn[] = [
  { role: 'user', content: 'Once upon a time' },
  { role: 'assistant', content: ', there was a girl.' },
  { role: 'user', content: 'She found <s> a ball' },
];
const LIMITS = { contextSize: 512, maxTokens: 16, overflow: 'rolling-window' } as const;

/** stories260K's vocabulary with `chatTemplate` added: a model with its own template. */
async function withTemplate(chatTemplate: string): Promise<string> {
  const path = join(tempDir(), 'templated.gguf');
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const kvs: GgufKv[] = gguf.kvs.filter((kv) => kv.key.startsWith('general.') || kv.key.startsWith('tokenizer.'));
    kvs.push({ key: 'tokenizer.chat_template', type: GgufType.STRING, value: chatTemplate });
    await writeGguf(path, { kvs, tensors: [] }, () => []);
  } finally {
    file.close();
  }
  return path;
}

describe('prompt rendering by format', () => {
  it('plain completion is the system prompt, then the messages as written, special-token texts kept as text', () => {
    const text = openModelText(STORIES_260K);
    try {
      expect(text.hasChatTemplate).toBe(false);
      const plan = planPrompt(text, SYSTEM, BRANCH, LIMITS, 'completion');
      // The answer continues the user's text; the next message starts a line.
      const written = 'You tell stories.\nOnce upon a time, there was a girl.\nShe found <s> a ball';
      expect(plan.ids).toEqual(text.tokenizer.tokenize(written, { addBos: true, parseSpecial: false }));
      expect(plan.ids.filter((id) => id === text.vocab.bos)).toHaveLength(1);
      expect(text.tokenizer.detokenize(plan.ids.slice(1))).toBe(written);
    } finally {
      text.close();
    }
  });

  it('a chosen built-in family renders its turns, whatever the file would get by default', () => {
    const text = openModelText(STORIES_260K);
    try {
      const chatml =
        '<|im_start|>system\nYou tell stories.<|im_end|>\n<|im_start|>user\nOnce upon a time<|im_end|>\n' +
        '<|im_start|>assistant\n, there was a girl.<|im_end|>\n<|im_start|>user\nShe found <s> a ball<|im_end|>\n<|im_start|>assistant\n';
      expect(planPrompt(text, SYSTEM, BRANCH, LIMITS, 'chatml').ids).toEqual(
        text.tokenizer.tokenize(chatml, { addBos: true, parseSpecial: true }),
      );
      const llama2 =
        '[INST] <<SYS>>\nYou tell stories.\n<</SYS>>\n\nOnce upon a time [/INST] , there was a girl. </s><s>[INST] She found <s> a ball [/INST]';
      expect(planPrompt(text, SYSTEM, BRANCH, LIMITS, 'llama2').ids).toEqual(
        text.tokenizer.tokenize(llama2, { addBos: true, parseSpecial: true }),
      );
    } finally {
      text.close();
    }
  });
});

describe('the chat setting', () => {
  it('a model without a template chats in plain completion by default, says so, and offers the built-in families', async () => {
    const backend = testBackend();
    const model = addModel(backend);
    const chat = await backend.api.createChat({ modelId: model.id });
    expect(chat.settings.promptFormat).toBe('completion');
    expect(chat.promptFormats!.modelHasTemplate).toBe(false);
    const values = chat.promptFormats!.choices.map((c) => c.value);
    expect(values).toEqual(['completion', 'chatml', 'llama2', 'llama3', 'mistral', 'gemma', 'phi3', 'deepseek']);
    expect(chat.promptFormats!.choices[0]).toEqual({ value: 'completion', label: 'Plain completion' });

    const id = chat.chat.id;
    await expect(backend.api.updateChatSettings(id, { promptFormat: 'model' })).rejects.toThrow(
      'chat setting "promptFormat" cannot be "model": the model file has no chat template (tokenizer.chat_template) (got "model")',
    );
    await expect(backend.api.updateChatSettings(id, { promptFormat: 'alpaca' })).rejects.toThrow(
      'chat setting "promptFormat" must be one of "completion", "chatml", "llama2", "llama3", "mistral", "gemma", "phi3", "deepseek" (got "alpaca")',
    );
    await expect(backend.api.createChat({ modelId: model.id, promptFormat: 'model' })).rejects.toThrow(
      'chat setting "promptFormat" cannot be "model"',
    );
    expect((await backend.api.getChat(id)).settings.promptFormat).toBe('completion');
  });

  it('keeps the chosen format and answer length across a restart', async () => {
    const dataDir = join(tempDir(), 'home');
    const first = testBackend({ dataDir });
    const id = (await first.api.createChat({ modelId: addModel(first).id })).chat.id;
    const changed = await first.api.updateChatSettings(id, { promptFormat: 'llama2', sampling: { maxTokens: 16 } });
    expect(changed.settings).toMatchObject({ promptFormat: 'llama2', sampling: { maxTokens: 16 } });
    first.context.db.close();

    const second = testBackend({ dataDir });
    expect((await second.api.getChat(id)).settings).toMatchObject({
      promptFormat: 'llama2',
      sampling: { maxTokens: 16 },
    });
  });

  it("a chat made before formats existed takes its model's default", async () => {
    const backend = testBackend();
    const id = (await backend.api.createChat({ modelId: addModel(backend).id, promptFormat: 'gemma' })).chat.id;
    backend.context.db.prepare('UPDATE chats SET prompt_format = NULL WHERE id = ?').run(id);
    expect((await backend.api.getChat(id)).settings.promptFormat).toBe('completion');
  });

  it('a model with its own template uses it by default, and lists it first', async () => {
    const backend = testBackend();
    const model = addModel(
      backend,
      await withTemplate('{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}'),
    );
    const chat = await backend.api.createChat({ modelId: model.id });
    expect(chat.settings.promptFormat).toBe('model');
    expect(chat.promptFormats!.modelHasTemplate).toBe(true);
    expect(chat.promptFormats!.choices.slice(0, 2).map((c) => c.value)).toEqual(['model', 'completion']);
    const plain = await backend.api.updateChatSettings(chat.chat.id, { promptFormat: 'completion' });
    expect(plain.settings.promptFormat).toBe('completion');
  });
});
