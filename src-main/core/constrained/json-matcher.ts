/**
 * An incremental JSON matcher over bytes, for constrained sampling: start(node) is the state before
 * any byte, advance(state, byte) the state after one more (null: no valid document starts so), and
 * isComplete(state) whether the bytes so far are a whole document. States are immutable and share
 * structure (a stack of frames as a linked list), so the token-mask search can branch from one state
 * into many bytes without copying.
 *
 * Every accepted prefix can still be completed: a comma is accepted only where another key or
 * item may follow, a key only while it is the start of one the schema allows (and each key once
 * per object: JSON.parse would keep only the last of two). Free whitespace
 * between tokens is bounded as llama.cpp's grammars bound it (their "space" rule), so that a
 * model cannot fill its answer with it: a run is nothing, one space, or one or two line feeds
 * then at most MAX_INDENT spaces or tabs (no carriage return). Compact JSON, one space after ":"
 * and ",", and pretty-printed JSON indented up to 20 all fit. After the whole value, nothing.
 *
 * A number has at most MAX_DIGITS digits in each of its integer part, fraction and exponent, as in
 * llama.cpp's grammars. Numbers with bounds (minimum, maximum, …) are held to them as they are written
 * (number-range.ts: no prefix is taken that no number in the range begins with), and written
 * without an exponent; strings with minLength, maxLength, a pattern or a format are read
 * character by character (escapes decoded) and their characters counted and stepped through the
 * pattern's automaton (char-pattern.ts).
 *
 * A state is a list of threads, one per way the bytes so far can be read (anyOf alternatives that
 * still fit); usually one.
 */
import { decodeUtf8 } from '../tokenizer/utf8';
import { MAX_DIGITS } from './number-range';
import { deref, type ArrayNode, type JsonNode, type NumberNode, type ObjectNode, type StringNode } from './json-schema';

/** The most spaces or tabs after the line feeds of a whitespace run (llama.cpp's "space" rule). */
export const MAX_INDENT = 20;

export type MatchState = readonly Thread[];

interface Thread {
  readonly frame: Frame;
  /** Where the value being read returns to, already past that value; null for the root. */
  readonly up: Thread | null;
  /** The whitespace just read at this point: 0 none, ONE_SPACE, or line feeds × LINE + spaces and tabs. */
  readonly ws: number;
}

type Frame = RootFrame | ObjectFrame | ArrayFrame | StringFrame | TextFrame | NumberFrame | LiteralFrame;

interface RootFrame {
  readonly k: 'root';
  readonly node: JsonNode;
  readonly done: boolean;
}

// Object phases: after "{", in a key, after the key, after ":", after a value, after ",".
const O_OPEN = 0;
const O_KEY = 1;
const O_COLON = 2;
const O_VALUE = 3;
const O_NEXT = 4;
const O_COMMA = 5;

interface ObjectFrame {
  readonly k: 'object';
  readonly node: ObjectNode;
  readonly phase: number;
  /** Keys written so far. */
  readonly seen: readonly string[];
  /** The key being read: its string scan state and its bytes so far. */
  readonly scan: number;
  readonly raw: string;
  /** The schema of the value after the key just read. */
  readonly value: JsonNode | null;
}

// Array phases: after "[", after an item, after ",".
const A_OPEN = 0;
const A_NEXT = 1;
const A_COMMA = 2;

interface ArrayFrame {
  readonly k: 'array';
  readonly node: ArrayNode;
  readonly phase: number;
  readonly count: number;
}

interface StringFrame {
  readonly k: 'string';
  readonly scan: number;
}

/** A string with minLength, maxLength or a pattern: read character by character. */
interface TextFrame {
  readonly k: 'text';
  readonly node: StringNode;
  readonly scan: number;
  /** The code point being decoded (UTF-8 bytes or \u digits so far). */
  readonly cp: number;
  /** A high surrogate written as \\u, waiting for the low one that makes one character with it (0: none). */
  readonly high: number;
  /** Characters so far. */
  readonly count: number;
  /** The pattern's automaton states; empty when there is no pattern. */
  readonly states: readonly number[];
}

