/**
 * The value keywords llama.cpp's schema-to-grammar holds to (minimum, maximum and their exclusive
 * forms, minLength, maxLength, pattern, format), held to character by character: for small
 * alphabets every string up to a few characters is tried, and the matcher must take exactly the
 * prefixes some valid value begins with and call whole exactly the valid values.
 */
import { describe, expect, it } from 'vitest';
import { isComplete, matchBytes, start, type MatchState } from '../../../src-main/core/constrained/json-matcher';
import { compileJsonSchema, ORDERED_KEYWORD, SchemaError } from '../../../src-main/core/constrained/json-schema';
import { forcedToolCall } from '../../../src-main/core/tool-calls/index';
import { utf8 } from './json-check';

type Verdict = 'dead' | 'prefix' | 'whole';

function verdict(begin: MatchState, text: string): Verdict {
  const s = matchBytes(begin, utf8(text));
  return s === null ? 'dead' : isComplete(s) ? 'whole' : 'prefix';
}

/** Every string over `alphabet` of at most `n` characters. */
function strings(alphabet: readonly string[], n: number): string[] {
  const out = [''];
  let level = [''];
  for (let i = 0; i < n; i++) {
    level = level.flatMap((s) => alphabet.map((c) => s + c));
    out.push(...level);
  }
  return out;
}

/** Checks the matcher on every text of `texts` against the valid set `valid` (whole values' texts). */
function expectExactly(schema: unknown, texts: readonly string[], valid: ReadonlySet<string>): void {
  const begin = start(compileJsonSchema(schema));
  const prefixes = new Set<string>();
  const longest = Math.max(...texts.map((t) => t.length));
  for (const v of valid) for (let i = 1; i <= Math.min(v.length, longest); i++) prefixes.add(v.slice(0, i));
  for (const t of texts) {
    if (t === '') continue;
    const want: Verdict = valid.has(t) ? 'whole' : prefixes.has(t) ? 'prefix' : 'dead';
    const got = verdict(begin, t);
    // A number may go on after a whole one ("12" and "120"): 'whole' then means only that it may end here.
    expect(got, `${JSON.stringify(schema)}: ${t}`).toBe(want);
  }
}

const INT_ALPHABET = ['-', '0', '1', '2', '5', '8', '9', '.'];
const window = Array.from({ length: 199_999 }, (_, i) => i - 99_999);

describe('integer ranges', () => {
  const ranges: [Record<string, number>, (n: number) => boolean][] = [
    [{ minimum: 18, maximum: 120 }, (n) => n >= 18 && n <= 120],
    [{ minimum: 0, maximum: 150 }, (n) => n >= 0 && n <= 150],
    [{ minimum: -15, maximum: 7 }, (n) => n >= -15 && n <= 7],
    [{ minimum: -120, maximum: -18 }, (n) => n >= -120 && n <= -18],
    [{ minimum: 5 }, (n) => n >= 5],
    [{ maximum: -3 }, (n) => n <= -3],
    [{ exclusiveMinimum: 0, exclusiveMaximum: 10 }, (n) => n > 0 && n < 10],
    [{ minimum: 1.5, maximum: 99.9 }, (n) => n >= 2 && n <= 99],
  ];
  for (const [bounds, inRange] of ranges) {
    it(`${JSON.stringify(bounds)}: takes exactly the prefixes of the integers in range, character by character`, () => {
      // Any prefix of at most 4 characters that some integer in range starts with has one of at most 5 digits.
      // "-0" is 0 written with a sign; it is taken where 0 is in range and so are negatives.
      const valid = new Set(window.filter(inRange).map(String));
      if (inRange(0) && inRange(-1)) valid.add('-0');
      expectExactly({ type: 'integer', ...bounds }, strings(INT_ALPHABET, 4), valid);
    });
  }

  it('18..120: "17" refused, "18" and "120" taken, "121" refused, no leading zeros', () => {
    const begin = start(compileJsonSchema({ type: 'integer', minimum: 18, maximum: 120 }));
    expect(verdict(begin, '17')).toBe('dead');
    expect(verdict(begin, '18')).toBe('whole');
    expect(verdict(begin, '120')).toBe('whole');
    expect(verdict(begin, '121')).toBe('dead');
    expect(verdict(begin, '12')).toBe('prefix'); // 120..129 starts so
    expect(verdict(begin, '13')).toBe('dead');
    expect(verdict(begin, '018')).toBe('dead');
    expect(verdict(begin, '-')).toBe('dead');
    expect(verdict(begin, '18.0')).toBe('dead');
    expect(verdict(begin, '1e2')).toBe('dead');
  });

  it("holds zod 4's safe-integer bounds", () => {
    const begin = start(compileJsonSchema({ type: 'integer', minimum: -9007199254740991, maximum: 9007199254740991 }));
    expect(verdict(begin, '9007199254740991')).toBe('whole');
    expect(verdict(begin, '9007199254740992')).toBe('dead');
    expect(verdict(begin, '-9007199254740991')).toBe('whole');
    expect(verdict(begin, '-90071992547409910')).toBe('dead');
    expect(verdict(begin, '42')).toBe('whole');
  });
});

