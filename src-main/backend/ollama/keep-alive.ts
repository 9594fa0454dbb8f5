/**
 * Ollama's `keep_alive`: how long a model stays loaded after a request. A number is seconds, a
 * string a Go duration ("5m", "1h30m", "0"), as Ollama reads it; 0 unloads the model after the
 * request, a negative value keeps it loaded. Gufo's default, a request without it, keeps the
 * model loaded until its engine is needed for another (Ollama's default is 5 minutes).
 */
import { invalidParam } from '../openai/errors';

/** Milliseconds to keep the model loaded after the request; null: until its engine is needed for another. */
export type KeepAlive = number | null;

const UNIT_MS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1e3, m: 60e3, h: 3600e3 };
const PART = /(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)/y;

/** Longer than a timer can wait (about 24.8 days): as good as forever. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export function parseKeepAlive(value: unknown): KeepAlive {
  if (value === undefined || value === null) return null;
  const ms = typeof value === 'number' && Number.isFinite(value) ? value * 1000 : goDurationMs(value);
  if (ms === null)
    throw invalidParam(
      'keep_alive',
      `"keep_alive" must be a duration such as "5m", "1h30m" or "0", or a number of seconds (got ${JSON.stringify(value)})`,
    );
  return ms < 0 || ms > LONGEST_TIMER_MS ? null : Math.round(ms);
}

/** Go's time.ParseDuration: an optional sign, then one or more number-unit pairs; "0" alone needs none. */
function goDurationMs(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const sign = value.startsWith('-') ? -1 : 1;
  const rest = value.replace(/^[-+]/, '');
  if (rest === '0') return 0;
  if (rest === '') return null;
  let total = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < rest.length) {
    const part = PART.exec(rest);
    if (!part) return null;
    total += Number(part[1]) * UNIT_MS[part[2]!]!;
  }
  return sign * total;
}
