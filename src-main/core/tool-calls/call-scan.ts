/**
 * Reading tool calls while they are still being written: each call's name once it is whole, and
 * its arguments as far as they go. The arguments are the model's own JSON text with the
 * whitespace outside strings dropped, so what is read from a longer text always extends what was
 * read from its start: streamed fragments join into exactly the final arguments.
 */

/** One call as far as it is written. */
export interface PartialCall {
  /** The function's name, once its string is whole (null before, or when it is not a string). */
  name: string | null;
  /** The arguments' JSON so far, compacted ('' before they start, or when they are not an object). */
  arguments: string;
  /** The call is whole and well formed (its JSON parses, its arguments are an object or absent). */
  done: boolean;
}

/** The calls in a text that starts at a call marker. */
export interface CallsRead {
  calls: PartialCall[];
  /** The text is one or more whole calls and nothing else. */
  whole: boolean;
}

/** `json` without the whitespace outside its strings. */
export function compactJson(json: string): string {
  let out = '';
  let inString = false;
  let escaped = false;
  for (const c of json) {
    if (inString) {
      out += c;
      if (escaped) escaped = false;
      else if (c === '\\') escaped = true;
      else if (c === '"') inString = false;
    } else if (c !== ' ' && c !== '\n' && c !== '\r' && c !== '\t') {
      out += c;
      if (c === '"') inString = true;
    }
  }
  return out;
}

export function skipSpace(text: string, at: number): number {
  while (at < text.length && /\s/.test(text[at]!)) at++;
  return at;
}

/** Where `token` is read at `at`: 'whole', 'partial' (the text ends inside it) or 'no'. */
export function readToken(text: string, at: number, token: string): 'whole' | 'partial' | 'no' {
  if (text.startsWith(token, at)) return 'whole';
  return token.startsWith(text.slice(at)) ? 'partial' : 'no';
}

/** The index after the JSON value at `at`, or -1 when the text ends before it does. Lenient: JSON.parse judges it later. */
export function valueEnd(text: string, at: number): number {
  let depth = 0;
  for (let i = at; i < text.length; i++) {
    const c = text[i]!;
    if (c === '"') {
      const end = stringEnd(text, i);
      if (end === 0) return -1;
      if (depth === 0) return end;
      i = end - 1;
    } else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      if (depth === 0) return i;
      if (--depth === 0) return i + 1;
    } else if (depth === 0 && /[\s,:]/.test(c)) return i;
  }
  return -1;
}

/** The index after the string that opens at `at`, or 0 when the text ends inside it. */
function stringEnd(text: string, at: number): number {
  for (let i = at + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return 0;
}

/**
 * The call object { "name": …, "arguments" | "parameters": {…}, … } at `at` (an opening brace),
 * and the index after it (-1: not whole yet, or malformed).
 */
export function readCallObject(text: string, at: number): { call: PartialCall; end: number } {
  const call: PartialCall = { name: null, arguments: '', done: false };
  let argsStart = -1;
  let argsEnd = -1;
  let i = at + 1;
  for (;;) {
    i = skipSpace(text, i);
    if (i >= text.length) break;
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text[i] === '}') {
      const end = i + 1;
      // A call without arguments takes none.
      call.arguments = argsStart < 0 ? '{}' : argumentsText(text.slice(argsStart, argsEnd));
      call.done = !!call.name && isObject(parseJson(text.slice(at, end))) && isObject(parseJson(call.arguments));
      return { call, end };
    }
    const keyEnd = text[i] === '"' ? valueEnd(text, i) : -1;
    if (keyEnd < 0) break;
    const key = parseJson(text.slice(i, keyEnd));
    i = skipSpace(text, keyEnd);
    if (text[i] !== ':') break;
    i = skipSpace(text, i + 1);
    if (i >= text.length) break;
    const end = valueEnd(text, i);
    if (key === 'name' && call.name === null && end >= 0) {
      const name = parseJson(text.slice(i, end));
      if (typeof name === 'string') call.name = name;
    }
    if ((key === 'arguments' || key === 'parameters') && argsStart < 0) {
      argsStart = i;
      argsEnd = end;
    }
    if (end < 0) break;
    i = end;
  }
  if (argsStart >= 0) call.arguments = argumentsText(text.slice(argsStart, argsEnd < 0 ? text.length : argsEnd));
  return { call, end: -1 };
}

/** Arguments as streamed: an object's JSON compacted; nothing for any other value (such a call is malformed). */
function argumentsText(json: string): string {
  return json.startsWith('{') ? compactJson(json) : '';
}

/** The arguments object that is the whole of `text` (gpt-oss's message body). */
export function readArguments(text: string): { arguments: string; done: boolean } {
  const read = readArgumentsAt(text, skipSpace(text, 0));
  return { arguments: read.arguments, done: read.done && skipSpace(text, read.end) === text.length };
}

/**
 * The arguments object at `at` (Mistral's text after [ARGS], gpt-oss's message body), as far as it
 * is written, and the index after it (-1: not whole yet, or not an object).
 */
export function readArgumentsAt(text: string, at: number): { arguments: string; done: boolean; end: number } {
  if (at >= text.length || text[at] !== '{') return { arguments: '', done: false, end: -1 };
  const end = valueEnd(text, at);
  const json = compactJson(text.slice(at, end < 0 ? text.length : end));
  return { arguments: json, done: end >= 0 && isObject(parseJson(json)), end };
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
