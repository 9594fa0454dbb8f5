import { describe, expect, it } from 'vitest';
import type { BenchRun } from '../../src-preload/api';
import { benchSeries, linePath, timeDomain, timeTicks } from '../../src-renderer/components/bench/chart';
import { linearScale, valueTicks } from '../../src-renderer/lib/chart-axes';

function run(id: number, modelPath: string, adapter: string, createdAt: string, decodeTokS: number): BenchRun {
  return {
    id,
    modelId: 1,
    modelName: modelPath.replace('.gguf', ''),
    modelPath,
    fileSha256: null,
    adapter,
    backend: 'vulkan',
    promptTokens: 32,
    genTokens: 16,
    prefillTokS: 50,
    decodeTokS,
    ttftMs: 600,
    loadMs: 100,
    rooflineFraction: null,
    appVersion: '0.1.0',
    createdAt,
  };
}

describe('benchmark chart', () => {
  it('keeps runs of other lengths apart (tg64 is not a point of the tg128 line), and draws prefill or decode', () => {
    const runs = [
      { ...run(1, 'a.gguf', 'GPU', '2026-01-01T00:00:00.000Z', 10), genTokens: 128, prefillTokS: 100 },
      { ...run(2, 'a.gguf', 'GPU', '2026-01-02T00:00:00.000Z', 12), genTokens: 64, prefillTokS: 110 },
      { ...run(3, 'a.gguf', 'GPU', '2026-01-03T00:00:00.000Z', 11), genTokens: 128, prefillTokS: 120 },
    ];
    const decode = benchSeries(runs);
    expect(decode.map((s) => [s.shape, s.points.map((p) => p.value)])).toEqual([
      ['pp32 · tg128', [10, 11]],
      ['pp32 · tg64', [12]],
    ]);
    expect(benchSeries(runs, 'prefill').map((s) => s.points.map((p) => p.value))).toEqual([[100, 120], [110]]);
  });

  it('groups runs per model file and adapter, oldest first', () => {
    const runs = [
      run(4, 'b.gguf', 'GPU', '2026-01-04T00:00:00.000Z', 4),
      run(3, 'a.gguf', 'CPU', '2026-01-03T00:00:00.000Z', 3),
      run(2, 'a.gguf', 'GPU', '2026-01-02T00:00:00.000Z', 2),
      run(1, 'a.gguf', 'GPU', '2026-01-01T00:00:00.000Z', 1),
    ];
    const series = benchSeries(runs);
    expect(series.map((s) => [s.model, s.adapter, s.points.map((p) => p.value)])).toEqual([
      ['a', 'GPU', [1, 2]],
      ['a', 'CPU', [3]],
      ['b', 'GPU', [4]],
    ]);
    expect(series[0]!.points[0]!.time).toBe(Date.parse('2026-01-01T00:00:00.000Z'));
  });

  it('picks round value ticks from zero past the maximum', () => {
    expect(valueTicks(7.06)).toEqual([0, 2, 4, 6, 8]);
    expect(valueTicks(123)).toEqual([0, 50, 100, 150]);
    expect(valueTicks(0.9)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(valueTicks(0)).toEqual([0, 1]);
  });

  it('scales, spaces times and draws paths', () => {
    const x = linearScale([10, 20], [0, 100]);
    expect([x(10), x(15), x(20)]).toEqual([0, 50, 100]);
    expect(linearScale([5, 5], [0, 100])(5)).toBe(50);
    expect(timeTicks(0, 300, 4)).toEqual([0, 100, 200, 300]);
    expect(timeTicks(7, 7)).toEqual([7]);
    expect(
      linePath([
        { x: 1, y: 2 },
        { x: 3.25, y: 4 },
      ]),
    ).toBe('M1.0,2.0 L3.3,4.0');
  });
});

describe('benchmark chart time axis', () => {
  it('spans the first run to the last, and has no axis for runs of one moment (their value is shown instead)', () => {
    const one = benchSeries([run(1, 'a.gguf', 'GPU', '2026-01-01T00:00:00.000Z', 1)]);
    expect(timeDomain(one)).toBeNull();
    const two = benchSeries([
      run(1, 'a.gguf', 'GPU', '2026-01-01T00:00:00.000Z', 1),
      run(2, 'b.gguf', 'GPU', '2026-01-01T00:05:00.000Z', 2),
    ]);
    expect(timeDomain(two)).toEqual([Date.parse('2026-01-01T00:00:00.000Z'), Date.parse('2026-01-01T00:05:00.000Z')]);
  });
});
