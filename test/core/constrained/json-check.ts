/**
 * Test helpers for constrained JSON, written apart from the matcher: a small validator for the
 * JSON Schema subset Gufo supports, a random JSON writer (free whitespace, escapes, every number
 * form), and a completion search that hands any state's bytes to JSON.parse.
 */
import type { Rng } from '../../support/random';

export type Schema = boolean | Record<string, unknown>;

/** Whether `value` is valid for `schema` (type, properties, required, additionalProperties, items, min/maxItems, minimum, maximum and their exclusive forms, min/maxLength, pattern, format, enum, const, anyOf, local $ref). */
export function validates(value: unknown, schema: Schema, root: Schema = schema): boolean {
  if (schema === true) return true;
  if (schema === false) return false;
  const s = schema;
  if (typeof s.$ref === 'string') return validates(value, resolve(root, s.$ref), root);
  if (Array.isArray(s.anyOf)) return s.anyOf.some((o) => validates(value, o as Schema, root));
  if ('const' in s && JSON.stringify(s.const) !== JSON.stringify(value)) return false;
  if (Array.isArray(s.enum) && !s.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) return false;
  if (s.type !== undefined) {
    const types = Array.isArray(s.type) ? s.type : [s.type];
    if (!types.some((t) => hasType(value, t as string))) return false;
  }
  if (isObject(value)) {
    const props = (s.properties ?? {}) as Record<string, Schema>;
    for (const r of (s.required ?? []) as string[]) if (!(r in value)) return false;
    for (const [k, v] of Object.entries(value)) {
      if (k in props) {
        if (!validates(v, props[k]!, root)) return false;
      } else if (s.additionalProperties !== undefined && !validates(v, s.additionalProperties as Schema, root))
        return false;
    }
  }
  if (typeof value === 'number') {
    if (typeof s.minimum === 'number' && value < s.minimum) return false;
    if (typeof s.maximum === 'number' && value > s.maximum) return false;
    if (typeof s.exclusiveMinimum === 'number' && value <= s.exclusiveMinimum) return false;
    if (typeof s.exclusiveMaximum === 'number' && value >= s.exclusiveMaximum) return false;
  }
  if (typeof value === 'string') {
    const chars = [...value].length;
    if (typeof s.minLength === 'number' && chars < s.minLength) return false;
    if (typeof s.maxLength === 'number' && chars > s.maxLength) return false;
    if (typeof s.pattern === 'string' && !new RegExp(s.pattern, 'u').test(value)) return false;
    const format = typeof s.format === 'string' ? FORMATS[s.format] : undefined;
    if (format && !format.test(value)) return false;
  }
  if (Array.isArray(value)) {
    if (typeof s.minItems === 'number' && value.length < s.minItems) return false;
    if (typeof s.maxItems === 'number' && value.length > s.maxItems) return false;
    if (s.items !== undefined && !value.every((v) => validates(v, s.items as Schema, root))) return false;
  }
  return true;
}

/** The formats Gufo holds to, as llama.cpp's grammars write them (no calendar check: 2024-02-31 is a date). */
const FORMATS: Record<string, RegExp> = {
  date: /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])$/,
  time: /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{3})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/,
  'date-time':
    /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d(\.\d{3})?(Z|[+-]([01]\d|2[0-3]):[0-5]\d)$/,
  uuid: /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
};

