/**
 * gpt-oss's harmony channels shown as <think> and the answer, and read back into its template's
 * `thinking` field. The token-level test uses stories260K's vocabulary with a few of its tokens
 * turned into harmony's control tokens, as gpt-oss's vocabulary has them.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderChat, type ChatVocab } from '../../src-main/core/chat-template';
import { GgufType, StringArray, type GgufArray, type GgufKv } from '../../src-main/core/gguf/values';
import { answerDecoder, HarmonyRewriter, HARMONY_TEMPLATE, splitThinking } from '../../src-main/core/harmony';
import { createTokenizer, readVocab } from '../../src-main/core/tokenizer/index';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { REPO_ROOT } from '../support/paths';
import { tempDir } from '../support/temp';
import { tokenizerKvs } from '../support/test-models';

const ANSWER =
  '<|channel|>analysis<|message|>The user greets me. Reply kindly.<|end|>' +
  '<|start|>assistant<|channel|>final<|message|>Hello! How can I help?';

function rewrite(pieces: readonly string[]): string {
  const r = new HarmonyRewriter();
  return pieces.map((p) => r.push(p)).join('') + r.flush();
}

describe('HarmonyRewriter', () => {
  it('shows the analysis channel as a think block and the final channel as the answer', () => {
    const pieces = ANSWER.split(/(<\|[a-z]+\|>)/).filter((p) => p !== '');
    expect(rewrite(pieces)).toBe('<think>The user greets me. Reply kindly.</think>Hello! How can I help?');
  });

  it('gives the same text however the stream is cut, markers split included', () => {
    const whole = rewrite([ANSWER]);
    for (const size of [1, 2, 3, 5, 7]) {
      const pieces: string[] = [];
      for (let i = 0; i < ANSWER.length; i += size) pieces.push(ANSWER.slice(i, i + size));
      expect(rewrite(pieces), `pieces of ${size}`).toBe(whole);
    }
  });

  it('joins consecutive reasoning messages, and keeps reasoning cut off open', () => {
    const two =
      '<|channel|>analysis<|message|>First.<|end|><|start|>assistant<|channel|>analysis<|message|>Second.<|end|>';
    expect(rewrite([two + '<|start|>assistant<|channel|>final<|message|>Done.'])).toBe(
      '<think>First.\n\nSecond.</think>Done.',
    );
    expect(rewrite(['<|channel|>analysis<|message|>Still think'])).toBe('<think>Still think');
  });

  it('passes an answer with no reasoning, and text with no header, as they are', () => {
    expect(rewrite(['<|channel|>final<|message|>Just this.'])).toBe('Just this.');
    expect(rewrite(['plain text, no channels'])).toBe('plain text, no channels');
  });

  it('ends a message at an end-of-generation marker, which it does not show', () => {
    expect(rewrite(['<|channel|>final<|message|>Answer.<|return|>'])).toBe('Answer.');
  });
});

describe('splitThinking', () => {
  it('splits a think block from the answer, or leaves a message without one', () => {
    expect(splitThinking('<think>Why.</think>\n\nBecause.')).toEqual({ thinking: 'Why.', answer: 'Because.' });
    expect(splitThinking('<think>Unfinished')).toEqual({ thinking: 'Unfinished', answer: '' });
    expect(splitThinking('No thinking.')).toEqual({ thinking: null, answer: 'No thinking.' });
  });
});

/** stories260K's vocabulary with ids 400.. made harmony's control tokens. */
async function harmonyVocab() {
  const markers = ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|return|>'];
  const kvs = tokenizerKvs().map((kv): GgufKv => {
    const array = kv.value as GgufArray;
    if (kv.key === 'tokenizer.ggml.tokens' && array.itemType === GgufType.STRING) {
      const tokens = Array.from({ length: array.items.length }, (_, i) => array.items.at(i));
      markers.forEach((m, k) => (tokens[400 + k] = m));
      return { ...kv, value: { itemType: GgufType.STRING, items: StringArray.fromStrings(tokens) } };
    }
    if (kv.key === 'tokenizer.ggml.token_type' && array.itemType === GgufType.INT32) {
      const types = Int32Array.from(array.items as Int32Array);
      markers.forEach((_, k) => (types[400 + k] = 3)); // CONTROL
      return { ...kv, value: { itemType: GgufType.INT32, items: types } };
    }
    return kv;
  });
  const path = join(tempDir(), 'harmony-vocab.gguf');
  await writeGguf(
    path,
    { kvs: [{ key: 'general.architecture', type: GgufType.STRING, value: 'gpt-oss' }, ...kvs], tensors: [] },
    () => {
      throw new Error('no tensors');
    },
  );
  const { gguf, file } = openGguf(path);
  const vocab = readVocab(gguf);
  return {
    vocab,
    tokenizer: createTokenizer(vocab),
    marker: (m: string) => 400 + markers.indexOf(m),
    close: () => file.close(),
  };
}

describe('answerDecoder', () => {
  it("turns a harmony model's ids into think and answer; other models' decoders are unchanged", async () => {
    const { tokenizer, marker, close } = await harmonyVocab();
    try {
      const words = (text: string) => tokenizer.tokenize(text, { addBos: false });
      const ids = [
        marker('<|channel|>'),
        ...words('analysis'),
        marker('<|message|>'),
        ...words('The cat sat'),
        marker('<|end|>'),
        marker('<|start|>'),
        ...words('assistant'),
        marker('<|channel|>'),
        ...words('final'),
        marker('<|message|>'),
        ...words('Once upon a time'),
      ];
      const decode = (template: string) => {
        const d = answerDecoder(tokenizer, template, true);
        return ids.map((id) => d.push(id)).join('') + d.flush();
      };
      expect(decode(HARMONY_TEMPLATE)).toBe('<think>The cat sat</think>Once upon a time');
      // Without the rewrite the channels show as llama.cpp renders them: <|channel|>, <|message|> and
      // <|start|> always (its vocabulary marks them user-defined for gpt-oss), <|end|> never.
      const plain = decode('chatml');
      expect(plain).toContain(
        '<|channel|> analysis<|message|> The cat sat<|start|> assistant<|channel|> final<|message|> Once upon a time',
      );
      expect(plain).not.toContain('<|end|>');
    } finally {
      close();
    }
  });
});

describe("gpt-oss's template", () => {
  it('gets an earlier answer without its think block, which it drops as OpenAI specifies', () => {
    const template = readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates/gpt-oss.jinja'), 'utf8');
    const vocab: ChatVocab = {
      model: 'gpt2',
      tokens: StringArray.fromStrings(['<|startoftext|>', '<|return|>']),
      bos: 0,
      eos: 1,
      chatTemplate: template,
    };
    const messages = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>Greeting.</think>Hello!' },
      { role: 'user', content: 'More?' },
    ];
    const { prompt, template: info } = renderChat(vocab, messages, { now: new Date(2024, 6, 26) });
    expect(info.name).toBe(HARMONY_TEMPLATE);
    expect(prompt).toContain('<|start|>assistant<|channel|>final<|message|>Hello!<|end|>');
    expect(prompt).not.toContain('Greeting.');
    expect(prompt).not.toContain('<think>');
  });
});
