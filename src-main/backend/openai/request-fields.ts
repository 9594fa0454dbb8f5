/** Reading one field of a JSON request body, or a 400 naming the field and what it must be. */
import { jsonOverBounds } from '../../core/json-bounds';
import { isRecord } from '../chat/settings';
import { invalidParam } from './errors';

/** How deep objects and arrays may nest in one field of a request (a json_schema's schema has its own, lower limit). */
export const MAX_FIELD_DEPTH = 128;

export class RequestFields {
  constructor(readonly body: Record<string, unknown>) {}

  /**
   * The body of a request, which must be a JSON object. Its fields are checked for depth first,
   * ignored ones too: a value thousands of levels deep takes a few kilobytes, and any recursive
   * walk of it (a schema compiler, JSON.stringify, a copy to the engine) would overflow the stack.
   */
  static of(body: unknown): RequestFields {
    if (!isRecord(body)) throw invalidParam('body', 'the request body must be a JSON object', 'invalid_body');
    for (const [name, value] of Object.entries(body)) {
      if (jsonOverBounds(value, { depth: MAX_FIELD_DEPTH, values: Infinity }) === 'depth') {
        throw invalidParam(
          name,
          `"${name}" nests objects and arrays more than ${MAX_FIELD_DEPTH} deep, the most Gufo accepts`,
          'nested_too_deep',
        );
      }
    }
    return new RequestFields(body);
  }

  /** Whether the field has a value (null counts as absent, as OpenAI's API treats it). */
  has(name: string): boolean {
    return this.body[name] !== undefined && this.body[name] !== null;
  }

  string(name: string): string {
    const v = this.body[name];
    if (!this.has(name)) throw invalidParam(name, `"${name}" is required`, 'missing_required_parameter');
    if (typeof v !== 'string' || v === '') throw invalidParam(name, `"${name}" must be a non-empty string`);
    return v;
  }

  number(name: string, min: number, max: number, fallback: number): number {
    if (!this.has(name)) return fallback;
    const v = this.body[name];
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max)
      throw invalidParam(name, `"${name}" must be a number from ${min} to ${max}`);
    return v;
  }

  integer<T extends number | null>(name: string, min: number, max: number, fallback: T): number | T {
    if (!this.has(name)) return fallback;
    const v = this.body[name];
    if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max)
      throw invalidParam(name, `"${name}" must be a whole number from ${min} to ${max}`);
    return v as number;
  }

  boolean(name: string, fallback: boolean): boolean {
    if (!this.has(name)) return fallback;
    const v = this.body[name];
    if (typeof v !== 'boolean') throw invalidParam(name, `"${name}" must be true or false`);
    return v;
  }

  /** A field Gufo does not serve: refused with `message` unless absent or a value that means "off". */
  unsupported(name: string, off: (value: unknown) => boolean, message: string): void {
    if (this.has(name) && !off(this.body[name])) throw invalidParam(name, message, 'unsupported_parameter');
  }
}
