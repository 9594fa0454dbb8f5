/**
 * JSON Schema through the matcher, checked by an independent validator (json-check.ts): random
 * walks of the matcher end in documents the schema accepts, and random documents (valid ones and
 * corrupted ones) are accepted exactly when the validator says they are valid. Keywords outside
 * the subset are refused with their name and place.
 */
import { describe, expect, it } from 'vitest';
import {
  advance,
  isComplete,
  matchBytes,
  start,
  type MatchState,
} from '../../../src-main/core/constrained/json-matcher';
import { compileJsonSchema, SchemaError } from '../../../src-main/core/constrained/json-schema';
import { mulberry32, type Rng } from '../../support/random';
import {
  findCompletion,
  parseBytes,
  randomStringValue,
  resolve,
  schemaWords,
  utf8,
  validates,
  type Schema,
} from './json-check';

const SCHEMAS: Record<string, Schema> = {
  answer: {
    type: 'object',
    properties: { answer: { enum: ['yes', 'no'] }, n: { type: 'integer' } },
    required: ['answer', 'n'],
    additionalProperties: false,
  },
  person: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'ignored' },
      tags: { type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 3 },
      age: { type: ['integer', 'null'] },
      scores: { type: 'object', additionalProperties: { type: 'number' } },
    },
    required: ['name', 'tags'],
  },
  tree: {
    $defs: {
      node: {
        type: 'object',
        properties: {
          value: { type: 'number' },
          children: { type: 'array', items: { $ref: '#/$defs/node' }, maxItems: 2 },
        },
        required: ['value'],
        additionalProperties: false,
      },
    },
    $ref: '#/$defs/node',
  },
  either: {
    anyOf: [
      { type: 'string' },
      { type: 'object', properties: { a: { const: 1 } }, required: ['a'], additionalProperties: false },
      { type: 'array', items: { type: 'boolean' }, maxItems: 2 },
      { enum: [1, 12, 'x', null] },
    ],
  },
  bounded: {
    type: 'object',
    properties: {
      age: { type: 'integer', minimum: 0, maximum: 150 },
      t: { type: ['number', 'null'], exclusiveMinimum: -2.5, maximum: 10 },
      code: { type: 'string', pattern: '^[A-Z]{2}-\\d{1,3}$', examples: ['AB-1', 'ZZ-999'] },
      day: { type: 'string', format: 'date', examples: ['2024-02-29'] },
      nick: { type: 'string', minLength: 1, maxLength: 4 },
      ids: {
        type: 'array',
        items: { type: 'string', format: 'uuid', examples: ['123e4567-e89b-12d3-a456-426614174000'] },
        maxItems: 2,
      },
    },
    required: ['age', 'code'],
    additionalProperties: false,
  },
  keys: {
    type: 'object',
    properties: {
      'a"b/é': { type: 'boolean' },
      x: { type: 'null' },
      xy: { type: 'integer' },
      'x\ny': { const: [1, { b: 'c' }] },
    },
    additionalProperties: false,
  },
};

