import { describe, expect, it } from 'vitest';
import { plotXRange, xAxisTo, yAxisTo, type ChartBox } from '../../src-renderer/lib/chart-axes';

const BOX: ChartBox = { width: 640, height: 240, margin: { top: 12, right: 44, bottom: 44, left: 64 } };

describe('chart axes', () => {
  it('a value axis runs from 0 at the plot bottom to its last round tick at the top', () => {
    const y = yAxisTo(BOX, 0.37, 'Mean KL (nats)');
    expect(y.ticks).toEqual([0, 0.1, 0.2, 0.3, 0.4]);
    expect(y.scale(0)).toBe(240 - 44);
    expect(y.scale(0.4)).toBe(12);
  });

  it('an x axis spans the plot, its ticks placed by its scale and labelled', () => {
    const x = xAxisTo(BOX, 7.3, 'Bits per weight', (v) => `${v} b`);
    expect(plotXRange(BOX)).toEqual([64, 596]);
    expect(x.ticks.map((t) => t.label)).toEqual(['0 b', '2 b', '4 b', '6 b', '8 b']);
    expect(x.ticks[0]!.x).toBe(64);
    expect(x.ticks.at(-1)!.x).toBe(596);
    expect(x.scale(4)).toBe(330);
  });
});