describe('number ranges', () => {
  it('holds fractions to the bounds, exclusive ones too, and writes bounded numbers without an exponent', () => {
    const begin = start(compileJsonSchema({ type: 'number', exclusiveMinimum: 0.5, maximum: 2 }));
    const cases: [string, Verdict][] = [
      ['0', 'prefix'],
      ['0.5', 'prefix'], // 0.5 is out, 0.51 is in
      ['0.50', 'prefix'],
      ['0.51', 'whole'],
      ['0.4', 'dead'],
      ['1', 'whole'],
      ['2', 'whole'],
      ['2.0', 'whole'],
      ['2.00001', 'dead'],
      ['2.1', 'dead'],
      ['3', 'dead'],
      ['20', 'dead'],
      ['-', 'dead'],
      ['1e0', 'dead'],
    ];
    for (const [text, want] of cases) expect(verdict(begin, text), text).toBe(want);
    const negative = start(compileJsonSchema({ type: 'number', minimum: -1.25, exclusiveMaximum: 0 }));
    expect(verdict(negative, '-1.25')).toBe('whole');
    expect(verdict(negative, '-1.26')).toBe('dead');
    expect(verdict(negative, '-0.0001')).toBe('whole');
    expect(verdict(negative, '0')).toBe('dead');
    expect(verdict(negative, '-0')).toBe('prefix');
  });

  it('reads draft 4 boolean exclusiveMinimum and the stricter of two lower bounds', () => {
    const draft4 = start(compileJsonSchema({ type: 'integer', minimum: 3, exclusiveMinimum: true, maximum: 5 }));
    expect(verdict(draft4, '3')).toBe('dead');
    expect(verdict(draft4, '4')).toBe('whole');
    const both = start(compileJsonSchema({ type: 'integer', minimum: 3, exclusiveMinimum: 4, maximum: 9 }));
    expect(verdict(both, '4')).toBe('dead');
    expect(verdict(both, '5')).toBe('whole');
  });
});

describe('string lengths', () => {
  it('counts characters, an escape or a surrogate pair as one', () => {
    const schema = { type: 'string', minLength: 2, maxLength: 3 };
    const texts = strings(['"', 'a', 'é', '\\n', '\\u00e9'], 5);
    const valid = new Set<string>();
    const prefixes = new Set<string>();
    for (const t of texts) {
      if (!t.startsWith('"')) continue;
      let value: string | undefined;
      try {
        value = JSON.parse(t) as string;
      } catch {
        value = undefined;
      }
      if (value !== undefined && value.length >= 2 && value.length <= 3) valid.add(t);
    }
    for (const v of valid) for (let i = 1; i <= v.length; i++) prefixes.add(v.slice(0, i));
    const begin = start(compileJsonSchema(schema));
    for (const t of texts) {
      if (t === '') continue;
      // A text longer than its valid completions in this alphabet may still be a prefix of a longer one.
      const want: Verdict = valid.has(t) ? 'whole' : prefixes.has(t) ? 'prefix' : 'dead';
      const got = verdict(begin, t);
      if (want === 'dead' && got === 'prefix') {
        const open = t.slice(1);
        expect(t.startsWith('"') && !open.includes('"'), t).toBe(true);
        expect([...(JSON.parse(`"${open.replace(/\\$/, '')}"`) as string)].length, t).toBeLessThanOrEqual(3);
      } else expect(got, t).toBe(want);
    }
    const emoji = start(compileJsonSchema({ type: 'string', maxLength: 1 }));
    expect(verdict(emoji, '"\\ud83d\\ude00"')).toBe('whole');
    expect(verdict(emoji, '"😀"')).toBe('whole');
    expect(verdict(emoji, '"\\ud83d\\ude00a')).toBe('dead');
    expect(verdict(emoji, '"ab')).toBe('dead');
  });
});

