/** A JSON Schema from a request (response_format, Ollama's format, a tool's parameters), checked before any engine work. */
import { compileJsonSchema, SchemaError } from '../../core/constrained/json-schema';
import type { JsonConstraint } from '../../core/constrained/token-constraint';
import { invalidParam } from './errors';

/**
 * Output held to the JSON Schema `schema`, compiled here so that one Gufo cannot hold to is a 400
 * naming the keyword and where it is (`at`: the schema's place in the request), before any engine work.
 */
export function schemaConstraint(schema: unknown, param: string, at: string): JsonConstraint {
  try {
    compileJsonSchema(schema);
  } catch (err) {
    if (err instanceof SchemaError) throw invalidParam(param, `${at}: ${err.message}`, 'invalid_json_schema');
    throw err;
  }
  return { kind: 'json-schema', schema };
}
