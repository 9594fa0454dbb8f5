/**
 * Chat prompts from a GGUF file's `tokenizer.chat_template` (Jinja, as in the model's
 * tokenizer_config.json), rendered with @huggingface/jinja the way transformers and llama.cpp
 * render it: `messages`, `add_generation_prompt`, `bos_token`/`eos_token` as the vocabulary spells
 * them, `tools`, `enable_thinking`, `raise_exception` and `strftime_now`.
 *
 * A file without a template gets a built-in one chosen from its vocabulary and architecture
 * (chat-templates/builtin.ts), and the result says which was used.
 */
import { Environment, Interpreter, Template } from '@huggingface/jinja';
import { BUILTIN_TEMPLATES, chooseBuiltinTemplate } from './chat-templates/builtin';
import { HARMONY_TEMPLATE, splitThinking } from './harmony';
import { THINK_CLOSE, THINK_OPEN } from './reasoning';
import type { StringArray } from './gguf/values';
import { tokenLookup } from './tokenizer/vocab';

export type ChatRole = 'system' | 'user' | 'assistant' | 'tool';

/** One call the assistant made, in the OpenAI shape the common templates read. */
export interface ChatToolCall {
  id?: string;
  type?: 'function';
  function: {
    name: string;
    /** An object, or its JSON text; each template gets the form it renders (see renderChat). */
    arguments: Record<string, unknown> | string;
  };
}

export interface ChatMessage {
  /** system, user, assistant or tool; other roles go to the template as they are. */
  role: ChatRole | (string & {});
  /** Text; null for an assistant turn that only calls tools. Multi-part content goes through unchanged. */
  content: string | null | readonly unknown[];
  tool_calls?: readonly ChatToolCall[];
  /** For role "tool": the id of the call this answers. */
  tool_call_id?: string;
  /** For role "tool": the function's name (some templates print it). */
  name?: string;
  /** Reasoning of an earlier assistant turn (Qwen 3 and others read it). */
  reasoning_content?: string;
  /** The same for gpt-oss's template; renderChat fills it from a <think> block of the content. */
  thinking?: string;
}

/** A function the model may call (OpenAI shape: { type: "function", function: { name, description, parameters } }). */
export type ChatTool = Record<string, unknown>;

/** The part of a vocabulary that chat templates need; tokenizer/vocab.ts's Vocab satisfies it. */
export interface ChatVocab {
  /** tokenizer.ggml.model */
  readonly model: string;
  readonly tokens: StringArray;
  /** tokenizer.ggml.token_type, when known (3 = control, 4 = user-defined). */
  readonly types?: ArrayLike<number> | null;
  readonly bos: number | null;
  readonly eos: number | null;
  readonly eot?: number | null;
  readonly eom?: number | null;
  readonly chatTemplate: string | null;
}

export interface ChatTemplateOptions {
  /** End with the header of an assistant turn, for the model to write it (default true). */
  addGenerationPrompt?: boolean;
  /** Qwen 3 and others: false asks for no reasoning. Left out of the template when undefined. */
  enableThinking?: boolean;
  /** Functions the model may call; left out of the template when undefined. */
  tools?: readonly ChatTool[];
  /** general.architecture, for choosing a built-in template when the file has none. */
  architecture?: string | null;
  /** A template to use instead of the file's (source "file", name "custom" unless recognized). */
  template?: string;
  /** The time strftime_now reports (default: now). */
  now?: Date;
  /**
   * The tokenizer will add BOS itself: drop the template's own BOS text from the start, as
   * llama.cpp does, so the prompt does not begin with two.
   */
  addBos?: boolean;
  /** The tokenizer will add EOS itself: drop the template's EOS text from the end. */
  addEos?: boolean;
  /** More variables for the template; they override the ones above. */
  variables?: Record<string, unknown>;
}

export interface ChatTemplateInfo {
  /** "file": the file's tokenizer.chat_template (or options.template); "builtin": chosen here. */
  source: 'file' | 'builtin';
  /** The prompt family ("chatml", "llama3", ...), "custom" when a file's template is not recognized. */
  name: string;
}

export interface RenderedChat {
  prompt: string;
  template: ChatTemplateInfo;
}

/** A chat template that does not parse, fails, or rejects the conversation; the message says which and why. */
export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError';
}

