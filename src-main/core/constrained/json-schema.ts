/**
 * JSON Schema, the subset structured output needs, compiled to the node graph the JSON matcher
 * walks: type (object, array, string, number, integer, boolean, null, or a list of them),
 * properties, required, additionalProperties, items, minItems, maxItems, minimum, maximum,
 * exclusiveMinimum, exclusiveMaximum (held to exactly: number-range.ts), minLength, maxLength,
 * pattern and format (date, time, date-time, uuid: char-pattern.ts, llama.cpp's subset; a
 * pattern takes the place of a format beside it), enum,
 * const, anyOf and local $ref ("#", "#/$defs/…", "#/definitions/…"); enum and const values are
 * matched as their compact JSON text (an object value with its keys in the schema's order).
 * Annotations (title, description, …, and a format Gufo does not know, as in llama.cpp and as
 * JSON Schema's default format-annotation vocabulary has it) are ignored; any other keyword is a
 * SchemaError naming it and where it is, since a constraint that were silently dropped would let
 * through output the client's schema refuses.
 */
import { jsonOverBounds } from '../json-bounds';
import { compilePattern, FORMAT_PATTERNS, PatternError, type CharPattern } from './char-pattern';
import { RangeCheck } from './number-range';

export type JsonNode = AnyOfNode | ObjectNode | ArrayNode | StringNode | NumberNode | LiteralNode | RefNode;

export interface AnyOfNode {
  readonly kind: 'anyOf';
  readonly options: readonly JsonNode[];
}

export interface ObjectNode {
  readonly kind: 'object';
  readonly properties: ReadonlyMap<string, JsonNode>;
  /** Each property's key as its JSON string's bytes between the quotes, one char per byte (how keys are matched as they are written). */
  readonly keyTexts: ReadonlyMap<string, string>;
  readonly required: readonly string[];
  /** The schema of keys not in `properties`; null: no other keys. */
  readonly additional: JsonNode | null;
  /** Keys are written in the order of `properties` (ORDERED_KEYWORD); optional ones may be left out. */
  readonly ordered: boolean;
}

export interface ArrayNode {
  readonly kind: 'array';
  readonly items: JsonNode;
  readonly minItems: number;
  readonly maxItems: number;
}

export interface StringNode {
  readonly kind: 'string';
  /** Characters (a code point, or an escape, counts one), at least and at most. */
  readonly minLength: number;
  readonly maxLength: number;
  /** The characters must match this whole (pattern, format); null: any. */
  readonly pattern: CharPattern | null;
}

export interface NumberNode {
  readonly kind: 'number';
  readonly integer: boolean;
  /** minimum, maximum and their exclusive forms; null: unbounded. */
  readonly range: RangeCheck | null;
}

/** One of a few exact JSON texts (enum, const, true/false, null), as UTF-8. */
export interface LiteralNode {
  readonly kind: 'literal';
  readonly texts: readonly Uint8Array[];
}

/** A $ref, resolved once its target is compiled (a schema may refer to itself). */
export interface RefNode {
  readonly kind: 'ref';
  target: JsonNode | null;
}

export class SchemaError extends Error {
  override readonly name = 'SchemaError';
}

const utf8 = new TextEncoder();

function literal(values: readonly unknown[]): LiteralNode {
  return { kind: 'literal', texts: values.map((v) => utf8.encode(JSON.stringify(v))) };
}

const STRING: StringNode = { kind: 'string', minLength: 0, maxLength: Infinity, pattern: null };
const NUMBER: NumberNode = { kind: 'number', integer: false, range: null };
const INTEGER: NumberNode = { kind: 'number', integer: true, range: null };
const BOOLEAN = literal([true, false]);
const NULL = literal([null]);

