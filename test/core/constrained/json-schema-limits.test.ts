/**
 * A schema is a client's JSON, as deep and as large as it likes: the compiler (which recurses)
 * refuses one past its bounds with a SchemaError naming the bound, before it recurses.
 */
import { describe, expect, it } from 'vitest';
import {
  compileJsonSchema,
  MAX_SCHEMA_DEPTH,
  MAX_SCHEMA_VALUES,
  SchemaError,
} from '../../../src-main/core/constrained/json-schema';

/** `levels` objects, each the only property of the one around it. */
function nestedSchema(levels: number): unknown {
  return JSON.parse('{"type":"object","properties":{"a":'.repeat(levels) + '{"type":"string"}' + '}}'.repeat(levels));
}

function refusal(schema: unknown): unknown {
  try {
    compileJsonSchema(schema);
  } catch (err) {
    return err;
  }
  return null;
}

describe('schema bounds', () => {
  it('refuses a schema nested thousands of levels deep with the depth limit, not a stack overflow', () => {
    const err = refusal(nestedSchema(3000));
    expect(err).toBeInstanceOf(SchemaError);
    expect((err as Error).message).toContain(`more than ${MAX_SCHEMA_DEPTH} deep`);
  });

  it('counts arrays and enum values as levels too', () => {
    const deep = new RegExp(`more than ${MAX_SCHEMA_DEPTH} deep`);
    expect(() => compileJsonSchema({ enum: [JSON.parse('['.repeat(20_000) + ']'.repeat(20_000))] })).toThrow(deep);
    expect(() =>
      compileJsonSchema(JSON.parse('{"anyOf":['.repeat(3000) + '{"type":"null"}' + ']}'.repeat(3000))),
    ).toThrow(deep);
  });

  it('compiles a schema at the depth limit, and refuses one level more', () => {
    // An object level is two JSON levels (the schema, its "properties"); an "items" level is one.
    const levels = Math.floor((MAX_SCHEMA_DEPTH - 1) / 2);
    let schema = nestedSchema(levels);
    for (let depth = 2 * levels + 1; depth < MAX_SCHEMA_DEPTH; depth++) schema = { items: schema };
    expect(refusal(schema)).toBeNull();
    expect((refusal({ items: schema }) as Error).message).toContain(`more than ${MAX_SCHEMA_DEPTH} deep`);
  });

  it('refuses a schema with more values than the size limit', () => {
    const err = refusal({ enum: Array.from({ length: MAX_SCHEMA_VALUES }, (_, i) => i) });
    expect(err).toBeInstanceOf(SchemaError);
    expect((err as Error).message).toContain(`more than ${MAX_SCHEMA_VALUES} values`);
    expect(refusal({ enum: Array.from({ length: MAX_SCHEMA_VALUES - 2 }, (_, i) => i) })).toBeNull();
  });
});
