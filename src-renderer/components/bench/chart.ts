/** The benchmark chart's data and geometry: decode speed over time, one series per model and adapter. */
import type { BenchRun } from '../../../src-preload/api';

export interface ChartPoint {
  time: number;
  value: number;
  run: BenchRun;
}

export interface ChartSeries {
  key: string;
  model: string;
  adapter: string;
  /** Oldest first. */
  points: ChartPoint[];
}

/** Runs grouped by model file and adapter, each series oldest first, series in order of first run. */
export function benchSeries(runs: readonly BenchRun[]): ChartSeries[] {
  const byKey = new Map<string, ChartSeries>();
  const oldestFirst = [...runs].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id - b.id);
  for (const run of oldestFirst) {
    const key = `${run.modelPath}\n${run.adapter}`;
    let series = byKey.get(key);
    if (!series) byKey.set(key, (series = { key, model: run.modelName, adapter: run.adapter, points: [] }));
    series.points.push({ time: Date.parse(run.createdAt), value: run.decodeTokS, run });
  }
  return [...byKey.values()];
}

/** The time axis, first run to last; null when every run is of one moment (one dot on an empty axis says nothing). */
export function timeDomain(series: readonly ChartSeries[]): [number, number] | null {
  const times = series.flatMap((s) => s.points.map((p) => p.time));
  const from = Math.min(...times);
  const to = Math.max(...times);
  return to > from ? [from, to] : null;
}

/** `count` evenly spaced times from `from` to `to` (one when they are equal). */
export function timeTicks(from: number, to: number, count = 4): number[] {
  if (to <= from) return [from];
  return Array.from({ length: count }, (_, i) => from + ((to - from) * i) / (count - 1));
}

/** An SVG path through the points. */
export function linePath(points: readonly { x: number; y: number }[]): string {
  return points.map((p, i) => `${i === 0 ? 'M' : 'L'}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(' ');
}
