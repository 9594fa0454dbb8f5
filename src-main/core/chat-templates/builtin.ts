/**
 * Chat templates for files that carry none (no `tokenizer.chat_template`): one per prompt family,
 * written as Jinja so they render through the same path as a file's own template.
 *
 * Each follows its family's published format for ordinary conversations (system, user, assistant)
 * but is lenient where the originals raise: a system message where the family has none is folded
 * into the first user turn, and tool results are shown to the model as a user-side turn.
 */

import { architectureTraits } from '../architectures';

export type BuiltinTemplateName = 'chatml' | 'llama2' | 'llama3' | 'mistral' | 'gemma' | 'phi3' | 'deepseek';

/** `arguments` of a tool call as JSON text, whether the caller gave a string or an object. */
const ARGUMENTS = `(tool_call.arguments if tool_call.arguments is string else tool_call.arguments | tojson)`;

/** ChatML (`<|im_start|>role\n...<|im_end|>\n`), with Hermes-style tool calls as Qwen 2.5 writes them. */
const CHATML = [
  `{%- if tools %}`,
  `{{- '<|im_start|>system\\n' }}`,
  `{%- if messages and messages[0].role == 'system' %}{{- messages[0].content + '\\n\\n' }}{%- endif %}`,
  `{{- '# Tools\\n\\nYou may call one or more functions to assist with the user query.\\n\\nYou are provided with function signatures within <tools></tools> XML tags:\\n<tools>' }}`,
  `{%- for tool in tools %}{{- '\\n' + (tool | tojson) }}{%- endfor %}`,
  `{{- '\\n</tools>\\n\\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\\n<tool_call>\\n{"name": <function-name>, "arguments": <args-json-object>}\\n</tool_call><|im_end|>\\n' }}`,
  `{%- endif %}`,
  `{%- for message in messages %}`,
  `{%- if message.role == 'system' and tools and loop.first %}`,
  `{%- elif message.role == 'assistant' and message.tool_calls %}`,
  `{{- '<|im_start|>assistant' }}{%- if message.content %}{{- '\\n' + message.content }}{%- endif %}`,
  `{%- for tool_call in message.tool_calls %}{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}`,
  `{{- '\\n<tool_call>\\n{"name": "' + tool_call.name + '", "arguments": ' + ${ARGUMENTS} + '}\\n</tool_call>' }}`,
  `{%- endfor %}{{- '<|im_end|>\\n' }}`,
  `{%- elif message.role == 'tool' %}`,
  `{%- if loop.first or messages[loop.index0 - 1].role != 'tool' %}{{- '<|im_start|>user' }}{%- endif %}`,
  `{{- '\\n<tool_response>\\n' + message.content + '\\n</tool_response>' }}`,
  `{%- if loop.last or messages[loop.index0 + 1].role != 'tool' %}{{- '<|im_end|>\\n' }}{%- endif %}`,
  `{%- else %}{{- '<|im_start|>' + message.role + '\\n' + (message.content or '') + '<|im_end|>\\n' }}`,
  `{%- endif %}`,
  `{%- endfor %}`,
  `{%- if add_generation_prompt %}{{- '<|im_start|>assistant\\n' }}{%- endif %}`,
].join('');

/** Llama 2 chat: `<s>[INST] <<SYS>>\n...\n<</SYS>>\n\nuser [/INST] answer </s>`, as Meta's template writes it. */
const LLAMA2 = [
  `{%- if messages and messages[0].role == 'system' %}{%- set system_message = messages[0].content %}{%- set loop_messages = messages[1:] %}`,
  `{%- else %}{%- set system_message = '' %}{%- set loop_messages = messages %}{%- endif %}`,
  `{%- for message in loop_messages %}`,
  `{%- if message.role == 'assistant' %}{{- ' ' + (message.content or '') | trim + ' ' + eos_token }}`,
  `{%- else %}`,
  `{%- set content = (message.content or '') | trim %}`,
  `{%- if loop.first and system_message %}{%- set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + content %}{%- endif %}`,
  `{{- bos_token + '[INST] ' + content + ' [/INST]' }}`,
  `{%- endif %}`,
  `{%- endfor %}`,
].join('');