describe('pattern', () => {
  const alphabet = ['a', 'b', 'c', '1', '-', '.'];
  const patterns = ['^a+$', '^(ab|c)*1?$', '^[a-b]{2,3}-[^a]$', '^a.c$', '^(?:a|bc){1,2}\\.$', '^\\d{2}[abc]?$', '^$'];
  for (const pattern of patterns) {
    it(`${pattern}: takes exactly the strings JavaScript's RegExp matches, character by character`, () => {
      const re = new RegExp(pattern, 'u');
      const all = strings(alphabet, 5);
      const valid = new Set(all.filter((s) => re.test(s)).map((s) => JSON.stringify(s)));
      // Prefix texts: the open string of every candidate up to 4 characters, judged against completions of up to 5.
      const texts = strings(alphabet, 4).map((s) => `"${s}`);
      const begin = start(compileJsonSchema({ type: 'string', pattern }));
      for (const t of [...texts, ...[...valid]]) {
        const want: Verdict = valid.has(t) ? 'whole' : [...valid].some((v) => v.startsWith(t)) ? 'prefix' : 'dead';
        expect(verdict(begin, t), `${pattern}: ${t}`).toBe(want);
      }
      for (const s of all) expect(verdict(begin, JSON.stringify(s)) === 'whole', `${pattern}: ${s}`).toBe(re.test(s));
    });
  }

  it('reads escapes in the JSON string as the characters they stand for', () => {
    const begin = start(compileJsonSchema({ type: 'string', pattern: '^"\\\\[\\n]$' }));
    expect(verdict(begin, '"\\"\\\\\\n"')).toBe('whole');
    expect(verdict(begin, '"\\u0022\\u005c\\u000a"')).toBe('whole');
    expect(verdict(begin, '"\\"\\\\\\t"')).toBe('dead');
  });
});

describe('format', () => {
  const cases: [string, string[], string[]][] = [
    [
      'date',
      ['2024-02-29', '0000-12-31', '1999-01-01'],
      ['2024-13-01', '2024-00-10', '2024-01-32', '24-01-01', '2024-1-01'],
    ],
    [
      'time',
      ['23:59:59Z', '00:00:00.123+02:00', '12:30:00-11:00'],
      ['24:00:00Z', '12:60:00Z', '12:00:00', '12:00:00.1Z'],
    ],
    [
      'date-time',
      ['2024-02-29T23:59:59Z', '2024-02-29T00:00:00.000+00:00'],
      ['2024-02-29 23:59:59Z', '2024-02-29T23:59:59'],
    ],
    [
      'uuid',
      ['123e4567-e89b-12d3-a456-426614174000', 'ABCDEF01-2345-6789-abcd-ef0123456789'],
      ['123e4567e89b12d3a456426614174000', '123e4567-e89b-12d3-a456-42661417400g'],
    ],
  ];
  for (const [format, good, bad] of cases) {
    it(`${format}: valid values whole, invalid ones refused`, () => {
      const begin = start(compileJsonSchema({ type: 'string', format }));
      for (const s of good) expect(verdict(begin, JSON.stringify(s)), s).toBe('whole');
      for (const s of bad) expect(verdict(begin, JSON.stringify(s)), s).toBe('dead');
    });
  }

  it('leaves the format to a pattern beside it, as llama.cpp does (zod writes both for z.uuid())', () => {
    const begin = start(compileJsonSchema({ type: 'string', format: 'uuid', pattern: '^[0-9a-f]{2}$' }));
    expect(verdict(begin, '"0a"')).toBe('whole');
    expect(verdict(begin, '"123e4567-e89b-12d3-a456-426614174000"')).toBe('dead');
  });

  it('ignores a format it does not know, as llama.cpp does (format is an annotation unless asserted)', () => {
    const begin = start(compileJsonSchema({ type: 'string', format: 'email' }));
    expect(verdict(begin, '"not an address"')).toBe('whole');
  });
});

