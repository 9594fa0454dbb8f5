/**
 * How each model family writes a tool call, after llama.cpp's chat parsers (common/chat.cpp):
 *   hermes   (Hermes, Qwen 2.5, Qwen 3, and the fallback): <tool_call>{"name": …, "arguments": {…}}</tool_call>, one or more
 *   llama3   (Llama 3.1/3.2): {"name": …, "parameters": {…}}, optionally after <|python_tag|>
 *   mistral  (Mistral v3 and Nemo): [TOOL_CALLS][{"name": …, "arguments": {…}}, …]
 *   harmony  (gpt-oss): a message addressed to=functions.NAME whose body is the arguments
 * The family is read from the chat template's text, as chat-template.ts reads its prompt family.
 */
import { HARMONY_CALL_MARKER, HARMONY_TEMPLATE } from '../harmony';

/** One call as the model wrote it: the function's name and its arguments as JSON text. */
export interface ParsedToolCall {
  name: string;
  arguments: string;
}

export type ToolCallFamily = 'hermes' | 'llama3' | 'mistral' | 'harmony';

export interface ToolCallSyntax {
  readonly family: ToolCallFamily;
  /** Texts that begin the calls: text from the first one on is parsed as calls, not shown as content. */
  readonly markers: readonly string[];
  /** The calls in `text` (which starts at a marker), or null when it is not a well-formed call. */
  parse(text: string): ParsedToolCall[] | null;
}

/** The tool-call family of a chat template, and whether the template renders `tools` itself. */
export function toolCallFamily(template: string, promptFamily: string): { family: ToolCallFamily; rendersTools: boolean } {
  const rendersTools = /\btools\b/.test(template);
  if (promptFamily === HARMONY_TEMPLATE) return { family: 'harmony', rendersTools };
  if (template.includes('[TOOL_CALLS]')) return { family: 'mistral', rendersTools };
  if (template.includes('<tool_call>')) return { family: 'hermes', rendersTools };
  // Llama 3.1's template (and 3.2's) lists the functions and asks for a JSON object with "parameters".
  if (promptFamily === 'llama3' && rendersTools) return { family: 'llama3', rendersTools };
  // Any other template: tools described in the system prompt, calls asked for in Hermes's form (fallback.ts).
  return { family: 'hermes', rendersTools: false };
}

export const TOOL_CALL_SYNTAX: Record<ToolCallFamily, ToolCallSyntax> = {
  hermes: {
    family: 'hermes',
    markers: ['<tool_call>'],
    parse(text) {
      const calls: ParsedToolCall[] = [];
      // Each call is a JSON object between the tags; the last closing tag may be missing (generation ended at EOS).
      const re = /\s*<tool_call>\s*([\s\S]*?)\s*(?:<\/tool_call>|$)/y;
      let at = 0;
      while (at < text.length) {
        re.lastIndex = at;
        const m = re.exec(text);
        if (!m || m[0] === '') return text.slice(at).trim() === '' && calls.length > 0 ? calls : null;
        const call = namedCall(m[1]!, 'arguments');
        if (!call) return null;
        calls.push(call);
        at = re.lastIndex;
      }
      return calls.length > 0 ? calls : null;
    },
  },
  llama3: {
    family: 'llama3',
    markers: ['<|python_tag|>', '{"name"', '{ "name"', '{"type"', '{ "type"'],
    parse(text) {
      const body = text.startsWith('<|python_tag|>') ? text.slice('<|python_tag|>'.length) : text;
      // Several calls, when a model writes them, are separated by ";" (llama.cpp reads them so).
      const calls = splitTopLevel(body.trim(), ';').map((part) => namedCall(part, 'parameters'));
      return calls.length > 0 && calls.every((c) => c !== null) ? (calls as ParsedToolCall[]) : null;
    },
  },
  mistral: {
    family: 'mistral',
    markers: ['[TOOL_CALLS]'],
    parse(text) {
      const value = parseJson(text.slice('[TOOL_CALLS]'.length));
      if (!Array.isArray(value) || value.length === 0) return null;
      const calls = value.map((v) => callOf(v, 'arguments'));
      return calls.every((c) => c !== null) ? (calls as ParsedToolCall[]) : null;
    },
  },
  harmony: {
    family: 'harmony',
    markers: [HARMONY_CALL_MARKER],
    parse(text) {
      const m = /^to=functions\.([^\s<]+)[^<]*<\|message\|>([\s\S]*)$/.exec(text);
      if (!m) return null;
      const args = parseJson(m[2]!);
      return isObject(args) ? [{ name: m[1]!, arguments: JSON.stringify(args) }] : null;
    },
  },
};

/** A JSON object { name, <argumentsKey> } as a call (a llama3 call may say "arguments" too). */
function namedCall(json: string, argumentsKey: string): ParsedToolCall | null {
  return callOf(parseJson(json), argumentsKey);
}

function callOf(value: unknown, argumentsKey: string): ParsedToolCall | null {
  if (!isObject(value) || typeof value.name !== 'string' || value.name === '') return null;
  const args = value[argumentsKey] ?? value.arguments ?? value.parameters ?? {};
  if (!isObject(args)) return null;
  return { name: value.name, arguments: JSON.stringify(args) };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** `text` split at `separator` outside JSON strings, objects and arrays; empty parts dropped. */
function splitTopLevel(text: string, separator: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let inString = false;
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') depth--;
    else if (c === separator && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts.map((p) => p.trim()).filter((p) => p !== '');
}
