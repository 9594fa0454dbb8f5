import { describe, expect, it } from 'vitest';
import type { Histogram, TypeShareView } from '../../src-preload/api';
import { codeRows, fieldSpan, formatCode, formatStat, formatValue, histogramGeometry, typeBars, typeColors } from '../../src-renderer/lib/inspector-view';

const share = (type: string, parameters: number, bytes: number): TypeShareView => ({ type, tensors: 1, parameters, bytes });
/** Q4_K_M-like: Q4_0 and Q4_K both at 4.5 bits per weight. */
const MIX = [share('Q4_K', 1024, 576), share('Q6_K', 256, 210), share('F32', 64, 256), share('Q4_0', 32, 18)];

describe('typeColors', () => {
  it('gives every type its own colour, from the theme variables only, fewest bits nearest --error', () => {
    const colors = typeColors(MIX);
    expect([...colors.keys()]).toEqual(['Q4_0', 'Q4_K', 'Q6_K', 'F32']);
    expect(new Set(colors.values()).size).toBe(4);
    for (const c of colors.values()) expect(c.replace(/var\(--(accent|error|surface)\)/g, '')).not.toMatch(/#|rgb|var/);
    expect(colors.get('Q4_0')).toContain('var(--accent) 0%');
    expect(colors.get('F32')).toContain('var(--accent) 100%');
  });
});

describe('typeBars', () => {
  it('gives bits per weight and shares of bytes and of the widest type', () => {
    const bars = typeBars(MIX);
    expect(bars.map((b) => b.bitsPerWeight)).toEqual([4.5, 6.5625, 32, 4.5]);
    expect(bars[0]!.bytesPercent).toBeCloseTo((100 * 576) / 1060, 10);
    expect(bars[2]!.bitsPercent).toBe(100);
    expect(bars.reduce((n, b) => n + b.bytesPercent, 0)).toBeCloseTo(100, 10);
  });
});

describe('histogramGeometry', () => {
  const h: Histogram = { tensor: 't', sampled: 10, rowsSampled: 1, rows: 1, elements: 10, nonFinite: 0, min: -1, max: 3, mean: 0, std: 1, counts: [2, 0, 8, 0] };

  it('scales bars to the tallest bin and places value 0 on the x axis', () => {
    const g = histogramGeometry(h, 400, 100);
    expect(g.peak).toBe(8);
    expect(g.bars.map((b) => [b.x, b.height, b.y])).toEqual([[0, 25, 75], [100, 0, 100], [200, 100, 0], [300, 0, 100]]);
    expect(g.bars[1]).toMatchObject({ from: 0, to: 1 });
    expect(g.zeroX).toBe(100);
  });

  it('has no zero line when 0 is outside the range', () => {
    expect(histogramGeometry({ ...h, min: 1, max: 2 }, 400, 100).zeroX).toBeNull();
  });
});

describe('block view text', () => {
  it('lays out codes and values in rows, and names what a field applies to', () => {
    const rows = codeRows([1, 2, 3], [0.5, 'NaN', -0], 2);
    expect(rows).toEqual([
      { first: 0, cells: [{ index: 0, code: 1, value: 0.5 }, { index: 1, code: 2, value: 'NaN' }] },
      { first: 2, cells: [{ index: 2, code: 3, value: -0 }] },
    ]);
    expect(codeRows(null, [1], 8)[0]!.cells[0]!.code).toBeNull();
    expect(fieldSpan({ name: 'd', span: 256, values: [1] }, 256)).toBe('whole block');
    expect(fieldSpan({ name: 'scales', span: 32, values: [] }, 256)).toBe('each 32 values');
    expect(fieldSpan({ name: 'qh', span: 1, values: [] }, 256)).toBe('each value');
  });

  it('formats codes, values and statistics', () => {
    expect(formatCode(0x3c00, 'F16')).toBe('0x3c00');
    expect(formatCode(0x3f800000, 'F32')).toBe('0x3f800000');
    expect(formatCode(-5, 'Q8_0')).toBe('-5');
    expect(formatValue(-0)).toBe('-0');
    expect(formatValue('Infinity')).toBe('Infinity');
    expect(formatValue(0.1)).toBe('0.1');
    expect(formatStat(0.0195312)).toBe('0.01953');
    expect(formatStat(-1.25e-5)).toBe('-1.250e-5');
    expect(formatStat(0)).toBe('0');
  });
});