/** Any JSON value: its first byte picks the one option that fits. */
export const ANY_VALUE: AnyOfNode = { kind: 'anyOf', options: [] };
/** Any JSON object (json_object mode). */
export const ANY_OBJECT: ObjectNode = {
  kind: 'object',
  properties: new Map(),
  keyTexts: new Map(),
  required: [],
  additional: ANY_VALUE,
  ordered: false,
};
const ANY_ARRAY: ArrayNode = { kind: 'array', items: ANY_VALUE, minItems: 0, maxItems: Infinity };
(ANY_VALUE.options as JsonNode[]).push(ANY_OBJECT, ANY_ARRAY, STRING, NUMBER, literal([true, false, null]));

/** Follows $refs to the node they stand for. */
export function deref(node: JsonNode): Exclude<JsonNode, RefNode> {
  let n = node;
  while (n.kind === 'ref') n = n.target!;
  return n;
}

/**
 * Gufo's own keyword, for the schemas it writes itself (a forced tool call's object: "name" before
 * "arguments", as llama.cpp's grammars write an object's properties in order): true, the keys in
 * the order of "properties"; only with "additionalProperties": false.
 */
export const ORDERED_KEYWORD = 'x-gufo-ordered';
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'];
const STRING_KEYWORDS = ['minLength', 'maxLength', 'pattern', 'format'];
const ANNOTATIONS = new Set([
  'title',
  'description',
  '$schema',
  '$id',
  '$comment',
  'default',
  'examples',
  'deprecated',
  'readOnly',
  'writeOnly',
  '$defs',
  'definitions',
]);
const KEYWORDS = new Set([
  'type',
  'properties',
  'required',
  'additionalProperties',
  'items',
  'minItems',
  'maxItems',
  ...NUMBER_KEYWORDS,
  ...STRING_KEYWORDS,
  'enum',
  'const',
  'anyOf',
  '$ref',
  ORDERED_KEYWORD,
]);
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;
type TypeName = (typeof TYPES)[number];

type Schema = Record<string, unknown>;
const isSchemaObject = (v: unknown): v is Schema => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Bounds on a schema, checked before compiling it (which recurses): a client's schema can nest
 * thousands of levels in a few kilobytes. Objects and arrays count as levels ("properties" and
 * the object around it are two); values count keywords, property schemas and enum values alike.
 */
export const MAX_SCHEMA_DEPTH = 64;
export const MAX_SCHEMA_VALUES = 20_000;

/** Compiles `schema` (a JSON Schema object or boolean); errors name the keyword and its JSON pointer ("#/properties/n/minimum"). */
export function compileJsonSchema(schema: unknown): JsonNode {
  const over = jsonOverBounds(schema, { depth: MAX_SCHEMA_DEPTH, values: MAX_SCHEMA_VALUES });
  if (over === 'depth')
    throw new SchemaError(
      `the schema nests objects and arrays more than ${MAX_SCHEMA_DEPTH} deep, the most Gufo compiles`,
    );
  if (over === 'values')
    throw new SchemaError(
      `the schema holds more than ${MAX_SCHEMA_VALUES} values (keywords, schemas, enum values), the most Gufo compiles`,
    );
  return new SchemaCompiler(schema).compile(schema, '#');
}

class SchemaCompiler {
  private readonly refs = new Map<string, RefNode>();

  constructor(private readonly root: unknown) {}

  compile(schema: unknown, at: string): JsonNode {
    const node = this.node(schema, at);
    this.checkRefs();
    return node;
  }

