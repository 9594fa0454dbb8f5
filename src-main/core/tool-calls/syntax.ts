/**
 * How each model family writes a tool call, after llama.cpp's chat parsers (common/chat.cpp):
 *   hermes   (Hermes, Qwen 2.5, Qwen 3, and the fallback): <tool_call>{"name": …, "arguments": {…}}</tool_call>, one or more
 *   llama3   (Llama 3.1/3.2): {"name": …, "parameters": {…}}, optionally after <|python_tag|>
 *   mistral  (Mistral v3 and Nemo): [TOOL_CALLS][{"name": …, "arguments": {…}}, …]
 *   harmony  (gpt-oss): a message addressed to=functions.NAME whose body is the arguments
 * The family is read from the chat template's text, as chat-template.ts reads its prompt family.
 */
import { HARMONY_CALL_MARKER, HARMONY_TEMPLATE } from '../harmony';
import { readArguments, readCallObject, readToken, skipSpace, type CallsRead, type PartialCall } from './call-scan';

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
  /** The calls in `text` (which starts at a marker) as far as they are written. */
  read(text: string): CallsRead;
}

/** The calls in `text` (which starts at a marker), or null when it is not whole, well-formed calls. */
export function parseToolCalls(syntax: ToolCallSyntax, text: string): ParsedToolCall[] | null {
  const { calls, whole } = syntax.read(text);
  return whole ? calls.map((c) => ({ name: c.name!, arguments: c.arguments })) : null;
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
    // Each call a JSON object between the tags; the last closing tag may be missing (generation ended at EOS).
    read: (text) => readCallList(text, 0, { open: '<tool_call>', close: '</tool_call>' }),
  },
  llama3: {
    family: 'llama3',
    markers: ['<|python_tag|>', '{"name"', '{ "name"', '{"type"', '{ "type"'],
    // Several calls, when a model writes them, are separated by ";" (llama.cpp reads them so).
    read: (text) => readCallList(text, text.startsWith(PYTHON_TAG) ? PYTHON_TAG.length : 0, { separator: ';' }),
  },
  mistral: {
    family: 'mistral',
    markers: ['[TOOL_CALLS]'],
    read(text) {
      const at = skipSpace(text, '[TOOL_CALLS]'.length);
      if (at >= text.length) return { calls: [], whole: false };
      if (text[at] !== '[') return { calls: [], whole: false };
      return readCallList(text, at + 1, { separator: ',', close: ']' });
    },
  },
  harmony: {
    family: 'harmony',
    markers: [HARMONY_CALL_MARKER],
    read(text) {
      const m = /^to=functions\.([^\s<]+)(?=[\s<])[^<]*/.exec(text);
      if (!m) return { calls: [], whole: false };
      const call: PartialCall = { name: m[1]!, arguments: '', done: false };
      const body = m[0].length;
      if (readToken(text, body, MESSAGE) === 'whole') Object.assign(call, readArguments(text.slice(body + MESSAGE.length)));
      return { calls: [call], whole: call.done };
    },
  },
};

const PYTHON_TAG = '<|python_tag|>';
const MESSAGE = '<|message|>';

/**
 * Call objects from `at` on: each inside `open` … `close` tags (the last close may be missing), or
 * separated by `separator` and ended by `close` (Mistral's list) or by the text's end.
 */
function readCallList(text: string, at: number, form: { open?: string; close?: string; separator?: string }): CallsRead {
  const calls: PartialCall[] = [];
  const stop = (whole: boolean): CallsRead => ({ calls, whole: whole && calls.length > 0 && calls.every((c) => c.done) });
  let i = at;
  for (;;) {
    i = skipSpace(text, i);
    if (calls.length > 0 && form.separator !== undefined) {
      if (i >= text.length) return stop(form.close === undefined);
      if (form.close !== undefined && text[i] === form.close) return stop(skipSpace(text, i + 1) === text.length);
      if (text[i] !== form.separator) return stop(false);
      i = skipSpace(text, i + 1);
    }
    if (i >= text.length) return stop(form.open !== undefined && calls.length > 0);
    if (form.open !== undefined) {
      if (readToken(text, i, form.open) !== 'whole') return stop(false);
      i = skipSpace(text, i + form.open.length);
      if (i >= text.length) return stop(false);
    }
    if (text[i] !== '{') return stop(false);
    const { call, end } = readCallObject(text, i);
    calls.push(call);
    if (end < 0) return stop(false);
    i = skipSpace(text, end);
    if (form.open !== undefined && form.close !== undefined && i < text.length) {
      if (readToken(text, i, form.close) !== 'whole') return stop(false);
      i += form.close.length;
    }
  }
}