describe('arrays', () => {
  it('holds minItems and maxItems', () => {
    const begin = start(
      compileJsonSchema({
        type: 'array',
        items: { type: 'integer', minimum: 1, maximum: 3 },
        minItems: 1,
        maxItems: 2,
      }),
    );
    expect(verdict(begin, '[]')).toBe('dead');
    expect(verdict(begin, '[1]')).toBe('whole');
    expect(verdict(begin, '[1,3]')).toBe('whole');
    expect(verdict(begin, '[1,3,')).toBe('dead');
    expect(verdict(begin, '[4')).toBe('dead');
  });
});

describe("zod 4's schema for z.object({ name: z.string(), age: z.number().int().min(0).max(150) })", () => {
  // What z.toJSONSchema writes for it (zod is not a dependency: written out by hand).
  const ZOD = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    properties: { name: { type: 'string' }, age: { type: 'integer', minimum: 0, maximum: 150 } },
    required: ['name', 'age'],
    additionalProperties: false,
  };

  it('compiles and holds the age to 0..150', () => {
    const begin = start(compileJsonSchema(ZOD));
    expect(verdict(begin, '{"name":"Ada","age":36}')).toBe('whole');
    expect(verdict(begin, '{"name": "Ada", "age": 150}')).toBe('whole');
    expect(verdict(begin, '{"name":"Ada","age":0}')).toBe('whole');
    expect(verdict(begin, '{"name":"Ada","age":151')).toBe('dead');
    expect(verdict(begin, '{"name":"Ada","age":-')).toBe('dead');
    expect(verdict(begin, '{"name":"Ada","age":36.5')).toBe('dead');
    expect(verdict(begin, '{"name":"Ada","age":1500')).toBe('dead');
  });
});

