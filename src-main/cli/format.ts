/** Plain-text formatting for the CLI's human output. */

// Sizes and counts are written as the UI writes them.
export { formatBytes, formatInteger } from '../../src-preload/api/format';

/** 1234567 → "1.23M", the way parameter counts are quoted. */
export function formatCount(n: number): string {
  const steps: [number, string][] = [
    [1e12, 'T'],
    [1e9, 'B'],
    [1e6, 'M'],
    [1e3, 'K'],
  ];
  for (const [size, suffix] of steps) if (n >= size) return `${(n / size).toFixed(2)}${suffix}`;
  return String(n);
}

/**
 * Left-aligned columns; columns listed in `right` are right-aligned (numbers). The last column's
 * rule is as long as its heading: its cells are not padded, and a long path would draw a rule
 * wider than the terminal.
 */
export function table(header: string[], rows: string[][], right: number[] = []): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const rules = widths.map((w, c) => '-'.repeat(c === header.length - 1 && !right.includes(c) ? header[c]!.length : w));
  const line = (cells: string[]) =>
    cells
      .map((cell, c) => (right.includes(c) ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
      .join('  ')
      .trimEnd();
  return [line(header), line(rules), ...rows.map(line)].join('\n');
}

/** Cuts a string to `max` characters, marking the cut, and makes control characters visible. */
export function clip(text: string, max: number): string {
  const visible = JSON.stringify(text).slice(1, -1);
  return visible.length > max ? `${visible.slice(0, max - 1)}…` : visible;
}

/** Seconds as "42 s", "3 min 20 s", "2 h 5 min": how long something will take. */
export function formatDuration(seconds: number): string {
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}
