/**
 * tool_choice "required" among several functions for the families that name the function outside
 * the JSON (gpt-oss, Mistral v11): a random sampler held to the forced call's constraint always
 * writes a call to one of the functions, with arguments valid for that function's schema.
 */
import { describe, expect, it } from 'vitest';
import { ConstrainedTokens, constraintLeads } from '../../../src-main/core/constrained/token-constraint';
import { TokenTrie } from '../../../src-main/core/constrained/token-trie';
import { HarmonyRewriter } from '../../../src-main/core/harmony';
import {
  forcedToolCall,
  ToolCallStream,
  TOOL_CALL_SYNTAX,
  type ToolFunction,
} from '../../../src-main/core/tool-calls/index';
import { mulberry32 } from '../../support/random';
import { validates } from '../constrained/json-check';

const functions: ToolFunction[] = [
  {
    name: 'get_weather',
    parameters: {
      type: 'object',
      properties: { city: { enum: ['Paris', 'Rome'] }, unit: { enum: ['celsius', 'fahrenheit'] } },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
  },
  {
    name: 'get',
    parameters: {
      type: 'object',
      properties: { hours: { type: 'integer' }, on: { type: 'boolean' } },
      required: ['hours'],
      additionalProperties: false,
    },
  },
];

/**
 * A vocabulary of every printable ASCII byte, some longer pieces (the separators and the names as
 * models have them), an end-of-generation id, and Mistral's [ARGS] as a control token (no bytes,
 * shown only when special tokens are).
 */
const enc = new TextEncoder();
const pieces = [
  ...Array.from({ length: 0x7f - 0x20 }, (_, i) => String.fromCharCode(0x20 + i)),
  '<|message|>',
  '<|constrain|>',
  'json',
  'to',
  '=functions',
  '.get',
  '_weather',
  'get_weather',
  '{"',
  '":',
  '", "',
  '"}',
  'Paris',
  'celsius',
  'true',
];
const EOG = pieces.length;
const ARGS = pieces.length + 1;
const trie = TokenTrie.build(
  pieces.length + 2,
  (id) => (id < pieces.length ? enc.encode(pieces[id]) : new Uint8Array(0)),
  (id) => (id === ARGS ? enc.encode('[ARGS]') : new Uint8Array(0)),
);
const pieceText = (id: number) => (id === ARGS ? '[ARGS]' : pieces[id]!);

/** The text a uniform random sampler writes under `tokens`' masks, preferring the end once it is allowed. */
function sample(tokens: ConstrainedTokens, seed: number): string {
  const rng = mulberry32(seed);
  let text = '';
  for (let step = 0; step < 5000; step++) {
    const mask = tokens.mask();
    if (!mask) throw new Error(`no token allowed after ${JSON.stringify(text)}`);
    const allowed: number[] = [];
    for (let id = 0; id < trie.size; id++) if ((mask[id >>> 5]! >>> (id & 31)) & 1) allowed.push(id);
    if (allowed.includes(EOG)) return text;
    const id = allowed[Math.floor(rng.next() * allowed.length)]!;
    tokens.accept(id);
    text += pieceText(id);
  }
  throw new Error(`no end after 5000 tokens: ${text.slice(0, 200)}`);
}

/** The calls the family's stream reads from the output (gpt-oss's through the harmony rewriter, as the server decodes it). */
function calls(family: 'harmony' | 'mistral-v11', output: string) {
  const forced = forcedToolCall(family, functions, true);
  const stream = new ToolCallStream(TOOL_CALL_SYNTAX[family], forced.opening);
  if (family === 'harmony') {
    const rewriter = new HarmonyRewriter();
    stream.push(rewriter.push(output) + rewriter.flush());
  } else stream.push(output);
  return stream.end();
}

describe('required among several functions, name outside the JSON', () => {
  for (const family of ['harmony', 'mistral-v11'] as const) {
    it(`${family}: every sampled answer is one call to one of the functions, with schema-valid arguments`, () => {
      const forced = forcedToolCall(family, functions, true);
      const seen = new Set<string>();
      for (let seed = 1; seed <= 40; seed++) {
        const output = sample(new ConstrainedTokens(constraintLeads(forced.constraint), trie, [EOG]), seed);
        const answer = calls(family, output);
        expect(answer.complete, output).toBe(true);
        expect(answer.calls, output).toHaveLength(1);
        const call = answer.calls![0]!;
        const f = functions.find((fn) => fn.name === call.name);
        expect(f, output).toBeDefined();
        expect(validates(JSON.parse(call.arguments), f!.parameters), output).toBe(true);
        seen.add(call.name);
      }
      // The sampler is free to choose the function.
      expect([...seen].sort()).toEqual(['get', 'get_weather']);
    });
  }

  it('Mistral v11: [ARGS] is taken as its control token after a name, never inside the arguments', () => {
    const forced = forcedToolCall('mistral-v11', functions, true);
    expect(forced.prefill).toBe('[TOOL_CALLS]');
    const tokens = new ConstrainedTokens(constraintLeads(forced.constraint), trie, [EOG]);
    const allowedNow = (id: number) => ((tokens.mask()![id >>> 5]! >>> (id & 31)) & 1) === 1;
    expect(allowedNow(ARGS)).toBe(false);
    for (const ch of 'get') tokens.accept(pieces.indexOf(ch));
    // "get" is a whole name ([ARGS] next) and the start of "get_weather".
    expect(allowedNow(ARGS)).toBe(true);
    expect(allowedNow(pieces.indexOf('_weather'))).toBe(true);
    expect(allowedNow(pieces.indexOf('x'))).toBe(false);
    tokens.accept(ARGS);
    tokens.accept(pieces.indexOf('{"'));
    expect(allowedNow(ARGS)).toBe(false);
    expect(() => tokens.accept(ARGS)).toThrow(/does not continue/);
  });
});
