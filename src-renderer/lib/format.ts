/** How numbers read in the UI: one place, so every screen says "1.2 GiB" the same way. */

import { formatBytes } from '../../src-preload/api';

// Sizes and file types are written as the CLI writes them.
export { fileTypeLabel, formatBytes } from '../../src-preload/api';

/** Parameter counts as model cards say them: 260K, 1.2B. */
export function formatParams(count: number | null): string {
  if (count === null) return '—';
  if (count >= 1e9) return `${(count / 1e9).toFixed(count >= 1e10 ? 0 : 1)}B`;
  if (count >= 1e6) return `${(count / 1e6).toFixed(count >= 1e7 ? 0 : 1)}M`;
  if (count >= 1e3) return `${Math.round(count / 1e3)}K`;
  return String(count);
}

export function formatRate(tokensPerSecond: number): string {
  return `${tokensPerSecond.toFixed(tokensPerSecond < 10 ? 2 : 1)} tok/s`;
}

export function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

export function formatDate(iso: string): string {
  return new Date(iso).toLocaleString();
}

/**
 * One format for the times on a chart running from `from` to `to`, its axis ticks and its points'
 * tooltips alike: day and time of day ("Jan 3, 14:05"), with seconds when the chart spans less
 * than 20 minutes, with the year when it crosses one.
 */
export function chartTimeFormat(from: number, to: number): (time: number) => string {
  const format = new Intl.DateTimeFormat(undefined, {
    ...(new Date(from).getFullYear() !== new Date(to).getFullYear() ? { year: 'numeric' } : {}),
    month: 'short',
    day: 'numeric',
    hour: '2-digit',
    minute: '2-digit',
    ...(to - from < 20 * 60_000 ? { second: '2-digit' } : {}),
  });
  return (time) => format.format(time);
}

/** A whole count with the locale's digit grouping (a context length: 131,072). */
export function formatCount(count: number | null): string {
  return count === null ? '—' : count.toLocaleString();
}

/** What an error says, for showing it (a failed API call rejects with an Error carrying the back end's message). */
export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A transfer speed: "12.3 MiB/s". */
export function formatSpeed(bytesPerSecond: number): string {
  return `${formatBytes(bytesPerSecond)}/s`;
}

/** Time left: "42 s", "3 min", "1 h 20 min". */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.round(s / 60)} min`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}

/** A fraction as a percentage: 0.9725 → "97.3%". */
export function formatPercent(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

/**
 * One format for a column of numbers, so values compare at a glance: fixed digits when every
 * value reads well so (the smallest with `significant` digits), else scientific for them all.
 */
export function columnFormat(values: readonly number[], significant = 4): (x: number) => string {
  const sizes = values.filter((x) => Number.isFinite(x) && x !== 0).map(Math.abs);
  if (sizes.length === 0) return (x) => String(x);
  const smallest = Math.min(...sizes);
  const largest = Math.max(...sizes);
  if (smallest >= 1e-3 && largest < 1e5) {
    const decimals = Math.max(0, significant - 1 - Math.floor(Math.log10(smallest)));
    return (x) => (Number.isFinite(x) ? x.toFixed(decimals) : String(x));
  }
  return (x) => (Number.isFinite(x) ? x.toExponential(significant - 1) : String(x));
}

/** `x` rounded to a float with `bits` significant bits (24: f32, 11: f16, 8: bf16). */
function roundToBits(x: number, bits: number): number {
  if (bits === 24) return Math.fround(x);
  if (x === 0 || !Number.isFinite(x)) return x;
  const scale = 2 ** (bits - 1 - Math.floor(Math.log2(Math.abs(x))));
  return Math.round(x * scale) / scale;
}

/**
 * A float to the precision its type has: the shortest decimal that reads back as the same value
 * at `bits` significant bits ("0.01358718" for an f32, not the double's "0.013587180525064468").
 */
export function formatFloat(x: number, bits = 24): string {
  if (!Number.isFinite(x) || Object.is(x, -0)) return Object.is(x, -0) ? '-0' : String(x);
  const exact = roundToBits(x, bits);
  for (let digits = 1; digits < 17; digits++) {
    const text = String(Number(x.toPrecision(digits)));
    if (roundToBits(Number(text), bits) === exact) return text;
  }
  return String(x);
}
