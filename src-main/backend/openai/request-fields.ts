/** Reading one field of a JSON request body, or a 400 naming the field and what it must be. */
import { isRecord } from '../chat/settings';
import { invalidParam } from './errors';

export class RequestFields {
  constructor(readonly body: Record<string, unknown>) {}

  /** The body of a request, which must be a JSON object. */
  static of(body: unknown): RequestFields {
    if (!isRecord(body)) throw invalidParam('body', 'the request body must be a JSON object', 'invalid_body');
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
    if (typeof v !== 'number' || !Number.isFinite(v) || v < min || v > max) throw invalidParam(name, `"${name}" must be a number from ${min} to ${max}`);
    return v;
  }

  integer<T extends number | null>(name: string, min: number, max: number, fallback: T): number | T {
    if (!this.has(name)) return fallback;
    const v = this.body[name];
    if (!Number.isSafeInteger(v) || (v as number) < min || (v as number) > max) throw invalidParam(name, `"${name}" must be a whole number from ${min} to ${max}`);
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
