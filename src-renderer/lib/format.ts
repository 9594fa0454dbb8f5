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