// Number phases: after "-", "0", integer digits, ".", fraction digits, "e", the exponent's sign, its digits.
const N_SIGN = 0;
const N_ZERO = 1;
const N_INT = 2;
const N_DOT = 3;
const N_FRAC = 4;
const N_EXP_MARK = 5;
const N_EXP_SIGN = 6;
const N_EXP = 7;

interface NumberFrame {
  readonly k: 'number';
  readonly node: NumberNode;
  readonly phase: number;
  /** The number's bytes so far, kept only when it has bounds. */
  readonly text: string;
  /** Digits of the part being written (integer, fraction or exponent), at most MAX_DIGITS. */
  readonly digits: number;
}

interface LiteralFrame {
  readonly k: 'literal';
  readonly texts: readonly Uint8Array[];
  /** Indices of the texts that begin with the bytes read so far. */
  readonly alive: readonly number[];
  readonly pos: number;
}

/** The state before the first byte of a document that `node` describes. */
export function start(node: JsonNode): MatchState {
  return [{ frame: { k: 'root', node, done: false }, up: null, ws: 0 }];
}

export function advance(state: MatchState, byte: number): MatchState | null {
  const out: Thread[] = [];
  for (const th of state) step(th, byte, out);
  return out.length > 0 ? out : null;
}

/** Whether the bytes so far are a whole document (a number may still go on: "12" and "123"). */
export function isComplete(state: MatchState): boolean {
  return state.some(complete);
}

function complete(th: Thread | null): boolean {
  if (!th) return false;
  const f = th.frame;
  if (f.k === 'root') return f.done;
  return mayEnd(f) && complete(th.up);
}

/** A number or a literal that is whole as it is, though it may go on. */
function mayEnd(f: Frame): boolean {
  if (f.k === 'number')
    return (
      (f.phase === N_ZERO || f.phase === N_INT || f.phase === N_FRAC || f.phase === N_EXP) &&
      (f.node.range === null || f.node.range.holds(f.text))
    );
  if (f.k === 'literal') return f.alive.some((i) => f.texts[i]!.length === f.pos);
  return false;
}

const isWs = (b: number) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
const LF = 0x0a;
const isDigit = (b: number) => b >= 0x30 && b <= 0x39;

function at(th: Thread, frame: Frame): Thread {
  return { frame, up: th.up, ws: 0 };
}

const ONE_SPACE = 1;
const LINE = 0x100;

/** One more whitespace byte `b`: "" | " " | "\n"{1,2} [ \t]{0,MAX_INDENT}, as llama.cpp's grammars have it. */
function space(th: Thread, b: number, out: Thread[]): void {
  const ws = th.ws;
  let next = -1;
  if (ws === 0) next = b === 0x20 ? ONE_SPACE : b === LF ? LINE : -1;
  else if (ws >= LINE) {
    const lines = ws >> 8;
    const indent = ws & 0xff;
    if (b === LF) next = lines === 1 && indent === 0 ? 2 * LINE : -1;
    else if ((b === 0x20 || b === 0x09) && indent < MAX_INDENT) next = ws + 1;
  }
  if (next >= 0) out.push({ frame: th.frame, up: th.up, ws: next });
}