  private node(schema: unknown, at: string): JsonNode {
    if (schema === true) return ANY_VALUE;
    if (schema === false) throw new SchemaError(`the schema at ${at} is false: no value is valid`);
    if (!isSchemaObject(schema)) throw new SchemaError(`the schema at ${at} must be an object or a boolean`);
    for (const key of Object.keys(schema)) {
      if (!KEYWORDS.has(key) && !ANNOTATIONS.has(key))
        throw new SchemaError(`unsupported JSON Schema keyword "${key}" at ${at}`);
    }
    const constraints = Object.keys(schema).filter((k) => KEYWORDS.has(k));
    const alone = (keyword: string) => {
      const other = constraints.find((k) => k !== keyword);
      if (other)
        throw new SchemaError(
          `"${keyword}" together with "${other}" at ${at} is not supported: put the constraints inside the "${keyword}"`,
        );
    };
    if ('$ref' in schema) {
      alone('$ref');
      return this.ref(schema.$ref, at);
    }
    if ('anyOf' in schema) {
      alone('anyOf');
      const options = schema.anyOf;
      if (!Array.isArray(options) || options.length === 0)
        throw new SchemaError(`"anyOf" at ${at} must be a non-empty list of schemas`);
      return { kind: 'anyOf', options: options.map((o, i) => this.node(o, `${at}/anyOf/${i}`)) };
    }
    const types = this.types(schema, at);
    if ('enum' in schema || 'const' in schema) return this.literals(schema, types, at);
    if (!types) return ANY_VALUE;
    const nodes = types.map((t) => this.typed(t, schema, at));
    return nodes.length === 1 ? nodes[0]! : { kind: 'anyOf', options: nodes };
  }

  /** The types a schema allows: its "type", else what its keywords imply, else null (any). */
  private types(schema: Schema, at: string): TypeName[] | null {
    const t = schema.type;
    if (t === undefined) {
      if (['properties', 'required', 'additionalProperties'].some((k) => k in schema)) return ['object'];
      if (['items', 'minItems', 'maxItems'].some((k) => k in schema)) return ['array'];
      // As llama.cpp reads them: a schema with only number (string) keywords is a number (string).
      if (NUMBER_KEYWORDS.some((k) => k in schema)) return ['number'];
      if (STRING_KEYWORDS.some((k) => k in schema)) return ['string'];
      return null;
    }
    const list = Array.isArray(t) ? t : [t];
    if (list.length === 0) throw new SchemaError(`"type" at ${at} is an empty list`);
    for (const name of list) {
      if (!TYPES.includes(name as TypeName))
        throw new SchemaError(`unsupported type ${JSON.stringify(name)} at ${at}/type (one of ${TYPES.join(', ')})`);
    }
    return [...new Set(list as TypeName[])];
  }

  private typed(type: TypeName, schema: Schema, at: string): JsonNode {
    switch (type) {
      case 'object':
        return this.object(schema, at);
      case 'array':
        return this.array(schema, at);
      case 'string':
        return this.string(schema, at);
      case 'number':
      case 'integer':
        return this.number(type === 'integer', schema, at);
      case 'boolean':
        return BOOLEAN;
      case 'null':
        return NULL;
    }
  }

  private object(schema: Schema, at: string): ObjectNode {
    const props = schema.properties ?? {};
    if (!isSchemaObject(props)) throw new SchemaError(`"properties" at ${at} must be an object`);
    const properties = new Map<string, JsonNode>();
    const keyTexts = new Map<string, string>();
    for (const [name, sub] of Object.entries(props)) {
      properties.set(name, this.node(sub, `${at}/properties/${pointerToken(name)}`));
      keyTexts.set(name, byteString(utf8.encode(JSON.stringify(name).slice(1, -1))));
    }
    const required = schema.required ?? [];
    if (!Array.isArray(required) || !required.every((r) => typeof r === 'string'))
      throw new SchemaError(`"required" at ${at} must be a list of property names`);
    const unknown = required.find((r) => !properties.has(r));
    if (unknown !== undefined)
      throw new SchemaError(`"required" at ${at} names "${unknown}", which is not in "properties"`);
    const extra = schema.additionalProperties;
    const additional =
      extra === undefined || extra === true
        ? ANY_VALUE
        : extra === false
          ? null
          : this.node(extra, `${at}/additionalProperties`);
    const ordered = schema[ORDERED_KEYWORD];
    if (ordered !== undefined && ordered !== true && ordered !== false)
      throw new SchemaError(`"${ORDERED_KEYWORD}" at ${at} must be true or false`);
    if (ordered && additional !== null)
      throw new SchemaError(`"${ORDERED_KEYWORD}" at ${at} needs "additionalProperties": false`);
    return {
      kind: 'object',
      properties,
      keyTexts,
      required: [...new Set(required)],
      additional,
      ordered: ordered === true,
    };
  }