/** A random value valid for `schema` (the generator knows the subset, the matcher is not involved). */
function sample(rng: Rng, schema: Schema, root: Schema, depth = 0): unknown {
  if (schema === true || schema === false) return rng.int(2) === 0 ? 'free' : { k: [1, null] };
  const s = schema;
  if (typeof s.$ref === 'string') return sample(rng, resolve(root, s.$ref), root, depth);
  if (Array.isArray(s.anyOf)) return sample(rng, s.anyOf[rng.int(s.anyOf.length)] as Schema, root, depth);
  if ('const' in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[rng.int(s.enum.length)];
  if (Array.isArray(s.examples)) return s.examples[rng.int(s.examples.length)];
  const types = s.type === undefined ? ['object'] : Array.isArray(s.type) ? (s.type as string[]) : [s.type as string];
  switch (types[rng.int(types.length)]) {
    case 'object': {
      const props = (s.properties ?? {}) as Record<string, Schema>;
      const required = (s.required ?? []) as string[];
      const out: Record<string, unknown> = {};
      for (const [k, sub] of Object.entries(props))
        if (required.includes(k) || (depth < 3 && rng.int(2) === 0)) out[k] = sample(rng, sub, root, depth + 1);
      if (s.additionalProperties !== false && rng.int(3) === 0)
        out[`extra${rng.int(9)}`] = sample(rng, (s.additionalProperties as Schema) ?? true, root, depth + 1);
      return shuffled(rng, out);
    }
    case 'array': {
      const min = (s.minItems as number) ?? 0;
      const max = Math.min((s.maxItems as number) ?? Infinity, depth < 3 ? min + 3 : min);
      return Array.from({ length: min + rng.int(max - min + 1) }, () =>
        sample(rng, (s.items as Schema) ?? true, root, depth + 1),
      );
    }
    case 'string': {
      const text = randomStringValue(rng);
      return typeof s.maxLength === 'number' ? [...text].slice(0, s.maxLength).join('') || 'x' : text;
    }
    case 'integer':
      return typeof s.maximum === 'number' ? rng.int(s.maximum + 1) : rng.int(2001) - 1000;
    case 'number':
      return typeof s.maximum === 'number'
        ? [0, -1.5, 0.125, 9.75, 10][rng.int(5)] // a bounded number is written without an exponent
        : [0, -1.5, 3.25e-7, 12, 1e21][rng.int(5)];
    case 'boolean':
      return rng.int(2) === 0;
    default:
      return null;
  }
}

function shuffled(rng: Rng, o: Record<string, unknown>): Record<string, unknown> {
  const entries = Object.entries(o);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries);
}

const WRONG = ['s', 7, 2.5, true, null, [], {}, ['s'], { a: 1 }];

/** `value` with one random change somewhere: a key dropped or added, a value of another type, an item more. */
function corrupt(rng: Rng, value: unknown): unknown {
  if (Array.isArray(value)) {
    const copy = [...(value as unknown[])];
    if (copy.length > 0 && rng.int(2) === 0) {
      const i = rng.int(copy.length);
      copy[i] = corrupt(rng, copy[i]);
    } else copy.push(WRONG[rng.int(WRONG.length)]);
    return copy;
  }
  if (typeof value === 'object' && value !== null) {
    const copy: Record<string, unknown> = { ...value };
    const keys = Object.keys(copy);
    const kind = rng.int(3);
    if (kind === 0 && keys.length > 0) delete copy[keys[rng.int(keys.length)]!];
    else if (kind === 1 && keys.length > 0) {
      const k = keys[rng.int(keys.length)]!;
      copy[k] = corrupt(rng, copy[k]);
    } else copy[['zz', 'n', 'answer', 'value'][rng.int(4)]!] = WRONG[rng.int(WRONG.length)];
    return copy;
  }
  return WRONG[rng.int(WRONG.length)];
}

const accepts = (state: MatchState, text: string) => {
  const s = matchBytes(state, utf8(text));
  return s !== null && isComplete(s);
};