function step(th: Thread, b: number, out: Thread[]): void {
  const f = th.frame;
  switch (f.k) {
    case 'root':
      if (f.done) return;
      if (isWs(b)) space(th, b, out);
      else if (opens(f.node, b))
        startValue(f.node, b, { frame: { k: 'root', node: f.node, done: true }, up: null, ws: 0 }, out);
      return;
    case 'object':
      stepObject(th, f, b, out);
      return;
    case 'array':
      stepArray(th, f, b, out);
      return;
    case 'string': {
      const scan = scanString(f.scan, b);
      if (scan === CLOSE) out.push(th.up!);
      else if (scan === f.scan) out.push(th);
      else if (scan !== DEAD) out.push(at(th, stringFrame(scan)));
      return;
    }
    case 'text':
      stepText(th, f, b, out);
      return;
    case 'number': {
      let phase = numberStep(f, b);
      const digits = !isDigit(b) ? 0 : phase === f.phase ? f.digits + 1 : 1;
      if (digits > MAX_DIGITS) phase = -1;
      if (phase >= 0 && f.node.range) {
        const text = f.text + String.fromCharCode(b);
        if (f.node.range.live(text)) out.push(at(th, { k: 'number', node: f.node, phase, text, digits }));
      } else if (phase >= 0) out.push(at(th, { k: 'number', node: f.node, phase, text: '', digits }));
      else if (mayEnd(f)) step(th.up!, b, out);
      return;
    }
    case 'literal': {
      const alive = f.alive.filter((i) => f.texts[i]![f.pos] === b);
      if (alive.length > 0) out.push(at(th, { k: 'literal', texts: f.texts, alive, pos: f.pos + 1 }));
      else if (mayEnd(f)) step(th.up!, b, out);
      return;
    }
  }
}

/** Whether `b` can be the first byte of a value of `node` (checked before building anything for it). */
function opens(node: JsonNode, b: number): boolean {
  const n = deref(node);
  switch (n.kind) {
    case 'anyOf':
      return n.options.some((o) => opens(o, b));
    case 'object':
      return b === 0x7b;
    case 'array':
      return b === 0x5b;
    case 'string':
      return b === 0x22;
    case 'number':
      return b === 0x2d || isDigit(b);
    case 'literal':
      return n.texts.some((t) => t[0] === b);
  }
}

/** The first byte `b` of a value of `node`; `parent` is where the finished value returns to. */
function startValue(node: JsonNode, b: number, parent: Thread, out: Thread[]): void {
  const n = deref(node);
  switch (n.kind) {
    case 'anyOf':
      for (const option of n.options) startValue(option, b, parent, out);
      return;
    case 'object':
      if (b === 0x7b)
        out.push({
          frame: { k: 'object', node: n, phase: O_OPEN, seen: [], scan: 0, raw: '', value: null },
          up: parent,
          ws: 0,
        });
      return;
    case 'array':
      if (b === 0x5b) out.push({ frame: { k: 'array', node: n, phase: A_OPEN, count: 0 }, up: parent, ws: 0 });
      return;
    case 'string':
      if (b !== 0x22) return;
      if (n.minLength === 0 && n.maxLength === Infinity && n.pattern === null)
        out.push({ frame: stringFrame(0), up: parent, ws: 0 });
      else
        out.push({
          frame: { k: 'text', node: n, scan: 0, cp: 0, high: 0, count: 0, states: n.pattern ? n.pattern.start : [] },
          up: parent,
          ws: 0,
        });
      return;
    case 'number': {
      const phase = b === 0x2d ? N_SIGN : b === 0x30 ? N_ZERO : isDigit(b) ? N_INT : -1;
      if (phase < 0) return;
      const text = n.range ? String.fromCharCode(b) : '';
      if (n.range && !n.range.live(text)) return;
      out.push({ frame: { k: 'number', node: n, phase, text, digits: phase === N_SIGN ? 0 : 1 }, up: parent, ws: 0 });
      return;
    }
    case 'literal': {
      const alive: number[] = [];
      for (let i = 0; i < n.texts.length; i++) if (n.texts[i]![0] === b) alive.push(i);
      if (alive.length > 0) out.push({ frame: { k: 'literal', texts: n.texts, alive, pos: 1 }, up: parent, ws: 0 });
      return;
    }
  }
}