  private array(schema: Schema, at: string): ArrayNode {
    const count = (key: 'minItems' | 'maxItems', fallback: number): number => {
      const v = schema[key];
      if (v === undefined) return fallback;
      if (!Number.isSafeInteger(v) || (v as number) < 0)
        throw new SchemaError(`"${key}" at ${at} must be a whole number of at least 0`);
      return v as number;
    };
    const minItems = count('minItems', 0);
    let maxItems = count('maxItems', Infinity);
    let items: JsonNode = ANY_VALUE;
    if (schema.items === false) maxItems = 0;
    else if (schema.items !== undefined) items = this.node(schema.items, `${at}/items`);
    if (minItems > maxItems)
      throw new SchemaError(`the array at ${at} needs at least ${minItems} items and allows at most ${maxItems}`);
    return { kind: 'array', items, minItems, maxItems };
  }

  private number(integer: boolean, schema: Schema, at: string): NumberNode {
    const bound = (key: string): number | boolean | undefined => {
      const v = schema[key];
      if (v === undefined) return undefined;
      const draft4 = key.startsWith('exclusive') && typeof v === 'boolean';
      if (!draft4 && (typeof v !== 'number' || !Number.isFinite(v)))
        throw new SchemaError(`"${key}" at ${at} must be a number`);
      return v;
    };
    const min = bound('minimum');
    const max = bound('maximum');
    const exMin = bound('exclusiveMinimum');
    const exMax = bound('exclusiveMaximum');
    if ([min, max, exMin, exMax].every((v) => v === undefined)) return integer ? INTEGER : NUMBER;
    // The stricter of "minimum" and a numeric "exclusiveMinimum" (draft 4's boolean one makes "minimum" exclusive).
    const side = (inclusive: number | boolean | undefined, exclusive: number | boolean | undefined, lower: boolean) => {
      const inc = typeof inclusive === 'number' ? inclusive : null;
      if (typeof exclusive === 'boolean') return { v: inc, ex: exclusive && inc !== null };
      if (exclusive === undefined) return { v: inc, ex: false };
      if (inc === null) return { v: exclusive, ex: true };
      const exStricter = lower ? exclusive >= inc : exclusive <= inc;
      return exStricter ? { v: exclusive, ex: true } : { v: inc, ex: false };
    };
    const lo = side(min, exMin, true);
    const hi = side(max, exMax, false);
    const range = new RangeCheck(
      {
        min: lo.v === null ? null : String(lo.v),
        minExclusive: lo.ex,
        max: hi.v === null ? null : String(hi.v),
        maxExclusive: hi.ex,
      },
      integer,
    );
    if (range.empty())
      throw new SchemaError(`no ${integer ? 'integer' : 'number'} at ${at} is within its minimum and maximum`);
    return { kind: 'number', integer, range };
  }

