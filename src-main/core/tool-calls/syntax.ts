/**
 * How each model family writes a tool call, after llama.cpp's chat parsers (common/chat.cpp):
 *   hermes   (Hermes, Qwen 2.5, Qwen 3, and the fallback): <tool_call>{"name": …, "arguments": {…}}</tool_call>, one or more
 *   llama3   (Llama 3.1/3.2): {"name": …, "parameters": {…}}, optionally after <|python_tag|>
 *   mistral  (Mistral v3 and Nemo): [TOOL_CALLS][{"name": …, "arguments": {…}}, …]
 *   mistral-v11 (Magistral, Mistral Small 3.2, Devstral): [TOOL_CALLS]NAME[ARGS]{…} for each call,
 *            optionally [TOOL_CALLS]NAME[CALL_ID]ID[ARGS]{…}; either Mistral form is read for both
 *   harmony  (gpt-oss): a message addressed to=functions.NAME whose body is the arguments
 * The family is read from the chat template's text, as chat-template.ts reads its prompt family.
 */
import { HARMONY_CALL_MARKER, HARMONY_TEMPLATE } from '../harmony';
import {
  readArguments,
  readArgumentsAt,
  readCallObject,
  readToken,
  skipSpace,
  type CallsRead,
  type PartialCall,
} from './call-scan';

/** One call as the model wrote it: the function's name and its arguments as JSON text. */
export interface ParsedToolCall {
  name: string;
  arguments: string;
}

export type ToolCallFamily = 'hermes' | 'llama3' | 'mistral' | 'mistral-v11' | 'harmony';

export interface ToolCallSyntax {
  readonly family: ToolCallFamily;
  /** Texts that begin the calls: text from the first one on is parsed as calls, not shown as content. */
  readonly markers: readonly string[];
  /** Control tokens inside a call, which the decoder must show for the call to be read (Mistral v11's [ARGS]). */
  readonly innerTokens: readonly string[];
  /** The calls in `text` (which starts at a marker) as far as they are written. */
  read(text: string): CallsRead;
}

const PYTHON_TAG = '<|python_tag|>';
const TOOL_CALLS = '[TOOL_CALLS]';
const ARGS = '[ARGS]';
const CALL_ID = '[CALL_ID]';
const MESSAGE = '<|message|>';

/** The calls in `text` (which starts at a marker), or null when it is not whole, well-formed calls. */
export function parseToolCalls(syntax: ToolCallSyntax, text: string): ParsedToolCall[] | null {
  const { calls, whole } = syntax.read(text);
  return whole ? calls.map((c) => ({ name: c.name!, arguments: c.arguments })) : null;
}

/** The tool-call family of a chat template, and whether the template renders `tools` itself. */
export function toolCallFamily(
  template: string,
  promptFamily: string,
): { family: ToolCallFamily; rendersTools: boolean } {
  const rendersTools = /\btools\b/.test(template);
  if (promptFamily === HARMONY_TEMPLATE) return { family: 'harmony', rendersTools };
  // Newer Mistral templates write each call as [TOOL_CALLS]NAME[ARGS]{…}.
  if (template.includes('[TOOL_CALLS]'))
    return { family: template.includes(ARGS) ? 'mistral-v11' : 'mistral', rendersTools };
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
    innerTokens: [],
    // Each call a JSON object between the tags; the last closing tag may be missing (generation ended at EOS).
    read: (text) => readCallList(text, 0, { open: '<tool_call>', close: '</tool_call>' }),
  },
  llama3: {
    family: 'llama3',
    markers: ['<|python_tag|>', '{"name"', '{ "name"', '{"type"', '{ "type"'],
    innerTokens: [],
    // Several calls, when a model writes them, are separated by ";" (llama.cpp reads them so).
    read: (text) => readCallList(text, text.startsWith(PYTHON_TAG) ? PYTHON_TAG.length : 0, { separator: ';' }),
  },
  mistral: { family: 'mistral', markers: [TOOL_CALLS], innerTokens: [], read: readMistralCalls },
  'mistral-v11': { family: 'mistral-v11', markers: [TOOL_CALLS], innerTokens: [ARGS, CALL_ID], read: readMistralCalls },
  harmony: {
    family: 'harmony',
    markers: [HARMONY_CALL_MARKER],
    innerTokens: [],
    read(text) {
      const m = /^to=functions\.([^\s<]+)(?=[\s<])[^<]*/.exec(text);
      if (!m) return { calls: [], whole: false };
      const call: PartialCall = { name: m[1]!, arguments: '', done: false };
      const body = m[0].length;
      if (readToken(text, body, MESSAGE) === 'whole')
        Object.assign(call, readArguments(text.slice(body + MESSAGE.length)));
      return { calls: [call], whole: call.done };
    },
  },
};

/**
 * Call objects from `at` on: each inside `open` … `close` tags (the last close may be missing), or
 * separated by `separator` and ended by `close` (Mistral's list) or by the text's end.
 */
function readCallList(
  text: string,
  at: number,
  form: { open?: string; close?: string; separator?: string },
): CallsRead {
  const calls: PartialCall[] = [];
  const stop = (whole: boolean): CallsRead => ({
    calls,
    whole: whole && calls.length > 0 && calls.every((c) => c.done),
  });
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

/** Mistral's calls in either form: a JSON list after the marker, or a name and [ARGS] after each marker. */
function readMistralCalls(text: string): CallsRead {
  const at = skipSpace(text, TOOL_CALLS.length);
  if (at >= text.length) return { calls: [], whole: false };
  if (text[at] === '[') return readCallList(text, at + 1, { separator: ',', close: ']' });
  return readNamedCalls(text);
}

/** [TOOL_CALLS]NAME([CALL_ID]ID)?[ARGS]{…}, one or more in a row; a name is whole once the marker after it is. */
function readNamedCalls(text: string): CallsRead {
  const calls: PartialCall[] = [];
  const stop = (whole: boolean): CallsRead => ({
    calls,
    whole: whole && calls.length > 0 && calls.every((c) => c.done),
  });
  let i = 0;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length) return stop(true);
    if (readToken(text, i, TOOL_CALLS) !== 'whole') return stop(false);
    const call: PartialCall = { name: null, arguments: '', done: false };
    calls.push(call);
    i = skipSpace(text, i + TOOL_CALLS.length);
    const nameEnd = text.indexOf('[', i);
    const name = text.slice(i, nameEnd);
    if (nameEnd < 0 || !/^\S+$/.test(name)) return stop(false);
    i = nameEnd;
    if (readToken(text, i, CALL_ID) === 'whole') {
      call.name = name;
      // The id is the model's; the APIs give each call an id of their own.
      i = text.indexOf(ARGS, i + CALL_ID.length);
      if (i < 0) return stop(false);
    }
    if (readToken(text, i, ARGS) !== 'whole') return stop(false);
    call.name = name;
    const read = readArgumentsAt(text, skipSpace(text, i + ARGS.length));
    call.arguments = read.arguments;
    call.done = read.done;
    if (read.end < 0) return stop(false);
    i = read.end;
  }
}