function stepObject(th: Thread, f: ObjectFrame, b: number, out: Thread[]): void {
  // Frames are built only for bytes that are taken: the mask search tries every byte of a token's
  // trie level here, and most are refused.
  const next = (phase: number, seen = f.seen, scan = 0, raw = '', value: JsonNode | null = null): Thread => ({
    frame: { k: 'object', node: f.node, phase, seen, scan, raw, value },
    up: th.up,
    ws: 0,
  });
  switch (f.phase) {
    case O_OPEN:
    case O_NEXT:
      if (isWs(b)) space(th, b, out);
      else if (b === 0x7d && f.node.required.every((k) => f.seen.includes(k))) out.push(th.up!);
      else if ((f.phase === O_OPEN ? b === 0x22 : b === 0x2c) && mayAddKey(f))
        out.push(next(f.phase === O_OPEN ? O_KEY : O_COMMA));
      return;
    case O_COMMA:
      if (isWs(b)) space(th, b, out);
      else if (b === 0x22) out.push(next(O_KEY));
      return;
    case O_KEY: {
      const scan = scanString(f.scan, b);
      if (scan === CLOSE) {
        const name = keyName(f.raw);
        const value = f.node.properties.get(name) ?? f.node.additional;
        if (value && !f.seen.includes(name) && (!f.node.ordered || nextKeys(f).includes(name)))
          out.push(next(O_COLON, [...f.seen, name], 0, '', value));
      } else if (scan !== DEAD) {
        const raw = f.raw + String.fromCharCode(b);
        if (f.node.additional || keyStarts(f, raw)) out.push(next(O_KEY, f.seen, scan, raw));
      }
      return;
    }
    case O_COLON:
      if (isWs(b)) space(th, b, out);
      else if (b === 0x3a) out.push(next(O_VALUE, f.seen, 0, '', f.value));
      return;
    case O_VALUE:
      if (isWs(b)) space(th, b, out);
      else if (opens(f.value!, b)) startValue(f.value!, b, next(O_NEXT), out);
      return;
  }
}

/** Whether `raw` begins a property's key not written yet (in an ordered object, one that may come next). */
function keyStarts(f: ObjectFrame, raw: string): boolean {
  if (f.node.ordered) return nextKeys(f).some((name) => f.node.keyTexts.get(name)!.startsWith(raw));
  for (const [name, text] of f.node.keyTexts) if (text.startsWith(raw) && !f.seen.includes(name)) return true;
  return false;
}

/** Whether another key may follow: any key, or a property not written yet (in an ordered object, after the last one written). */
function mayAddKey(f: ObjectFrame): boolean {
  if (f.node.ordered) return nextKeys(f).length > 0;
  return f.node.additional !== null || f.seen.length < f.node.properties.size;
}

/** In an ordered object, the keys that may come next: those after the last written, up to and with the first required one. */
function nextKeys(f: ObjectFrame): string[] {
  const names = [...f.node.properties.keys()];
  const last = f.seen.length === 0 ? -1 : names.indexOf(f.seen.at(-1)!);
  const out: string[] = [];
  for (const name of names.slice(last + 1)) {
    out.push(name);
    if (f.node.required.includes(name)) break;
  }
  return out;
}

/** The key a JSON string's bytes (between the quotes, already checked) stand for. */
function keyName(raw: string): string {
  if (!/[\\\x80-\xff]/.test(raw)) return raw;
  return JSON.parse(`"${decodeUtf8(Uint8Array.from(raw, (c) => c.charCodeAt(0)))}"`) as string;
}

function stepArray(th: Thread, f: ArrayFrame, b: number, out: Thread[]): void {
  const { minItems, maxItems, items } = f.node;
  if (isWs(b)) {
    space(th, b, out);
    return;
  }
  const item = () => {
    if (opens(items, b))
      startValue(
        items,
        b,
        { frame: { k: 'array', node: f.node, phase: A_NEXT, count: f.count + 1 }, up: th.up, ws: 0 },
        out,
      );
  };
  switch (f.phase) {
    case A_OPEN:
      if (b === 0x5d && minItems === 0) out.push(th.up!);
      else if (maxItems > 0) item();
      return;
    case A_NEXT:
      if (b === 0x5d && f.count >= minItems) out.push(th.up!);
      else if (b === 0x2c && f.count < maxItems)
        out.push(at(th, { k: 'array', node: f.node, phase: A_COMMA, count: f.count }));
      return;
    case A_COMMA:
      item();
      return;
  }
}