/** The template a file would use, without rendering anything. */
export function chatTemplateFor(
  vocab: ChatVocab,
  options: Pick<ChatTemplateOptions, 'architecture' | 'template'> = {},
): ChatTemplateInfo & { text: string } {
  const own = options.template ?? vocab.chatTemplate;
  if (own !== null && own !== undefined && own.trim() !== '') {
    return { source: 'file', name: detectTemplateFamily(own), text: own };
  }
  const name = chooseBuiltinTemplate({
    architecture: options.architecture ?? null,
    tokenizerModel: vocab.model,
    hasToken: (text) => tokenId(vocab, text) !== undefined,
  });
  return { source: 'builtin', name, text: BUILTIN_TEMPLATES[name] };
}

/**
 * Renders `messages` into the prompt text the model continues.
 *
 * Tool-call arguments reach each template in the form it renders, as llama.cpp arranges it:
 * templates that print `arguments | tojson` get objects (strings are parsed), templates that
 * concatenate them get JSON text, templates that take both get what the caller gave. An
 * assistant turn with null content gets "" when the template cannot take null.
 */
export function renderChat(
  vocab: ChatVocab,
  messages: readonly ChatMessage[],
  options: ChatTemplateOptions = {},
): RenderedChat {
  const chosen = chatTemplateFor(vocab, options);
  const where = chosen.source === 'builtin' ? `the built-in "${chosen.name}" chat template` : 'the chat template';
  const compiled = compile(chosen.text, where);
  const bosToken = tokenText(vocab, vocab.bos);
  const eosToken = tokenText(vocab, vocab.eos);
  const now = options.now ?? new Date();

  const base: Record<string, unknown> = { bos_token: bosToken, eos_token: eosToken };
  // Probing costs two small renders (once per template), so only conversations with tool calls or null content pay it.
  const needsProbe = messages.some((m) => m.tool_calls !== undefined || m.content === null || m.content === undefined);
  const caps = needsProbe ? capabilities(compiled, base, now) : null;
  const adapted = chosen.name === HARMONY_TEMPLATE ? messages.map(withHarmonyThinking) : messages;
  const context: Record<string, unknown> = {
    ...base,
    messages: caps ? adapted.map((m) => adaptMessage(m, caps)) : adapted,
    add_generation_prompt: options.addGenerationPrompt ?? true,
  };
  if (options.tools !== undefined) context.tools = options.tools;
  if (options.enableThinking !== undefined) context.enable_thinking = options.enableThinking;
  Object.assign(context, options.variables);

  let prompt = run(compiled, context, now, where);
  if (options.addBos && bosToken !== '' && prompt.startsWith(bosToken)) prompt = prompt.slice(bosToken.length);
  if (options.addEos && eosToken !== '' && prompt.endsWith(eosToken)) prompt = prompt.slice(0, -eosToken.length);
  return { prompt, template: { source: chosen.source, name: chosen.name } };
}

/** gpt-oss's template takes an answer's reasoning in `thinking`, not as <think> text in its content. */
function withHarmonyThinking(message: ChatMessage): ChatMessage {
  if (message.role !== 'assistant' || typeof message.content !== 'string') return message;
  const { thinking, answer } = splitThinking(message.content);
  return thinking === null ? message : { ...message, content: answer, thinking };
}

/**
 * Tokens that end the model's turn: EOS, EOT, EOM, and the end-of-turn markers of the prompt
 * families that the vocabulary holds (the strings llama.cpp treats as end of generation, plus a
 * few families' own markers when they are special tokens). Ascending ids, no repeats.
 */
export function stopTokenIds(vocab: ChatVocab): number[] {
  const stop = new Set<number>();
  for (const id of [vocab.eos, vocab.eot, vocab.eom]) if (id !== null && id !== undefined) stop.add(id);
  for (const text of LLAMA_CPP_EOG) {
    const id = tokenId(vocab, text);
    if (id !== undefined) stop.add(id);
  }
  for (const text of SPECIAL_END_OF_TURN) {
    const id = tokenId(vocab, text);
    if (id !== undefined && isSpecial(vocab, id)) stop.add(id);
  }
  return [...stop].sort((a, b) => a - b);
}

/** The token texts llama.cpp's vocabulary loader makes end-of-generation tokens (llama-vocab.cpp). */
const LLAMA_CPP_EOG = [
  '<|eot_id|>', // Llama 3
  '<|eom_id|>', // Llama 3.1 (tool call awaiting its result)
  '<|im_end|>', // ChatML (Qwen, ...)
  '<|end|>', // Phi-3
  '<|return|>', // gpt-oss
  '<|call|>', // gpt-oss
  '<end_of_turn>', // Gemma
  '<|endoftext|>', // GPT-2 family, Qwen, Phi
  '<EOT>', // CodeLlama infill
  '_<EOT>',
  '<|end_of_text|>', // Llama 3 base, Granite
  '<end_of_utterance>', // SmolVLM
  // Fill-in-the-middle padding, repository and file separators end generation too.
  '<|fim_pad|>',
  '<fim-pad>',
  '<fim_pad>',
  '<PAD>',
  '<|fim_repo|>',
  '<|repo_name|>',
  '<fim-repo>',
  '<REPO>',
  '<reponame>',
  '<|file_sep|>',
];

