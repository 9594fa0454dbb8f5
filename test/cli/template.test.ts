import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GgufType, type GgufKv } from '../../src-main/core/gguf/values';
import { openGguf, writeGguf } from '../../src-main/node/gguf-io';
import { gufo } from '../support/cli';
import { REPO_ROOT, STORIES_260K } from '../support/paths';
import { tempDir } from '../support/temp';

/** A tensor-less GGUF with stories260K's tokenizer (SentencePiece, <s> = 1, </s> = 2) and, optionally, a chat template. */
async function vocabFile(dir: string, name: string, chatTemplate: string | null): Promise<string> {
  const path = join(dir, name);
  const { gguf, file } = openGguf(STORIES_260K);
  try {
    const kvs: GgufKv[] = gguf.kvs.filter((kv) => kv.key === 'general.architecture' || kv.key.startsWith('tokenizer.'));
    if (chatTemplate !== null) kvs.push({ key: 'tokenizer.chat_template', type: GgufType.STRING, value: chatTemplate });
    await writeGguf(path, { kvs, tensors: [] }, () => []);
  } finally {
    file.close();
  }
  return path;
}

const CHATML = readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates/chatml.jinja'), 'utf8');
const LLAMA2 = readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates/llama-2.jinja'), 'utf8');

const MESSAGES = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello.' },
  { role: 'user', content: 'Tell a story' },
];

function messagesFile(dir: string, value: unknown = MESSAGES): string {
  const path = join(dir, 'msgs.json');
  writeFileSync(path, JSON.stringify(value));
  return path;
}

describe('gufo template', () => {
  it('documents itself', () => {
    const r = gufo(['template', '--help']);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/gufo template <model> --messages msgs\.json/);
    expect(gufo(['--help']).stdout).toMatch(/template\s+render a conversation/);
  });

  it("prints the prompt rendered with the file's template, exactly, and says which template on stderr", async () => {
    const dir = tempDir();
    const path = await vocabFile(dir, 'chatml.gguf', CHATML);
    const r = gufo(['template', path, '--messages', messagesFile(dir)]);
    expect(r.stderr).toBe("template: the file's own (chatml)\n");
    expect(r.status).toBe(0);
    expect(r.stdout).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n' +
        '<|im_start|>user\nTell a story<|im_end|>\n<|im_start|>assistant\n',
    );
    const bare = gufo(['template', path, '--messages', messagesFile(dir), '--no-generation-prompt']);
    expect(bare.stdout).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n' +
        '<|im_start|>user\nTell a story<|im_end|>\n',
    );
  });

  it('--json gives { prompt, template: { source, name }, stop }, with BOS and EOS from the vocabulary', async () => {
    const dir = tempDir();
    const path = await vocabFile(dir, 'llama2.gguf', LLAMA2);
    const r = gufo(['template', path, '--messages', messagesFile(dir), '--json']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      prompt: '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Tell a story [/INST]',
      template: { source: 'file', name: 'llama2' },
      stop: [2],
    });
  });

  it('a file without a template gets a built-in one, and says so', async () => {
    const dir = tempDir();
    const path = await vocabFile(dir, 'none.gguf', null);
    const r = gufo(['template', path, '--messages', messagesFile(dir), '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      prompt: '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Tell a story [/INST]',
      template: { source: 'builtin', name: 'llama2' },
      stop: [2],
    });
    const human = gufo(['template', STORIES_260K, '--messages', messagesFile(dir)]);
    expect(human.status).toBe(0);
    expect(human.stderr).toBe('template: built-in "llama2" (the file has no tokenizer.chat_template)\n');
    expect(human.stdout).toBe(
      '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello. </s><s>[INST] Tell a story [/INST]',
    );
  });

  it('takes { messages, tools } and --no-thinking', async () => {
    const dir = tempDir();
    const template =
      "{% if tools %}[{{ tools | map(attribute='name') | join(',') }}]{% endif %}{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}" +
      '{% if enable_thinking is defined and enable_thinking is false %}(no thinking){% endif %}';
    const path = await vocabFile(dir, 'custom.gguf', template);
    const msgs = messagesFile(dir, {
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ name: 'a' }, { name: 'b' }],
    });
    const r = gufo(['template', path, '--messages', msgs, '--no-thinking', '--json']);
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      prompt: '[a,b]user:Hi;(no thinking)',
      template: { source: 'file', name: 'custom' },
    });
    const toolsPath = join(dir, 'tools.json');
    writeFileSync(toolsPath, JSON.stringify([{ name: 'c' }]));
    expect(
      (
        JSON.parse(gufo(['template', path, '--messages', msgs, '--tools', toolsPath, '--json']).stdout) as {
          prompt: string;
        }
      ).prompt,
    ).toBe('[c]user:Hi;');
  });

  it('fails in one line naming the file and the problem', async () => {
    const dir = tempDir();
    const gemma2 = readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates/gemma-2.jinja'), 'utf8');
    const path = await vocabFile(dir, 'gemma2.gguf', gemma2);
    const refused = gufo(['template', path, '--messages', messagesFile(dir)]);
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `gufo: ${path}: the chat template rejected the conversation: System role not supported\n`,
    );

    const broken = await vocabFile(dir, 'broken.gguf', '{% for m in messages %}');
    expect(gufo(['template', broken, '--messages', messagesFile(dir)]).stderr).toMatch(
      new RegExp(`^gufo: ${broken.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: the chat template does not parse: .*\n$`),
    );

    const badJson = join(dir, 'bad.json');
    writeFileSync(badJson, '[{"role": "user", "content": ');
    expect(gufo(['template', path, '--messages', badJson]).stderr).toMatch(
      new RegExp(`^gufo: ${badJson}: not valid JSON: `),
    );
    writeFileSync(badJson, '[{"content": "no role"}]');
    expect(gufo(['template', path, '--messages', badJson]).stderr).toBe(
      `gufo: ${badJson}: message 0 has no "role" string\n`,
    );
    expect(gufo(['template', path]).stderr).toBe('gufo: --messages msgs.json is required (see gufo template --help)\n');
    expect(gufo(['template', '--messages', badJson]).stderr).toBe(
      'gufo: expected exactly one file (see gufo template --help)\n',
    );
  });
});