/** The number's next phase after `b`, or -1 when `b` does not continue it. */
function numberStep(f: NumberFrame, b: number): number {
  const digit = isDigit(b);
  const dot = !f.node.integer && b === 0x2e;
  const exp = !f.node.integer && f.node.range === null && (b === 0x65 || b === 0x45);
  switch (f.phase) {
    case N_SIGN:
      return b === 0x30 ? N_ZERO : digit ? N_INT : -1;
    case N_ZERO:
      return dot ? N_DOT : exp ? N_EXP_MARK : -1;
    case N_INT:
      return digit ? N_INT : dot ? N_DOT : exp ? N_EXP_MARK : -1;
    case N_DOT:
      return digit ? N_FRAC : -1;
    case N_FRAC:
      return digit ? N_FRAC : exp ? N_EXP_MARK : -1;
    case N_EXP_MARK:
      return b === 0x2b || b === 0x2d ? N_EXP_SIGN : digit ? N_EXP : -1;
    default:
      return digit ? N_EXP : -1;
  }
}

/*
 * Inside a string, the scan state is one small number: bits 0-2 the escape (0 none, 1 after "\",
 * 2-5 reading the 4 hex digits of \u), bits 3-4 the UTF-8 continuation bytes still due, bits 5-7
 * the range the next one must be in (RFC 3629: no overlong forms, surrogates or code points past
 * U+10FFFF). CLOSE: the closing quote; DEAD: not valid here.
 */
const CLOSE = -1;
const DEAD = -2;
/** [low, high] of the next continuation byte, by range code. */
const RANGES = [
  [0x80, 0xbf],
  [0xa0, 0xbf],
  [0x80, 0x9f],
  [0x90, 0xbf],
  [0x80, 0x8f],
] as const;

const continuation = (due: number, range: number) => (due << 3) | (range << 5);

function scanString(scan: number, b: number): number {
  const esc = scan & 7;
  const due = (scan >> 3) & 3;
  if (due > 0) {
    const [lo, hi] = RANGES[scan >> 5]!;
    return b >= lo && b <= hi ? continuation(due - 1, 0) : DEAD;
  }
  if (esc === 1) {
    if (b === 0x75) return 2; // \u
    return '"\\/bfnrt'.includes(String.fromCharCode(b)) ? 0 : DEAD;
  }
  if (esc >= 2) {
    const hex = isDigit(b) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
    return hex ? (esc === 5 ? 0 : esc + 1) : DEAD;
  }
  if (b === 0x22) return CLOSE;
  if (b === 0x5c) return 1;
  if (b < 0x20) return DEAD;
  if (b < 0x80) return 0;
  if (b >= 0xc2 && b <= 0xdf) return continuation(1, 0);
  if (b === 0xe0) return continuation(2, 1);
  if (b === 0xed) return continuation(2, 2);
  if (b >= 0xe1 && b <= 0xef) return continuation(2, 0);
  if (b === 0xf0) return continuation(3, 3);
  if (b >= 0xf1 && b <= 0xf3) return continuation(3, 0);
  if (b === 0xf4) return continuation(3, 4);
  return DEAD;
}

/** The character a one-letter escape ("\\n") stands for, by the letter. */
const ESCAPED: Readonly<Record<number, number>> = {
  0x22: 0x22,
  0x5c: 0x5c,
  0x2f: 0x2f,
  0x62: 0x08,
  0x66: 0x0c,
  0x6e: 0x0a,
  0x72: 0x0d,
  0x74: 0x09,
};

const hexValue = (b: number) => (b <= 0x39 ? b - 0x30 : (b | 0x20) - 0x57);

