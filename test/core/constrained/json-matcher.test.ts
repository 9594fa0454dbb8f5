/**
 * The JSON matcher against JSON.parse: random documents are accepted, random byte strings are
 * accepted exactly when JSON.parse reads them (free whitespace within the bounds, each key once
 * per object), and a rejection
 * comes at the first byte no document can continue with (the accepted prefix always finishes into
 * something JSON.parse reads).
 */
import { describe, expect, it } from 'vitest';
import {
  advance,
  isComplete,
  matchBytes,
  start,
  type MatchState,
} from '../../../src-main/core/constrained/json-matcher';
import { ANY_OBJECT, ANY_VALUE } from '../../../src-main/core/constrained/json-schema';
import { mulberry32, type Rng } from '../../support/random';
import { duplicateKeys, excessiveWhitespace, findCompletion, parseBytes, randomJsonText, utf8 } from './json-check';

/** How many leading bytes the matcher takes, and the state after them. */
function run(state: MatchState, bytes: Uint8Array): { taken: number; state: MatchState } {
  let s = state;
  for (let i = 0; i < bytes.length; i++) {
    const next = advance(s, bytes[i]!);
    if (!next) return { taken: i, state: s };
    s = next;
  }
  return { taken: bytes.length, state: s };
}

const accepts = (state: MatchState, bytes: Uint8Array) => {
  const s = matchBytes(state, bytes);
  return s !== null && isComplete(s);
};

function mutate(rng: Rng, bytes: Uint8Array): Uint8Array {
  const out = [...bytes];
  const alphabet = [...'{}[]",:0123456789-+.eEtrufalsn \n\r\t\\/bu']
    .map((c) => c.charCodeAt(0))
    .concat([0x01, 0x7f, 0x80, 0xbf, 0xc0, 0xc3, 0xe0, 0xed, 0xf0, 0xf4, 0xf5, 0xff]);
  for (let m = 1 + rng.int(3); m > 0; m--) {
    const i = rng.int(out.length + 1);
    const b = alphabet[rng.int(alphabet.length)]!;
    const kind = rng.int(3);
    if (kind === 0) out.splice(i, 0, b);
    else if (kind === 1) out.splice(i, 1);
    else out.splice(i, 1, b);
  }
  return Uint8Array.from(out);
}