/** More families' end-of-turn markers, counted only when the vocabulary marks them special. */
const SPECIAL_END_OF_TURN = [
  '</s>', // Llama 2, Mistral
  '<｜end▁of▁sentence｜>', // DeepSeek
  '<|EOT|>', // DeepSeek Coder
  '<|END_OF_TURN_TOKEN|>', // Command-R
  '<|end_of_turn|>', // OpenChat
];

const CONTROL = 3;
const USER_DEFINED = 4;

function isSpecial(vocab: ChatVocab, id: number): boolean {
  const type = vocab.types?.[id];
  return type === undefined || type === CONTROL || type === USER_DEFINED;
}

function tokenText(vocab: ChatVocab, id: number | null): string {
  return id === null || id < 0 || id >= vocab.tokens.length ? '' : vocab.tokens.at(id);
}

/** The id of the token with this text (the last one, as llama.cpp's token_to_id), or undefined. */
function tokenId(vocab: ChatVocab, text: string): number | undefined {
  const id = tokenLookup(vocab).findText(text);
  return id < 0 ? undefined : id;
}

/**
 * The prompt family a template writes, from its turn markers (after llama.cpp's
 * llm_chat_detect_template); "custom" when none is recognized.
 */
export function detectTemplateFamily(template: string): string {
  const has = (...parts: string[]) => parts.every((p) => template.includes(p));
  if (has('<|channel|>')) return HARMONY_TEMPLATE;
  if (has('<|im_start|>', '<|im_sep|>')) return 'phi4';
  if (has('<|im_start|>')) return 'chatml';
  if (has('<|start_header_id|>', '<|end_header_id|>')) return 'llama3';
  if (has('<start_of_turn>')) return 'gemma';
  if (has('<｜Assistant｜>') || has('<｜User｜>')) return 'deepseek3';
  if (has("'Assistant: ' + message['content'] + eos_token")) return 'deepseek2';
  if (has('### Instruction:', '<|EOT|>')) return 'deepseek';
  if (has('<|START_OF_TURN_TOKEN|>')) return 'command-r';
  if (has('<|assistant|>', '<|end|>')) return 'phi3';
  if (has('[INST]')) {
    if (has('<<SYS>>')) return 'llama2';
    if (has('[SYSTEM_PROMPT]')) return 'mistral-v7';
    if (has('[AVAILABLE_TOOLS]') || has('[TOOL_CALLS]')) return 'mistral-v3';
    return 'mistral-v1';
  }
  if (has('<|user|>', '<|assistant|>')) return 'zephyr';
  return 'custom';
}

// ---------------------------------------------------------------------------------------------
// Rendering

interface Compiled {
  readonly template: Template;
  /** How tool calls reach this template; filled on first use. */
  caps?: Capabilities;
}

const compileCache = new Map<string, Compiled>();
const COMPILE_CACHE_SIZE = 16;

/** Throws a ChatTemplateError naming `where` when `source` is not a Jinja template Gufo can run. */
export function checkChatTemplate(source: string, where: string): void {
  compile(source, where);
}

function compile(source: string, where: string): Compiled {
  let compiled = compileCache.get(source);
  if (compiled) return compiled;
  let template: Template;
  try {
    template = new Template(source);
  } catch (err) {
    throw new ChatTemplateError(`${where} does not parse: ${describe(err)}`);
  }
  rewritePythonStrip(template.parsed);
  compiled = { template };
  if (compileCache.size >= COMPILE_CACHE_SIZE) compileCache.delete(compileCache.keys().next().value!);
  compileCache.set(source, compiled);
  return compiled;
}

/** raise_exception(message) in a template: the template refused the conversation. */
class TemplateRaised extends Error {}

function run(compiled: Compiled, context: Record<string, unknown>, now: Date, where: string): string {
  const env = new Environment();
  for (const [name, value] of Object.entries(globals(now))) env.set(name, value);
  for (const [name, value] of Object.entries(context)) {
    if (value === undefined) continue;
    if (env.variables.has(name)) env.variables.delete(name);
    env.set(name, value);
  }
  try {
    const result = new Interpreter(env).run(compiled.template.parsed);
    // A template renders to a string; any other value is shown as JavaScript would.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    return String(result.value ?? '');
  } catch (err) {
    if (err instanceof TemplateRaised)
      throw new ChatTemplateError(`${where} rejected the conversation: ${err.message}`);
    throw new ChatTemplateError(`${where} failed to render: ${describe(err)}`);
  }
}

