import { describe, expect, it } from 'vitest';
import { chartTimeFormat, columnFormat, formatFloat } from '../../src-renderer/lib/format';

describe('columnFormat', () => {
  it('writes a column in scientific notation when one value is too small for fixed digits', () => {
    const format = columnFormat([0.02701, 5.022e-4]);
    expect([0.02701, 5.022e-4].map(format)).toEqual(['2.701e-2', '5.022e-4']);
  });

  it('writes a column in fixed digits, the smallest with four significant ones, all with as many decimals', () => {
    const values = [0.0195312, 1.5, 12.25];
    expect(values.map(columnFormat(values))).toEqual(['0.01953', '1.50000', '12.25000']);
  });

  it('keeps zeros and non-finite values readable', () => {
    const format = columnFormat([0, 0.5]);
    expect([0, 0.5, Number.POSITIVE_INFINITY].map(format)).toEqual(['0.0000', '0.5000', 'Infinity']);
    expect(columnFormat([0, 0])(0)).toBe('0');
  });
});

describe('formatFloat', () => {
  it('gives the shortest decimal that reads back as the same float at the given precision', () => {
    const f32 = Math.fround(1 / 3);
    expect(String(f32)).toBe('0.3333333432674408');
    expect(formatFloat(f32)).toBe('0.33333334');
    expect(Math.fround(Number(formatFloat(f32)))).toBe(f32);
    expect(formatFloat(0.333251953125, 11)).toBe('0.3333');
    expect(formatFloat(-0)).toBe('-0');
    expect(formatFloat(Number.NaN)).toBe('NaN');
  });
});

describe('chartTimeFormat', () => {
  const at = (iso: string) => Date.parse(iso);

  it('writes every time of a chart with its day and time of day, whatever the span', () => {
    for (const [from, to] of [
      ['2026-03-04T10:00:00Z', '2026-03-04T12:00:00Z'],
      ['2026-03-01T10:00:00Z', '2026-03-09T12:00:00Z'],
    ] as const) {
      const label = chartTimeFormat(at(from), at(to));
      for (const time of [at(from), at(to)]) {
        const text = label(time);
        expect(text).toMatch(/\d{1,2}:\d{2}/);
        expect(text).toContain(String(new Date(time).getDate()));
        expect(text).not.toMatch(/\d{1,2}:\d{2}:\d{2}/);
      }
    }
  });

  it('adds seconds for a chart of minutes, and the year for one across years', () => {
    expect(chartTimeFormat(at('2026-03-04T10:00:00Z'), at('2026-03-04T10:05:00Z'))(at('2026-03-04T10:02:07Z'))).toMatch(
      /\d{1,2}:\d{2}:07/,
    );
    const label = chartTimeFormat(at('2025-12-20T10:00:00Z'), at('2026-01-05T10:00:00Z'));
    expect(label(at('2025-12-20T10:00:00Z'))).toContain('2025');
    expect(label(at('2026-01-05T10:00:00Z'))).toContain('2026');
  });
});
