/** The benchmark chart's data and geometry: a speed over time, one series per model, adapter and test shape. */
import type { BenchRun } from '../../../src-preload/api';

/** Which speed the chart draws: prompt processing (prefill) or token generation (decode). */
export type BenchMetric = 'prefill' | 'decode';

export const BENCH_METRICS: Record<BenchMetric, { label: string; axis: string; of: (run: BenchRun) => number }> = {
  decode: { label: 'Decode', axis: 'Decode (tok/s)', of: (run) => run.decodeTokS },
  prefill: { label: 'Prefill', axis: 'Prefill (tok/s)', of: (run) => run.prefillTokS },
};

export interface ChartPoint {
  time: number;
  value: number;
  run: BenchRun;
}

export interface ChartSeries {
  key: string;
  model: string;
  adapter: string;
  /** llama-bench's name of the test: "pp512 · tg128". */
  shape: string;
  /** Oldest first. */
  points: ChartPoint[];
}

/** What the results table's Roofline column is (the engine's rooflineFraction). */
export const ROOFLINE =
  "Roofline: how close decode came to the GPU's memory speed. The bytes one generated token reads (weights and KV cache) times the decode speed, as a share of the bandwidth a plain copy reaches on the same adapter; 100% is the most a decode, which waits on memory, can do.";

/** llama-bench's names of a run's two tests: prompt processing and text generation, with their token counts. */
export function benchShape(run: Pick<BenchRun, 'promptTokens' | 'genTokens'>): string {
  return `pp${run.promptTokens} · tg${run.genTokens}`;
}

/**
 * Runs grouped by model file, adapter and shape (a tg64 run is not a point on a tg128 line: the
 * speeds differ with the length), each series oldest first, series in order of first run.
 */
export function benchSeries(runs: readonly BenchRun[], metric: BenchMetric = 'decode'): ChartSeries[] {
  const byKey = new Map<string, ChartSeries>();
  const oldestFirst = [...runs].sort((a, b) => Date.parse(a.createdAt) - Date.parse(b.createdAt) || a.id - b.id);
  for (const run of oldestFirst) {
    const shape = benchShape(run);
    const key = `${run.modelPath}\n${run.adapter}\n${shape}`;
    let series = byKey.get(key);
    if (!series) byKey.set(key, (series = { key, model: run.modelName, adapter: run.adapter, shape, points: [] }));
    series.points.push({ time: Date.parse(run.createdAt), value: BENCH_METRICS[metric].of(run), run });
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