/** Llama 3: `<|start_header_id|>role<|end_header_id|>\n\n...<|eot_id|>`; tool results in the ipython role. */
const LLAMA3 = [
  `{{- bos_token }}`,
  `{%- if tools %}`,
  `{{- '<|start_header_id|>system<|end_header_id|>\\n\\nEnvironment: ipython\\n\\n' }}`,
  `{{- 'You have access to the following functions. To call a function, please respond with JSON for a function call. ' }}`,
  `{{- 'Respond in the format {"name": function name, "parameters": dictionary of argument name and its value}. Do not use variables.\\n\\n' }}`,
  `{%- for tool in tools %}{{- (tool | tojson(indent=4)) + '\\n\\n' }}{%- endfor %}`,
  `{%- if messages and messages[0].role == 'system' %}{{- messages[0].content | trim }}{%- endif %}`,
  `{{- '<|eot_id|>' }}`,
  `{%- endif %}`,
  `{%- for message in messages %}`,
  `{%- if message.role == 'system' and tools and loop.first %}`,
  `{%- elif message.role == 'assistant' and message.tool_calls %}`,
  `{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}`,
  `{%- for tool_call in message.tool_calls %}{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}`,
  `{{- '{"name": "' + tool_call.name + '", "parameters": ' + ${ARGUMENTS} + '}' }}`,
  `{%- endfor %}{{- '<|eot_id|>' }}`,
  `{%- else %}`,
  `{{- '<|start_header_id|>' + ('ipython' if message.role == 'tool' else message.role) + '<|end_header_id|>\\n\\n' + (message.content or '') | trim + '<|eot_id|>' }}`,
  `{%- endif %}`,
  `{%- endfor %}`,
  `{%- if add_generation_prompt %}{{- '<|start_header_id|>assistant<|end_header_id|>\\n\\n' }}{%- endif %}`,
].join('');

/**
 * Mistral Instruct (v3 tokenizer): `<s>[INST] user[/INST] answer</s>`; as in Mistral 7B v0.3's
 * template, a system message goes before the last user turn.
 */
const MISTRAL = [
  `{{- bos_token }}`,
  `{%- if messages and messages[0].role == 'system' %}{%- set system_message = messages[0].content %}{%- set loop_messages = messages[1:] %}`,
  `{%- else %}{%- set system_message = '' %}{%- set loop_messages = messages %}{%- endif %}`,
  `{%- set ns = namespace(last_user=-1) %}`,
  `{%- for message in loop_messages %}{%- if message.role != 'assistant' %}{%- set ns.last_user = loop.index0 %}{%- endif %}{%- endfor %}`,
  `{%- for message in loop_messages %}`,
  `{%- if message.role == 'assistant' %}{{- ' ' + (message.content or '') | trim + eos_token }}`,
  `{%- else %}`,
  `{%- set content = message.content or '' %}`,
  `{%- if loop.index0 == ns.last_user and system_message %}{%- set content = system_message + '\\n\\n' + content %}{%- endif %}`,
  `{{- '[INST] ' + content + '[/INST]' }}`,
  `{%- endif %}`,
  `{%- endfor %}`,
].join('');

/** Gemma: `<start_of_turn>user\n...<end_of_turn>\n<start_of_turn>model\n`; a system message opens the first user turn. */
const GEMMA = [
  `{{- bos_token }}`,
  `{%- if messages and messages[0].role == 'system' %}{%- set first_user_prefix = messages[0].content + '\\n\\n' %}{%- set loop_messages = messages[1:] %}`,
  `{%- else %}{%- set first_user_prefix = '' %}{%- set loop_messages = messages %}{%- endif %}`,
  `{%- for message in loop_messages %}`,
  `{{- '<start_of_turn>' + ('model' if message.role == 'assistant' else 'user') + '\\n' + (first_user_prefix if loop.first else '') }}`,
  `{{- (message.content or '') | trim + '<end_of_turn>\\n' }}`,
  `{%- endfor %}`,
  `{%- if add_generation_prompt %}{{- '<start_of_turn>model\\n' }}{%- endif %}`,
].join('');

/** Phi-3: `<|user|>\n...<|end|>\n<|assistant|>\n`. */
const PHI3 = [
  `{%- for message in messages %}`,
  `{%- if message.role == 'system' %}{%- if message.content %}{{- '<|system|>\\n' + message.content + '<|end|>\\n' }}{%- endif %}`,
  `{%- elif message.role == 'assistant' %}{{- '<|assistant|>\\n' + (message.content or '') + '<|end|>\\n' }}`,
  `{%- else %}{{- '<|user|>\\n' + (message.content or '') + '<|end|>\\n' }}`,
  `{%- endif %}`,
  `{%- endfor %}`,
  `{%- if add_generation_prompt %}{{- '<|assistant|>\\n' }}{%- endif %}`,
].join('');