function hasType(v: unknown, t: string): boolean {
  switch (t) {
    case 'null':
      return v === null;
    case 'array':
      return Array.isArray(v);
    case 'object':
      return isObject(v);
    case 'integer':
      return Number.isInteger(v);
    default:
      return typeof v === t;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The schema a local $ref points to. */
export function resolve(root: Schema, ref: string): Schema {
  let s: unknown = root;
  for (const token of ref.split('/').slice(1)) s = (s as Record<string, unknown>)[token];
  return s as Schema;
}

/** Random JSON text of a random value: free whitespace as the matcher bounds it (llama.cpp's "space": nothing, one space, or one or two line feeds then up to 20 spaces or tabs), escapes and non-ASCII in strings, all number forms. */
export function randomJsonText(rng: Rng, depth = 3, level = 0): string {
  const ws = (open: number) => {
    const pick = rng.int(5);
    if (pick < 2) return ['', ' '][pick]!;
    const indent = Array.from({ length: rng.int(Math.min(21, 2 + 4 * open)) }, () =>
      rng.int(4) === 0 ? '\t' : ' ',
    ).join('');
    return pick === 2 ? `\n\n${indent}` : `\n${indent}`;
  };
  const pick = rng.int(level === 0 ? 2 : 7);
  const inner = level + 1;
  switch (pick) {
    case 0: {
      const n = depth > 0 ? rng.int(4) : 0;
      const keys = new Set<string>();
      while (keys.size < n) keys.add(randomStringValue(rng));
      const members = [...keys].map(
        (k) =>
          `${ws(inner)}${randomStringText(rng, k)}${ws(inner)}:${ws(inner)}${randomJsonText(rng, depth - 1, inner)}${ws(inner)}`,
      );
      return `${level === 0 ? ws(0) : ''}{${members.length ? members.join(',') : ws(inner)}}`;
    }
    case 1: {
      const n = depth > 0 ? rng.int(4) : 0;
      const items = Array.from({ length: n }, () => `${ws(inner)}${randomJsonText(rng, depth - 1, inner)}${ws(inner)}`);
      return `${level === 0 ? ws(0) : ''}[${items.length ? items.join(',') : ws(inner)}]`;
    }
    case 2:
      return randomStringText(rng, randomStringValue(rng));
    case 3:
      return randomNumberText(rng);
    default:
      return ['true', 'false', 'null'][pick - 4]!;
  }
}

/**
 * Whether `text` has free whitespace the matcher refuses: a run other than one space or one or two
 * line feeds then at most 20 spaces and tabs (so any carriage return), or any after the value.
 */
export function excessiveWhitespace(text: string): boolean {
  let inString = false;
  let escaped = false;
  let run = '';
  for (const ch of text) {
    if (inString) {
      if (escaped) escaped = false;
      else if (ch === '\\') escaped = true;
      else if (ch === '"') inString = false;
      continue;
    }
    if (' \n\r\t'.includes(ch)) {
      run += ch;
      continue;
    }
    if (run !== '' && run !== ' ' && !/^\n{1,2}[ \t]{0,20}$/.test(run)) return true;
    run = '';
    if (ch === '"') inString = true;
  }
  return run !== '';
}

/** Whether some object of `text` (valid JSON) has a key twice: JSON.parse keeps the last, the matcher refuses the second. */
export function duplicateKeys(text: string): boolean {
  const stack: { keys: Set<string> | null; keyNext: boolean }[] = [];
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    const top = stack.at(-1);
    if (ch === '"') {
      let j = i + 1;
      while (text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      if (top?.keys && top.keyNext) {
        const key = JSON.parse(text.slice(i, j + 1)) as string;
        if (top.keys.has(key)) return true;
        top.keys.add(key);
        top.keyNext = false;
      }
      i = j;
    } else if (ch === '{' || ch === '[') stack.push({ keys: ch === '{' ? new Set() : null, keyNext: ch === '{' });
    else if (ch === '}' || ch === ']') stack.pop();
    else if (ch === ',' && top?.keys) top.keyNext = true;
  }
  return false;
}

const CHARS = [
  'a',
  'b',
  'z',
  ' ',
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\u0001',
  'é',
  'ß',
  '€',
  '中',
  '😀',
  '\u2028',
  '\u{10FFFF}',
];

export function randomStringValue(rng: Rng): string {
  return Array.from({ length: rng.int(6) }, () => CHARS[rng.int(CHARS.length)]).join('');
}

/** `s` as a JSON string, each character written plainly or as some escape at random. */
export function randomStringText(rng: Rng, s: string): string {
  let out = '"';
  for (const ch of s) {
    const plain = JSON.stringify(ch).slice(1, -1);
    const code = ch.codePointAt(0)!;
    const u = (c: number) => `\\u${c.toString(16).padStart(4, '0')}`;
    const escaped =
      code > 0xffff
        ? u(0xd800 + ((code - 0x10000) >> 10)) + u(0xdc00 + ((code - 0x10000) & 0x3ff))
        : ch === '/'
          ? '\\/'
          : u(code);
    out += plain.startsWith('\\') || rng.next() < 0.7 ? plain : escaped;
  }
  return out + '"';
}

export function randomNumberText(rng: Rng): string {
  const digits = (min: number) => Array.from({ length: min + rng.int(3) }, () => String(rng.int(10))).join('');
  let s = rng.next() < 0.3 ? '-' : '';
  s += rng.next() < 0.2 ? '0' : String(1 + rng.int(9)) + digits(0);
  if (rng.next() < 0.3) s += '.' + digits(1);
  if (rng.next() < 0.2) s += ['e', 'E'][rng.int(2)]! + ['', '+', '-'][rng.int(3)]! + digits(1);
  return s;
}

export const utf8 = (s: string) => new TextEncoder().encode(s);

/** The text of `bytes` when they are a JSON document JSON.parse reads (as well-formed UTF-8), else undefined. */
export function parseBytes(bytes: Uint8Array): { value: unknown } | undefined {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
  try {
    return { value: JSON.parse(text) };
  } catch {
    return undefined;
  }
}

/** Bytes tried first when finishing a document: closers, then what opens the shortest values; then every other byte but whitespace (never needed). */
const FINISHERS = [...'"}]0:,nulrsa1-.eE+\\[{'].map((c) => c.charCodeAt(0)).concat([0x80, 0x90, 0xa0]);
const BYTE_ORDER = [...new Set([...FINISHERS, ...Array(256).keys()])].filter(
  (b) => ![0x20, 0x09, 0x0a, 0x0d].includes(b),
);

/**
 * A beam search, shortest first, for bytes that finish a document from `state`, using the matcher's
 * own advance (so that its answer can then be checked by JSON.parse): null if none within `limit`
 * bytes. `words` (a schema's keys and string values, quoted) are tried as whole moves first.
 */
export function findCompletion<S>(
  state: S,
  advance: (s: S, b: number) => S | null,
  complete: (s: S) => boolean,
  words: readonly Uint8Array[] = [],
  limit = 64,
): number[] | null {
  let frontier: [S, number[]][] = [[state, []]];
  for (let depth = 0; depth <= limit && frontier.length > 0; depth++) {
    const children: [S, number[]][][] = [];
    for (const [s, path] of frontier) {
      if (complete(s)) return path;
      const next: [S, number[]][] = [];
      children.push(next);
      for (const w of words) {
        let t: S | null = s;
        for (let i = 0; i < w.length && t; i++) t = advance(t, w[i]!);
        if (t) next.push([t, [...path, ...w]]);
      }
      // A few single bytes per state, in the order above, are enough to close the rest.
      let branches = 0;
      for (let i = 0; i < BYTE_ORDER.length && branches < 4; i++) {
        const t = advance(s, BYTE_ORDER[i]!);
        if (t) {
          next.push([t, [...path, BYTE_ORDER[i]!]]);
          branches++;
        }
      }
    }
    // Each state's first child, then each one's second, …: every line of the search stays in the beam a while.
    frontier = [];
    for (let r = 0; frontier.length < 64 && children.some((c) => c.length > r); r++) {
      for (const c of children) if (r < c.length && frontier.length < 64) frontier.push(c[r]!);
    }
  }
  return null;
}

/** The quoted property names and string constants of a schema, as UTF-8 (moves for findCompletion). */
export function schemaWords(schema: unknown): Uint8Array[] {
  const words = new Set<string>();
  const walk = (v: unknown, key: string | null): void => {
    if (typeof v === 'string' && (key === 'enum' || key === 'const')) words.add(JSON.stringify(v));
    if (Array.isArray(v)) for (const x of v) walk(x, key);
    else if (typeof v === 'object' && v !== null) {
      for (const [k, x] of Object.entries(v)) {
        if (key === 'properties') words.add(JSON.stringify(k));
        walk(x, key === 'properties' ? null : k);
      }
    }
  };
  walk(schema, null);
  return [...words].map(utf8);
}