function describe(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  // @huggingface/jinja reports an unclosed block as a property read of undefined.
  if (/Cannot read properties of undefined/.test(message))
    return `unexpected end of template (an unclosed block?): ${message}`;
  return message;
}

/** The functions and constants every chat template may use (as transformers and llama.cpp define them). */
function globals(now: Date): Record<string, unknown> {
  return {
    true: true,
    false: false,
    none: null,
    True: true,
    False: false,
    None: null,
    raise_exception: (message: unknown) => {
      throw new TemplateRaised(String(message));
    },
    strftime_now: (format: unknown) => strftime(now, String(format)),
    range: (start: number, stop?: number, step = 1) => {
      if (stop === undefined) [start, stop] = [0, start];
      if (step === 0) throw new Error('range() arg 3 must not be zero');
      const out: number[] = [];
      for (let i = start; step > 0 ? i < stop : i > stop; i += step) out.push(i);
      return out;
    },
    // Python's str.strip/lstrip/rstrip with a set of characters (see rewritePythonStrip).
    [STRIP_FN.strip]: (s: unknown, chars: unknown) => pythonStrip(s, chars, true, true),
    [STRIP_FN.lstrip]: (s: unknown, chars: unknown) => pythonStrip(s, chars, true, false),
    [STRIP_FN.rstrip]: (s: unknown, chars: unknown) => pythonStrip(s, chars, false, true),
  };
}

const STRIP_FN = { strip: '__gufo_strip', lstrip: '__gufo_lstrip', rstrip: '__gufo_rstrip' } as const;

function pythonStrip(s: unknown, chars: unknown, left: boolean, right: boolean): string {
  if (typeof s !== 'string') throw new Error(`strip() of a ${s === null ? 'none' : typeof s} value`);
  if (chars === null || chars === undefined) return left && right ? s.trim() : left ? s.trimStart() : s.trimEnd();
  // Python would refuse a non-string; a template's chars are text in practice, taken as such.
  // eslint-disable-next-line @typescript-eslint/no-base-to-string
  const set = new Set(Array.from(String(chars)));
  const cps = Array.from(s);
  let start = 0;
  let end = cps.length;
  if (left) while (start < end && set.has(cps[start]!)) start++;
  if (right) while (end > start && set.has(cps[end - 1]!)) end--;
  return cps.slice(start, end).join('');
}

/** What rewritePythonStrip reads of @huggingface/jinja's AST nodes, which it walks untyped. */
interface JinjaNode {
  type?: unknown;
  callee?: JinjaNode;
  property?: JinjaNode;
  object?: unknown;
  computed?: unknown;
  value?: unknown;
  args?: unknown;
}

/**
 * @huggingface/jinja's `s.strip('x')` ignores its argument and trims whitespace; Python (and the
 * templates: Qwen 3 writes `content.lstrip('\n')`) strips the given characters. Calls with an
 * argument are rewritten in the parsed template into calls of our own functions.
 */
function rewritePythonStrip(node: unknown): void {
  if (node === null || typeof node !== 'object') return;
  if (Array.isArray(node)) {
    for (const child of node as unknown[]) rewritePythonStrip(child);
    return;
  }
  const n = node as JinjaNode;
  if (n.type === 'CallExpression') {
    const callee = n.callee;
    const method = callee?.property?.value as string | undefined;
    if (
      callee?.type === 'MemberExpression' &&
      !callee.computed &&
      callee.property?.type === 'Identifier' &&
      method !== undefined &&
      Object.hasOwn(STRIP_FN, method) &&
      Array.isArray(n.args) &&
      n.args.length > 0
    ) {
      const Identifier = callee.property.constructor as new (name: string) => JinjaNode;
      n.args = [callee.object, ...(n.args as unknown[])];
      n.callee = new Identifier(STRIP_FN[method as keyof typeof STRIP_FN]);
    }
  }
  for (const value of Object.values(n)) rewritePythonStrip(value);
}

