import { describe, expect, it } from 'vitest';
import { columnFormat, formatFloat } from '../../src-renderer/lib/format';

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
