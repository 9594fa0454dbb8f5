/**
 * Chat templates in Ollama's Go-template form, for the prompt families Gufo recognizes.
 *
 * Ollama reads a GGUF's own chat template only when it is close to one of the templates it ships
 * (ChatML, Llama 2 and 3, Mistral, Gemma, Phi-3, Command-R, Zephyr); for anything else, and for
 * files without a template, it would prompt the model with the bare text. The Modelfile then
 * carries a TEMPLATE for the family Gufo chose (the one Gufo's own chat uses for the file).
 */

/** Families whose templates in a file Ollama detects by itself (chat-template.ts's family names). */
export const OLLAMA_DETECTS: ReadonlySet<string> = new Set([
  'chatml',
  'llama3',
  'llama2',
  'mistral-v1',
  'gemma',
  'phi3',
  'command-r',
  'zephyr',
]);

const CHATML = `{{ if .System }}<|im_start|>system
{{ .System }}<|im_end|>
{{ end }}{{ if .Prompt }}<|im_start|>user
{{ .Prompt }}<|im_end|>
{{ end }}<|im_start|>assistant
{{ .Response }}<|im_end|>
`;

const LLAMA3 = `{{ if .System }}<|start_header_id|>system<|end_header_id|>

{{ .System }}<|eot_id|>{{ end }}{{ if .Prompt }}<|start_header_id|>user<|end_header_id|>

{{ .Prompt }}<|eot_id|>{{ end }}<|start_header_id|>assistant<|end_header_id|>

{{ .Response }}<|eot_id|>`;

const LLAMA2 = `[INST] {{ if .System }}<<SYS>>
{{ .System }}
<</SYS>>

{{ end }}{{ .Prompt }} [/INST] {{ .Response }}`;

const MISTRAL = `[INST] {{ if .System }}{{ .System }}

{{ end }}{{ .Prompt }}[/INST] {{ .Response }}`;

const GEMMA = `<start_of_turn>user
{{ if .System }}{{ .System }}

{{ end }}{{ .Prompt }}<end_of_turn>
<start_of_turn>model
{{ .Response }}<end_of_turn>
`;

const PHI3 = `{{ if .System }}<|system|>
{{ .System }}<|end|>
{{ end }}{{ if .Prompt }}<|user|>
{{ .Prompt }}<|end|>
{{ end }}<|assistant|>
{{ .Response }}<|end|>
`;

const PHI4 = `{{ if .System }}<|im_start|>system<|im_sep|>{{ .System }}<|im_end|>{{ end }}{{ if .Prompt }}<|im_start|>user<|im_sep|>{{ .Prompt }}<|im_end|>{{ end }}<|im_start|>assistant<|im_sep|>{{ .Response }}<|im_end|>`;

const DEEPSEEK = `{{ if .System }}{{ .System }}{{ end }}{{ if .Prompt }}<｜User｜>{{ .Prompt }}{{ end }}<｜Assistant｜>{{ .Response }}<｜end▁of▁sentence｜>`;

/** By family name, as chat-template.ts names detected families and built-in templates. */
const BY_FAMILY: Readonly<Record<string, string>> = {
  chatml: CHATML,
  llama3: LLAMA3,
  llama2: LLAMA2,
  mistral: MISTRAL,
  'mistral-v1': MISTRAL,
  'mistral-v3': MISTRAL,
  'mistral-v7': MISTRAL,
  gemma: GEMMA,
  phi3: PHI3,
  phi4: PHI4,
  deepseek: DEEPSEEK,
  deepseek3: DEEPSEEK,
};

export function ollamaTemplateFor(family: string): string | null {
  return BY_FAMILY[family] ?? null;
}