  private string(schema: Schema, at: string): StringNode {
    const count = (key: 'minLength' | 'maxLength', fallback: number): number => {
      const v = schema[key];
      if (v === undefined) return fallback;
      if (!Number.isSafeInteger(v) || (v as number) < 0)
        throw new SchemaError(`"${key}" at ${at} must be a whole number of at least 0`);
      return v as number;
    };
    const minLength = count('minLength', 0);
    const maxLength = count('maxLength', Infinity);
    if (minLength > maxLength)
      throw new SchemaError(
        `the string at ${at} needs at least ${minLength} characters and allows at most ${maxLength}`,
      );
    let source: string | null = null;
    let keyword = 'pattern';
    if (schema.pattern !== undefined) {
      if (typeof schema.pattern !== 'string') throw new SchemaError(`"pattern" at ${at} must be a string`);
      source = schema.pattern;
    }
    const format = schema.format;
    if (format !== undefined && typeof format !== 'string') throw new SchemaError(`"format" at ${at} must be a string`);
    const formatPattern =
      format === undefined ? undefined : FORMAT_PATTERNS[/^uuid[1-5]$/.test(format) ? 'uuid' : format];
    // With a pattern, the format is left to it (as llama.cpp does; zod writes both for z.uuid(),
    // z.iso.date(), …): format is an annotation unless a validator is told to assert it.
    if (formatPattern !== undefined && source === null) {
      source = formatPattern;
      keyword = 'format';
    }
    if (source === null) {
      if (minLength === 0 && maxLength === Infinity) return STRING;
      return { kind: 'string', minLength, maxLength, pattern: null };
    }
    const lengthKey = 'minLength' in schema ? 'minLength' : 'maxLength' in schema ? 'maxLength' : null;
    if (lengthKey) throw new SchemaError(`"${keyword}" together with "${lengthKey}" at ${at} is not supported`);
    try {
      return { kind: 'string', minLength: 0, maxLength: Infinity, pattern: compilePattern(source) };
    } catch (err) {
      if (err instanceof PatternError) throw new SchemaError(`unsupported "pattern" at ${at}: ${err.message}`);
      throw err;
    }
  }

  /** enum / const: exact texts (compact, as JSON.stringify writes them), those of the allowed types. */
  private literals(schema: Schema, types: readonly TypeName[] | null, at: string): LiteralNode {
    if ('enum' in schema && 'const' in schema)
      throw new SchemaError(`"enum" together with "const" at ${at} is not supported`);
    const values = 'const' in schema ? [schema.const] : schema.enum;
    if (!Array.isArray(values) || values.length === 0)
      throw new SchemaError(`"enum" at ${at} must be a non-empty list`);
    const allowed = types
      ? values.filter((v) => types.includes(jsonType(v)) || (types.includes('number') && jsonType(v) === 'integer'))
      : values;
    if (allowed.length === 0)
      throw new SchemaError(`no value of ${'const' in schema ? '"const"' : '"enum"'} at ${at} has the schema's type`);
    return literal(allowed);
  }

  private ref(ref: unknown, at: string): RefNode {
    if (typeof ref !== 'string' || !(ref === '#' || ref.startsWith('#/'))) {
      throw new SchemaError(
        `"$ref" at ${at} must point inside the schema ("#", "#/$defs/name"): got ${JSON.stringify(ref)}`,
      );
    }
    let node = this.refs.get(ref);
    if (!node) {
      node = { kind: 'ref', target: null };
      this.refs.set(ref, node);
      node.target = this.node(this.resolve(ref, at), ref);
    }
    return node;
  }

  private resolve(ref: string, at: string): unknown {
    let target: unknown = this.root;
    for (const token of ref.split('/').slice(1)) {
      const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
      if (!isSchemaObject(target) || !(key in target))
        throw new SchemaError(`"$ref" at ${at} points to ${ref}, which is not in the schema`);
      target = target[key];
    }
    return target;
  }

  /** A schema that can only be itself (a $ref cycle, or an anyOf that contains itself) matches nothing: refused. */
  private checkRefs(): void {
    const done = new Set<JsonNode>();
    const path = new Set<JsonNode>();
    const walk = (node: JsonNode, ref: string): void => {
      if (done.has(node)) return;
      if (path.has(node)) throw new SchemaError(`"$ref": "${ref}" leads back to itself before any value is written`);
      path.add(node);
      if (node.kind === 'ref') walk(node.target!, ref);
      else if (node.kind === 'anyOf') for (const o of node.options) walk(o, ref);
      path.delete(node);
      done.add(node);
    };
    for (const [ref, node] of this.refs) walk(node, ref);
  }
}

function jsonType(v: unknown): TypeName {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v as TypeName;
}

/** A JSON pointer token for a property name. */
function pointerToken(name: string): string {
  return name.replaceAll('~', '~0').replaceAll('/', '~1');
}

/** Bytes as a string of one char per byte (cheap to compare and to extend one byte at a time). */
function byteString(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += String.fromCharCode(b);
  return s;
}
