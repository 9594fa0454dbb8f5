import { readFileSync } from 'node:fs';
import { ChatTemplateError, renderChat, stopTokenIds, type ChatMessage, type ChatTool } from '../../core/chat-template';
import { readVocab } from '../../core/tokenizer/vocab';
import { openGguf } from '../../node/gguf-io';
import { fileProblem } from '../file-errors';
import { CliError, log, printJson, type Command } from '../command';

const HELP = `Usage: gufo template <model> --messages msgs.json [--tools tools.json]
                     [--no-generation-prompt] [--no-thinking] [--json]

Renders a conversation into the prompt text the model reads, with the file's own chat template
(tokenizer.chat_template) or, when the file has none, a built-in template chosen from its
vocabulary and architecture (said on stderr). The prompt goes to stdout exactly as rendered.

Options:
  --messages FILE          the conversation, JSON: an array of messages
                           [{ "role": "system" | "user" | "assistant" | "tool", "content": "...",
                              "tool_calls"?: [...], "tool_call_id"?: "..." }]
                           or an object { "messages": [...], "tools"?: [...] }
  --tools FILE             functions the model may call, JSON array (OpenAI shape)
  --no-generation-prompt   end after the last message, without the assistant's header
  --no-thinking            enable_thinking = false (Qwen 3 and other reasoning templates)
  --json                   one JSON document: { "prompt", "template": { "source": "file" | "builtin",
                           "name" }, "stop": [token ids that end the model's turn] }
`;

function readJson(path: string, what: string): unknown {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`cannot read ${what} ${path}: ${fileProblem(err)}`);
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new CliError(`${path}: not valid JSON: ${(err as Error).message}`);
  }
}

function checkMessages(value: unknown, path: string): ChatMessage[] {
  if (!Array.isArray(value)) throw new CliError(`${path}: expected an array of messages (or { "messages": [...] })`);
  value.forEach((m, i) => {
    if (m === null || typeof m !== 'object' || Array.isArray(m))
      throw new CliError(`${path}: message ${i} is not an object`);
    const { role, content } = m as Record<string, unknown>;
    if (typeof role !== 'string') throw new CliError(`${path}: message ${i} has no "role" string`);
    if (content !== undefined && content !== null && typeof content !== 'string' && !Array.isArray(content)) {
      throw new CliError(`${path}: message ${i} has a "content" that is neither a string, an array nor null`);
    }
  });
  return value as ChatMessage[];
}

function checkTools(value: unknown, path: string): ChatTool[] {
  if (!Array.isArray(value) || value.some((t) => t === null || typeof t !== 'object' || Array.isArray(t))) {
    throw new CliError(`${path}: expected "tools" to be an array of objects`);
  }
  return value as ChatTool[];
}

export const templateCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    messages: { type: 'string' },
    tools: { type: 'string' },
    'no-generation-prompt': { type: 'boolean' },
    'no-thinking': { type: 'boolean' },
    json: { type: 'boolean' },
  },
  run(args) {
    const [path, ...extra] = args.positionals;
    if (!path || extra.length > 0) throw new CliError('expected exactly one file (see gufo template --help)');
    const messagesPath = args.values.messages;
    if (typeof messagesPath !== 'string')
      throw new CliError('--messages msgs.json is required (see gufo template --help)');

    const input = readJson(messagesPath, 'messages file');
    let messages: ChatMessage[];
    let tools: ChatTool[] | undefined;
    if (input !== null && typeof input === 'object' && !Array.isArray(input)) {
      const doc = input as Record<string, unknown>;
      messages = checkMessages(doc.messages, messagesPath);
      if (doc.tools !== undefined) tools = checkTools(doc.tools, messagesPath);
    } else {
      messages = checkMessages(input, messagesPath);
    }
    if (typeof args.values.tools === 'string')
      tools = checkTools(readJson(args.values.tools, 'tools file'), args.values.tools);

    const { gguf, file } = openGguf(path);
    try {
      const vocab = readVocab(gguf);
      let rendered;
      try {
        rendered = renderChat(vocab, messages, {
          addGenerationPrompt: !args.values['no-generation-prompt'],
          enableThinking: args.values['no-thinking'] ? false : undefined,
          tools,
          architecture: gguf.getString('general.architecture') ?? null,
        });
      } catch (err) {
        if (err instanceof ChatTemplateError) throw new CliError(`${path}: ${err.message}`);
        throw err;
      }
      if (args.values.json) {
        printJson({ prompt: rendered.prompt, template: rendered.template, stop: stopTokenIds(vocab) });
        return;
      }
      log(
        rendered.template.source === 'file'
          ? `template: the file's own (${rendered.template.name})`
          : `template: built-in "${rendered.template.name}" (the file has no tokenizer.chat_template)`,
      );
      process.stdout.write(rendered.prompt);
    } finally {
      file.close();
    }
  },
};