describe('refusals', () => {
  it('refuses what llama.cpp refuses, and what cannot be held to, naming the keyword, the construct and where', () => {
    const refused: [unknown, RegExp][] = [
      [{ type: 'string', pattern: 'abc' }, /"pattern" at #: the pattern must start with "\^" and end with "\$"/],
      [{ type: 'string', pattern: '^a' }, /"pattern" at #: the pattern must start with "\^"/],
      [
        { properties: { s: { type: 'string', pattern: '^(?=a)a$' } } },
        /"pattern" at #\/properties\/s: "\(\?=" \(lookaround/,
      ],
      [{ type: 'string', pattern: '^(a)\\1$' }, /"\\1" is not supported/],
      [{ type: 'string', pattern: '^\\bx$' }, /"\\b" is not supported/],
      [{ type: 'string', pattern: '^(ab$' }, /unbalanced "\("/],
      [{ type: 'string', pattern: '^[ab$' }, /unbalanced "\["/],
      [{ type: 'string', pattern: '^a{2,1}$' }, /out of order/],
      [{ type: 'string', pattern: '^*$' }, /repeats nothing/],
      [{ type: 'string', pattern: '^a{1000}{1000}$' }, /quantifier after a quantifier/],
      [{ type: 'string', pattern: '^(a{100}){100}$' }, /expands past \d+ states/],
      [{ type: 'string', pattern: '^a$', maxLength: 3 }, /"pattern" together with "maxLength" at #/],
      [{ type: 'string', format: 'date', minLength: 3 }, /"format" together with "minLength" at #/],
      [{ type: 'string', minLength: 3, maxLength: 2 }, /at least 3 characters and allows at most 2/],
      [{ type: 'string', minLength: -1 }, /"minLength" at # must be a whole number/],
      [{ type: 'integer', minimum: 'a' }, /"minimum" at # must be a number/],
      [{ type: 'integer', minimum: 1.2, maximum: 1.8 }, /no integer at # is within its minimum and maximum/],
      [{ type: 'number', exclusiveMinimum: 1, maximum: 1 }, /no number at #/],
      [{ type: 'object', properties: { n: { type: 'integer', multipleOf: 2 } } }, /"multipleOf" at #\/properties\/n$/],
    ];
    for (const [schema, message] of refused) {
      expect(() => compileJsonSchema(schema), JSON.stringify(schema)).toThrow(SchemaError);
      expect(() => compileJsonSchema(schema), JSON.stringify(schema)).toThrow(message);
    }
  });
});

describe('a forced tool call', () => {
  it('writes "name" before "arguments" (hermes) and "parameters" (llama3), as llama.cpp does', () => {
    const parameters = { type: 'object', properties: { n: { type: 'integer', minimum: 1, maximum: 3 } } };
    for (const [family, key] of [
      ['hermes', 'arguments'],
      ['llama3', 'parameters'],
    ] as const) {
      const forced = forcedToolCall(family, [{ name: 'f', parameters }], false);
      expect(forced.constraint.kind).toBe('json-schema');
      const schema = (forced.constraint as { schema: unknown }).schema;
      const begin = start(compileJsonSchema(schema));
      expect(verdict(begin, `{"name":"f","${key}":{"n":2}}`)).toBe('whole');
      expect(verdict(begin, `{"${key}"`)).toBe('dead');
      expect(verdict(begin, `{"name":"f","${key}":{"n":4`)).toBe('dead');
    }
  });

  it('holds an ordered object to the order of "properties", optional keys left out or not', () => {
    const begin = start(
      compileJsonSchema({
        type: 'object',
        properties: { a: { type: 'null' }, b: { type: 'null' }, c: { type: 'null' } },
        required: ['c'],
        additionalProperties: false,
        [ORDERED_KEYWORD]: true,
      }),
    );
    expect(verdict(begin, '{"c":null}')).toBe('whole');
    expect(verdict(begin, '{"a":null,"c":null}')).toBe('whole');
    expect(verdict(begin, '{"a":null,"b":null,"c":null}')).toBe('whole');
    expect(verdict(begin, '{"b":null,"a"')).toBe('dead');
    expect(verdict(begin, '{"c":null,')).toBe('dead');
    expect(verdict(begin, '{"a":null}')).toBe('dead');
    expect(() => compileJsonSchema({ properties: {}, [ORDERED_KEYWORD]: true })).toThrow(
      /needs "additionalProperties": false/,
    );
  });
});

describe('digits', () => {
  it("writes at most 16 digits in a number's integer part, fraction and exponent, as llama.cpp's grammar does", () => {
    const n16 = '1234567890123456';
    for (const schema of [{ type: 'integer' }, { type: 'number' }, { type: 'integer', minimum: 0 }]) {
      const begin = start(compileJsonSchema(schema));
      expect(verdict(begin, n16), JSON.stringify(schema)).toBe('whole');
      expect(verdict(begin, `-${n16}`), JSON.stringify(schema)).toBe(schema.minimum === 0 ? 'dead' : 'whole');
      expect(verdict(begin, `${n16}7`), JSON.stringify(schema)).toBe('dead');
    }
    const number = start(compileJsonSchema({ type: 'number' }));
    expect(verdict(number, `0.${n16}`)).toBe('whole');
    expect(verdict(number, `0.${n16}1`)).toBe('dead');
    expect(verdict(number, `1e${n16}`)).toBe('whole');
    expect(verdict(number, `1e-${n16}1`)).toBe('dead');
    const bounded = start(compileJsonSchema({ type: 'number', minimum: 0, maximum: 1 }));
    expect(verdict(bounded, `0.${n16}`)).toBe('whole');
    expect(verdict(bounded, `0.${n16}1`)).toBe('dead');
  });
});