/** DeepSeek V3 / R1: `<｜begin▁of▁sentence｜>system<｜User｜>...<｜Assistant｜>...<｜end▁of▁sentence｜>`. */
const DEEPSEEK = [
  `{{- bos_token }}`,
  `{%- for message in messages %}{%- if message.role == 'system' %}{{- message.content }}{%- endif %}{%- endfor %}`,
  `{%- for message in messages %}`,
  `{%- if message.role == 'assistant' %}`,
  `{%- set content = message.content or '' %}`,
  `{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1] %}{%- endif %}`,
  `{{- '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' }}`,
  `{%- elif message.role != 'system' %}{{- '<｜User｜>' + (message.content or '') }}`,
  `{%- endif %}`,
  `{%- endfor %}`,
  `{%- if add_generation_prompt %}{{- '<｜Assistant｜>' }}{%- endif %}`,
].join('');

export const BUILTIN_TEMPLATES: Readonly<Record<BuiltinTemplateName, string>> = {
  chatml: CHATML,
  llama2: LLAMA2,
  llama3: LLAMA3,
  mistral: MISTRAL,
  gemma: GEMMA,
  phi3: PHI3,
  deepseek: DEEPSEEK,
};

/** Each family's name as a person reads it (in the chat's prompt format choice). */
export const BUILTIN_TEMPLATE_LABELS: Readonly<Record<BuiltinTemplateName, string>> = {
  chatml: 'ChatML',
  llama2: 'Llama 2',
  llama3: 'Llama 3',
  mistral: 'Mistral',
  gemma: 'Gemma',
  phi3: 'Phi-3',
  deepseek: 'DeepSeek',
};

export function isBuiltinTemplateName(name: string): name is BuiltinTemplateName {
  return Object.hasOwn(BUILTIN_TEMPLATES, name);
}

/** What a built-in choice needs to know about the file. */
export interface BuiltinChoiceInput {
  /** general.architecture, or null when unknown. */
  readonly architecture: string | null;
  /** tokenizer.ggml.model: "llama" (SentencePiece), "gpt2" (BPE), ... */
  readonly tokenizerModel: string;
  /** Whether the vocabulary holds this exact token. */
  hasToken(text: string): boolean;
}

/**
 * The built-in template for a file without one, in the spirit of llama.cpp's fallbacks: the
 * family whose turn markers the vocabulary holds, then the architecture, then Llama 2 for a
 * SentencePiece Llama, and ChatML for everything else.
 */
export function chooseBuiltinTemplate(input: BuiltinChoiceInput): BuiltinTemplateName {
  const has = (...texts: string[]) => texts.every((t) => input.hasToken(t));
  if (has('<|im_start|>', '<|im_end|>')) return 'chatml';
  if (has('<|start_header_id|>', '<|end_header_id|>', '<|eot_id|>')) return 'llama3';
  if (has('<start_of_turn>', '<end_of_turn>')) return 'gemma';
  if (has('<｜User｜>', '<｜Assistant｜>')) return 'deepseek';
  if (has('<|user|>', '<|assistant|>', '<|end|>')) return 'phi3';
  if (has('[INST]', '[/INST]')) return 'mistral';
  const arch = input.architecture ?? '';
  const family =
    architectureTraits(arch)?.chatTemplate ?? FAMILY_BY_PREFIX.find(([prefix]) => prefix.test(arch))?.[1] ?? 'chatml';
  // The Llama 2 format only suits a SentencePiece Llama vocabulary.
  return family === 'llama2' && input.tokenizerModel !== 'llama' ? 'chatml' : family;
}

/**
 * Families of the architectures the engine does not run, by name (an entry in
 * core/architectures.ts answers for those it runs); no name: a Llama 2 era file.
 */
const FAMILY_BY_PREFIX: readonly [RegExp, BuiltinTemplateName][] = [
  [/^gemma/, 'gemma'],
  [/^(qwen|internlm|olmo|smollm|granite)/, 'chatml'],
  [/^deepseek/, 'deepseek'],
  [/^(mistral)?$/, 'llama2'],
];