const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Python's strftime in the C locale (the fields chat templates use), local time. */
export function strftime(date: Date, format: string): string {
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const startOfYear = new Date(date.getFullYear(), 0, 1);
  const dayOfYear =
    Math.round(
      (new Date(date.getFullYear(), date.getMonth(), date.getDate()).getTime() - startOfYear.getTime()) / 86_400_000,
    ) + 1;
  return format.replace(/%([a-zA-Z%])/g, (whole, field: string) => {
    switch (field) {
      case 'Y':
        return String(date.getFullYear());
      case 'y':
        return pad(date.getFullYear() % 100);
      case 'm':
        return pad(date.getMonth() + 1);
      case 'd':
        return pad(date.getDate());
      case 'e':
        return String(date.getDate()).padStart(2, ' ');
      case 'b':
        return MONTHS[date.getMonth()]!.slice(0, 3);
      case 'B':
        return MONTHS[date.getMonth()]!;
      case 'a':
        return DAYS[date.getDay()]!.slice(0, 3);
      case 'A':
        return DAYS[date.getDay()]!;
      case 'H':
        return pad(date.getHours());
      case 'I':
        return pad(date.getHours() % 12 || 12);
      case 'p':
        return date.getHours() < 12 ? 'AM' : 'PM';
      case 'M':
        return pad(date.getMinutes());
      case 'S':
        return pad(date.getSeconds());
      case 'j':
        return pad(dayOfYear, 3);
      case '%':
        return '%';
      default:
        return whole;
    }
  });
}

// ---------------------------------------------------------------------------------------------
// Tool calls: which form of the arguments, and of null content, a template takes

interface Capabilities {
  /** Renders a tool call whose arguments are JSON text. */
  stringArguments: boolean;
  /** Renders a tool call whose arguments are an object. */
  objectArguments: boolean;
  /** Fails on an assistant turn with null content (so gets ""). */
  needsContent: boolean;
}

const NEEDLE = 'gufo_argument_needle';

/**
 * Renders a small conversation with one tool call in each form, as llama.cpp (minja) probes a
 * template's capabilities: a form works when the argument's key comes out as JSON.
 */
function capabilities(compiled: Compiled, base: Record<string, unknown>, now: Date): Capabilities {
  if (compiled.caps) return compiled.caps;
  const args = { [NEEDLE]: "print('Hello, World!')" };
  const attempt = (content: string | null, argumentsForm: unknown): 'ok' | 'ignored' | 'failed' => {
    const messages = [
      { role: 'user', content: 'Call the probe.' },
      {
        role: 'assistant',
        content,
        tool_calls: [{ id: 'call00001', type: 'function', function: { name: 'probe', arguments: argumentsForm } }],
      },
    ];
    try {
      const out = run(compiled, { ...base, messages, add_generation_prompt: false }, now, 'probe');
      return out.includes(`"${NEEDLE}":`) || out.includes(`'${NEEDLE}':`) ? 'ok' : 'ignored';
    } catch {
      return 'failed';
    }
  };
  let needsContent = false;
  let asString = attempt(null, JSON.stringify(args));
  let asObject = attempt(null, args);
  if (asString === 'failed' && asObject === 'failed') {
    const withText = [attempt('', JSON.stringify(args)), attempt('', args)];
    if (withText.some((r) => r !== 'failed')) {
      needsContent = true;
      [asString, asObject] = withText as ['ok' | 'ignored' | 'failed', 'ok' | 'ignored' | 'failed'];
    }
  }
  compiled.caps = { stringArguments: asString === 'ok', objectArguments: asObject === 'ok', needsContent };
  return compiled.caps;
}

function adaptMessage(message: ChatMessage, caps: Capabilities): Record<string, unknown> {
  const out: Record<string, unknown> = { ...message };
  if (message.tool_calls) {
    out.tool_calls = message.tool_calls.map((call) => {
      const args = call.function.arguments;
      let adapted: unknown = args;
      if (typeof args === 'string' && caps.objectArguments && !caps.stringArguments) {
        try {
          adapted = JSON.parse(args);
        } catch {
          adapted = args;
        }
      } else if (typeof args !== 'string' && caps.stringArguments && !caps.objectArguments) {
        adapted = JSON.stringify(args);
      }
      return { ...call, function: { ...call.function, arguments: adapted } };
    });
  }
  if ((message.content === null || message.content === undefined) && caps.needsContent) out.content = '';
  return out;
}

/**
 * Whether a chat template writes reasoning: gpt-oss's (its analysis channel), one with a thinking
 * switch (`enable_thinking`), or one with both tags (Ollama's test). /api/show's `thinking`
 * capability and the APIs' reasoning split both read this.
 */
export function templateThinks(template: { name: string; text: string }): boolean {
  const { text } = template;
  return (
    template.name === HARMONY_TEMPLATE ||
    /\benable_thinking\b/.test(text) ||
    (text.includes(THINK_OPEN) && text.includes(THINK_CLOSE))
  );
}