describe('JSON matcher', () => {
  it('accepts random documents byte by byte, complete only at the end when the value is an object or array', () => {
    const rng = mulberry32(1);
    for (let n = 0; n < 2000; n++) {
      const text = randomJsonText(rng, 4);
      const bytes = utf8(text);
      const { taken, state } = run(start(ANY_VALUE), bytes);
      expect(taken, text).toBe(bytes.length);
      expect(isComplete(state), text).toBe(true);
      expect(isComplete(run(start(ANY_VALUE), bytes.subarray(0, bytes.length - 1)).state), text).toBe(false);
      expect(accepts(start(ANY_OBJECT), bytes), text).toBe(text.trimStart().startsWith('{'));
    }
  });

  it('accepts any JSON value inside, numbers and literals at the top level too', () => {
    for (const text of [
      '0',
      '-0.5e+10',
      '12',
      '"a\\u00e9\\ud83d\\ude00"',
      'true',
      'null',
      ' [ {"a" : [1, 2.5, "x"]} ]',
      '{"":{}}',
    ]) {
      expect(accepts(start(ANY_VALUE), utf8(text)), text).toBe(true);
    }
    // "12" is whole, and may still go on.
    const twelve = matchBytes(start(ANY_VALUE), utf8('12'))!;
    expect(isComplete(twelve)).toBe(true);
    expect(advance(twelve, 0x33)).not.toBeNull();
  });

  it('takes random byte strings exactly when JSON.parse does, and rejects at the first byte that no document can follow', () => {
    const rng = mulberry32(2);
    let parsed = 0;
    let rejected = 0;
    for (let n = 0; n < 3000; n++) {
      const bytes = mutate(rng, utf8(randomJsonText(rng, 3)));
      const json = parseBytes(bytes);
      const text = new TextDecoder().decode(bytes);
      const { taken, state } = run(start(ANY_VALUE), bytes);
      const whole = taken === bytes.length && isComplete(state);
      expect(whole, JSON.stringify(text)).toBe(
        json !== undefined && !excessiveWhitespace(text) && !duplicateKeys(text),
      );
      if (json) parsed++;
      else rejected++;
      // What was taken can always be finished into a document JSON.parse reads.
      const rest = findCompletion(state, advance, isComplete);
      expect(rest, text).not.toBeNull();
      expect(parseBytes(Uint8Array.from([...bytes.subarray(0, taken), ...rest!])), text).toBeDefined();
    }
    expect(parsed).toBeGreaterThan(300);
    expect(rejected).toBeGreaterThan(1500);
  });

  it('rejects at the first bad byte', () => {
    const cases: [string, number][] = [
      ['{"a":1,}', 7],
      ['{"a" 1}', 5],
      ['[1,,2]', 3],
      ['{"a":01}', 6],
      ['{"a":tru}', 8],
      ['"a\u0001"', 2],
      ['"\\x"', 2],
      ['"\\u12g4"', 5],
      ['{"a":1}}', 7],
      ['[1.]', 3],
      ['[1e]', 3],
      ['[-]', 2],
    ];
    for (const [text, at] of cases) expect(run(start(ANY_VALUE), utf8(text)).taken, text).toBe(at);
    // Malformed UTF-8 inside a string: a bad continuation, an overlong form, a surrogate, past U+10FFFF.
    const badUtf8: [number[], number][] = [
      [[0x22, 0xc3, 0x28], 2],
      [[0x22, 0xc0, 0x80], 1],
      [[0x22, 0xe0, 0x80, 0x80], 2],
      [[0x22, 0xed, 0xa0, 0x80], 2],
      [[0x22, 0xf4, 0x90, 0x80, 0x80], 2],
      [[0x22, 0xf5], 1],
    ];
    for (const [bytes, at] of badUtf8) expect(run(start(ANY_VALUE), Uint8Array.from(bytes)).taken).toBe(at);
  });

  it("bounds free whitespace as llama.cpp's grammars do, and takes nothing after the value", () => {
    const spaces = (n: number) => ' '.repeat(n);
    // Between tokens: nothing, one space, or one or two line feeds then up to 20 spaces or tabs.
    expect(
      accepts(start(ANY_VALUE), utf8(`\n {"a":\n\n${spaces(20)}[\n\t${spaces(9)}1\n${spaces(5)}],\n "b": 2}`)),
    ).toBe(true);
    expect(matchBytes(start(ANY_VALUE), utf8(`  {`))).toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8(`{"a":[\n${spaces(21)}`))).toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8(`{"a":[\n${spaces(20)}`))).not.toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8(`{"a":[\n\n\t${spaces(19)}`))).not.toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8('{\t'))).toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8('{ \n'))).toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8('{\n\n\n'))).toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8('{\n \n'))).toBeNull();
    expect(matchBytes(start(ANY_VALUE), utf8('{\r\n'))).toBeNull();
    // Pretty-printed JSON fits.
    const nested = { a: [1, { b: [true, { c: null }] }], d: 'x' };
    for (const indent of [2, 4, '\t'])
      expect(accepts(start(ANY_OBJECT), utf8(JSON.stringify(nested, null, indent)))).toBe(true);
    // Spaces inside strings are text, not free whitespace.
    expect(accepts(start(ANY_OBJECT), utf8(`{"a":"${spaces(100)}"}`))).toBe(true);
    const done = matchBytes(start(ANY_OBJECT), utf8('{}'))!;
    for (const b of utf8(' \n{}0"')) expect(advance(done, b)).toBeNull();
    expect(matchBytes(start(ANY_OBJECT), utf8('[]'))).toBeNull();
  });
});