/** A byte of a string held to a length or a pattern: each whole character is counted and stepped through the pattern. */
function stepText(th: Thread, f: TextFrame, b: number, out: Thread[]): void {
  const scan = scanString(f.scan, b);
  if (scan === DEAD) return;
  const { minLength, pattern } = f.node;
  let text: Counted | null = f;
  if (scan === CLOSE) {
    if (f.high) text = counted(f, f.high);
    if (text && text.count >= minLength && (!pattern || pattern.accepts(text.states))) out.push(th.up!);
    return;
  }
  const esc = f.scan & 7;
  const due = (f.scan >> 3) & 3;
  let cp = f.cp;
  let ch = -1;
  let fromEscape = false;
  if (due > 0) {
    cp = (cp << 6) | (b & 0x3f);
    if (((scan >> 3) & 3) === 0) ch = cp;
  } else if (esc === 1) {
    if (b === 0x75) cp = 0;
    else ch = ESCAPED[b]!;
  } else if (esc >= 2) {
    cp = cp * 16 + hexValue(b);
    if (esc === 5) {
      ch = cp;
      fromEscape = true;
    }
  } else if (b < 0x80) {
    if (b !== 0x5c) ch = b;
  } else cp = b & (b >= 0xf0 ? 0x07 : b >= 0xe0 ? 0x0f : 0x1f);
  let high = f.high;
  if (ch < 0) {
    // Part of a character: some character it can still become must fit (a prefix with none is a dead end).
    const escape = (scan & 7) !== 0;
    if (f.count + 1 + (high && !escape ? 1 : 0) > f.node.maxLength) return;
    if (pattern) {
      const [lo, hi] = partialRange(scan, cp);
      if (!pattern.stepsInRange(f.states, lo, hi)) return;
    }
  } else {
    // A surrogate pair written as two \u escapes is one character, as in the decoded string.
    if (high && fromEscape && ch >= 0xdc00 && ch <= 0xdfff) {
      ch = 0x10000 + ((high - 0xd800) << 10) + (ch - 0xdc00);
      high = 0;
    } else if (high) {
      text = counted(text, high);
      high = 0;
    }
    // (Held only without a pattern, and only where one more character fits: any way on stays open.
    // With a pattern each \\u escape is a character of its own.)
    if (text && fromEscape && ch >= 0xd800 && ch <= 0xdbff && !f.node.pattern && text.count < f.node.maxLength)
      high = ch;
    else if (text) text = counted(text, ch);
    if (!text) return;
  }
  out.push(at(th, { k: 'text', node: f.node, scan, cp, high, count: text.count, states: text.states }));
}

/** The code points a character partly read (`scan` after its last byte, `cp` its bits so far) can still become. */
function partialRange(scan: number, cp: number): [number, number] {
  const esc = scan & 7;
  const due = (scan >> 3) & 3;
  if (due > 0) {
    const [rlo, rhi] = RANGES[scan >> 5]!;
    const shift = 6 * (due - 1);
    const base = cp * 2 ** (6 * due);
    return [base + (rlo & 0x3f) * 2 ** shift, base + (rhi & 0x3f) * 2 ** shift + 2 ** shift - 1];
  }
  if (esc >= 2) {
    const rest = 2 ** (4 * (4 - (esc - 2)));
    return [cp * rest, cp * rest + rest - 1];
  }
  return [0, 0xffff]; // after "\": a one-letter escape or \u
}

interface Counted {
  readonly node: StringNode;
  readonly count: number;
  readonly states: readonly number[];
}

/** After one more character `ch`; null past maxLength or where the pattern has no way on. */
function counted(t: Counted, ch: number): Counted | null {
  const count = t.count + 1;
  if (count > t.node.maxLength) return null;
  let states = t.states;
  if (t.node.pattern) {
    states = t.node.pattern.step(states, ch);
    if (states.length === 0) return null;
  }
  return { node: t.node, count, states };
}

/** String frames by scan state, shared (they hold nothing else). */
const stringFrames = new Map<number, StringFrame>();

function stringFrame(scan: number): StringFrame {
  let f = stringFrames.get(scan);
  if (!f) {
    f = { k: 'string', scan };
    stringFrames.set(scan, f);
  }
  return f;
}

/** The state after `bytes` (a token's, say), or null when they do not continue a valid document. */
export function matchBytes(state: MatchState, bytes: Uint8Array): MatchState | null {
  let s: MatchState | null = state;
  for (let i = 0; i < bytes.length && s; i++) s = advance(s, bytes[i]!);
  return s;
}