describe('JSON Schema through the matcher', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`${name}: random walks of the matcher end in documents the schema accepts`, () => {
      const rng = mulberry32(name.length * 101);
      const begin = start(compileJsonSchema(schema));
      const words = schemaWords(schema);
      for (let walk = 0; walk < 150; walk++) {
        let s = begin;
        const bytes: number[] = [];
        // Random bytes among those the matcher takes, then the shortest way to a whole document.
        for (let n = 0; n < 60 && !(isComplete(s) && rng.int(4) === 0); n++) {
          const options = [...Array(256).keys()].filter((b) => advance(s, b) !== null);
          if (options.length === 0) break;
          const b = options[rng.int(options.length)]!;
          bytes.push(b);
          s = advance(s, b)!;
        }
        const rest = findCompletion(s, advance, isComplete, words);
        expect(rest, JSON.stringify(new TextDecoder().decode(Uint8Array.from(bytes)))).not.toBeNull();
        const doc = Uint8Array.from([...bytes, ...rest!]);
        const parsed = parseBytes(doc);
        expect(parsed, new TextDecoder().decode(doc)).toBeDefined();
        expect(validates(parsed!.value, schema), new TextDecoder().decode(doc)).toBe(true);
      }
    });

    it(`${name}: accepts a document exactly when the schema does`, () => {
      const rng = mulberry32(name.length * 7);
      const begin = start(compileJsonSchema(schema));
      let valid = 0;
      for (let n = 0; n < 400; n++) {
        const good = sample(rng, schema, schema);
        const value = rng.int(2) === 0 ? good : corrupt(rng, good);
        const expected = validates(value, schema);
        if (expected) valid++;
        const compact = JSON.stringify(value);
        expect(accepts(begin, compact), compact).toBe(expected);
        // enum and const objects and arrays are matched as their compact text: other layouts of them are refused.
        const pretty = JSON.stringify(value, null, 2);
        if (accepts(begin, pretty)) expect(expected, pretty).toBe(true);
        else if (!/"const": \[|"enum"/.test(JSON.stringify(schema, null, 1))) expect(expected, pretty).toBe(false);
      }
      expect(valid).toBeGreaterThan(150);
      expect(valid).toBeLessThan(350);
    });
  }

  it('writes the keys it allows as they are spelt in the schema, each once, and closes only with the required ones', () => {
    const answer = start(compileJsonSchema(SCHEMAS.answer!));
    expect(accepts(answer, '{"n": 3, "answer": "no"}')).toBe(true);
    expect(matchBytes(answer, utf8('{"answer":"yes","n":1,'))).toBeNull(); // no key left to write
    expect(matchBytes(answer, utf8('{"answer":"yes","answer"'))).toBeNull();
    expect(matchBytes(answer, utf8('{"answer":"yes"}'))).toBeNull();
    expect(matchBytes(answer, utf8('{"\\u0061'))).toBeNull();
    expect(matchBytes(answer, utf8('{"answer":"maybe'))).toBeNull();
    expect(matchBytes(answer, utf8('{"n":1.5'))).toBeNull();
    expect(matchBytes(answer, utf8('{"n":1e3'))).toBeNull();
    // With other keys allowed, any spelling reads as its key.
    const person = start(compileJsonSchema(SCHEMAS.person!));
    expect(accepts(person, '{"n\\u0061me":"x","tags":["a"]}')).toBe(true);
    expect(matchBytes(person, utf8('{"name":"x","n\\u0061me"'))).toBeNull();
  });

  it('refuses what it cannot hold to, naming the keyword and where it is', () => {
    const refused: [unknown, RegExp][] = [
      [{ type: 'object', properties: { n: { type: 'integer', multipleOf: 2 } } }, /"multipleOf" at #\/properties\/n$/],
      [{ type: 'string', pattern: '^a' }, /"pattern" at #: the pattern must start with "\^" and end with "\$"/],
      [{ oneOf: [{ type: 'string' }] }, /"oneOf" at #$/],
      [{ type: 'array', items: { type: 'string', pattern: '^(?!a)$' } }, /"pattern" at #\/items: "\(\?!"/],
      [{ type: 'strin' }, /unsupported type "strin" at #\/type/],
      [{ type: 'object', required: ['x'] }, /"required" at # names "x", which is not in "properties"/],
      [{ type: 'array', minItems: 3, maxItems: 2 }, /at least 3 items and allows at most 2/],
      [{ enum: [] }, /"enum" at # must be a non-empty list/],
      [{ type: 'string', enum: [1, 2] }, /no value of "enum" at # has the schema's type/],
      [{ $ref: 'https://example.com/s.json' }, /must point inside the schema/],
      [{ $ref: '#/$defs/missing' }, /points to #\/\$defs\/missing, which is not in the schema/],
      [{ $ref: '#' }, /leads back to itself/],
      [{ anyOf: [{ type: 'string' }], type: 'string' }, /"anyOf" together with "type"/],
      [{ properties: { a: false } }, /the schema at #\/properties\/a is false/],
      [[1], /the schema at # must be an object or a boolean/],
    ];
    for (const [schema, message] of refused) {
      expect(() => compileJsonSchema(schema), JSON.stringify(schema)).toThrow(SchemaError);
      expect(() => compileJsonSchema(schema), JSON.stringify(schema)).toThrow(message);
    }
  });
});
