import { describe, expect, it } from 'vitest';
import type { Histogram, TypeShareView } from '../../src-preload/api';
import { bitsPerWeight, ggmlTypeByName } from '../../src-main/core/ggml-types';
import {
  codeRows,
  fieldSpan,
  formatCode,
  formatStat,
  formatValue,
  histogramGeometry,
  TYPE_PALETTE,
  recipeNoteText,
  typeBars,
  typeColors,
  type Oklch,
} from '../../src-renderer/lib/inspector-view';

const share = (type: string, parameters: number, bytes: number): TypeShareView => ({
  type,
  tensors: 1,
  parameters,
  bytes,
});
/** Q4_K_M-like: Q4_0 and Q4_K both at 4.5 bits per weight. */
const MIX = [share('Q4_K', 1024, 576), share('Q6_K', 256, 210), share('F32', 64, 256), share('Q4_0', 32, 18)];

/** Distance in OKLab (1 = black to white): about 0.02 is just noticeable. */
function distance(x: Oklch, y: Oklch): number {
  const lab = ({ l, c, h }: Oklch) => [l, c * Math.cos((h * Math.PI) / 180), c * Math.sin((h * Math.PI) / 180)];
  const [a, b] = [lab(x), lab(y)];
  return Math.hypot(a[0]! - b[0]!, a[1]! - b[1]!, a[2]! - b[2]!);
}

/** The palette slot of a colour typeColors gave, and its two themes' shades. */
function slotOf(css: string): number {
  const slot = TYPE_PALETTE.findIndex(
    ({ light, dark }) =>
      css === `light-dark(oklch(${light.l} ${light.c} ${light.h}), oklch(${dark.l} ${dark.c} ${dark.h}))`,
  );
  expect(slot, css).toBeGreaterThanOrEqual(0);
  return slot;
}

describe('typeColors', () => {
  it('ranks the types by bits per weight, fewest first, and follows the theme by itself', () => {
    const colors = typeColors(MIX);
    expect([...colors.keys()]).toEqual(['Q4_0', 'Q4_K', 'Q6_K', 'F32']);
    const slots = [...colors.values()].map(slotOf);
    expect(slots).toEqual([...slots].sort((a, b) => a - b));
    expect(new Set(slots).size).toBe(4);
    expect(slots[0]).toBe(0);
    expect(slots.at(-1)).toBe(TYPE_PALETTE.length - 1);
  });

  it('tells apart every two palette colours, in the light and in the dark theme', () => {
    for (const theme of ['light', 'dark'] as const) {
      for (let i = 0; i < TYPE_PALETTE.length; i++) {
        for (let j = i + 1; j < TYPE_PALETTE.length; j++) {
          expect(distance(TYPE_PALETTE[i]![theme], TYPE_PALETTE[j]![theme]), `${theme} ${i}/${j}`).toBeGreaterThan(
            0.05,
          );
        }
      }
    }
  });

  it('orders a Q4_K_M file by bits per weight from the type table, its ends far apart in colour (issue #30 item 16)', () => {
    // Shares as a file holds them: the bytes of 256 × n weights of each type, from ggml's table.
    const mix = ['F32', 'Q4_K', 'Q6_K', 'Q5_0', 'F16'].map((name, n) => {
      const type = ggmlTypeByName(name)!;
      return share(name, 256 * (n + 1), ((256 * (n + 1)) / type.blockSize) * type.typeSize);
    });
    const colors = typeColors(mix);
    const byBits = [...mix].sort(
      (a, b) => bitsPerWeight(ggmlTypeByName(a.type)!) - bitsPerWeight(ggmlTypeByName(b.type)!),
    );
    expect([...colors.keys()]).toEqual(byBits.map((s) => s.type));
    const slot = (type: string) => slotOf(colors.get(type)!);
    expect(slot('Q4_K')).toBe(0);
    expect(slot('F32')).toBe(TYPE_PALETTE.length - 1);
    // The hues do not go round the circle: the fewest and the most bits are the two farthest apart.
    for (const theme of ['light', 'dark'] as const) {
      const ends = distance(TYPE_PALETTE[0]![theme], TYPE_PALETTE.at(-1)![theme]);
      expect(ends, theme).toBeGreaterThan(0.1);
      for (let i = 1; i < TYPE_PALETTE.length - 1; i++)
        expect(distance(TYPE_PALETTE[0]![theme], TYPE_PALETTE[i]![theme]), `${theme} 0/${i}`).toBeLessThan(ends + 0.1);
    }
  });

  it('sets the types a quantized export mixes (Q5_0, Q8_0, F16, F32) far apart on the palette', () => {
    const mix = [share('Q5_0', 32, 22), share('Q8_0', 32, 34), share('F16', 1, 2), share('F32', 1, 4)];
    const slots = [...typeColors(mix).values()].map(slotOf);
    expect(slots).toEqual([0, 3, 6, 9]);
    for (const theme of ['light', 'dark'] as const) {
      expect(distance(TYPE_PALETTE[slots[2]!]![theme], TYPE_PALETTE[slots[3]!]![theme])).toBeGreaterThan(0.15);
    }
  });
});

describe('recipeNoteText', () => {
  it('says why a cell is not the recipe type: a fallback with the row and block, or another choice', () => {
    expect(recipeNoteText('Q4_K', null, 'Q4_K_M')).toBeNull();
    expect(
      recipeNoteText('Q5_0', { recipeType: 'Q4_K', fallback: true, rowLength: 64, blockSize: 256 }, 'Q4_K_M'),
    ).toBe(
      'Fallback: the Q4_K_M recipe gives Q4_K, but rows of 64 values are not a whole number of its 256-value blocks, so it is Q5_0.',
    );
    expect(
      recipeNoteText('Q8_0', { recipeType: 'Q4_K', fallback: false, rowLength: 4096, blockSize: 256 }, 'Q4_K_M'),
    ).toMatch(/^Not the recipe's type: the Q4_K_M recipe gives Q4_K; this file holds Q8_0/);
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
  const h: Histogram = {
    tensor: 't',
    sampled: 10,
    rowsSampled: 1,
    rows: 1,
    elements: 10,
    nonFinite: 0,
    min: -1,
    max: 3,
    mean: 0,
    std: 1,
    counts: [2, 0, 8, 0],
  };

  it('scales bars to the tallest bin and places value 0 on the x axis', () => {
    const g = histogramGeometry(h, 400, 100);
    expect(g.peak).toBe(8);
    expect(g.bars.map((b) => [b.x, b.height, b.y])).toEqual([
      [0, 25, 75],
      [100, 0, 100],
      [200, 100, 0],
      [300, 0, 100],
    ]);
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
      {
        first: 0,
        cells: [
          { index: 0, code: 1, value: 0.5 },
          { index: 1, code: 2, value: 'NaN' },
        ],
      },
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
    expect(formatValue(-0, 'F32')).toBe('-0');
    expect(formatValue('Infinity', 'F32')).toBe('Infinity');
    expect(formatValue(Math.fround(0.1), 'F32')).toBe('0.1');
  });

  it('writes a decoded value to the precision its type has, and it reads back exactly', () => {
    // An f32 as JSON parses to its double: 0.013587180525064468.
    const f32 = Math.fround(0.01358718);
    expect(formatValue(f32, 'F32')).toBe('0.01358718');
    expect(formatValue(f32, 'Q4_K')).toBe('0.01358718');
    expect(Math.fround(Number(formatValue(f32, 'F32')))).toBe(f32);
    // 0.0135803222656 is an f16 (and an f32): five digits say it at f16 precision.
    const f16 = 0.0135803222656;
    expect(formatValue(Math.fround(f16), 'F16')).toBe('0.01358');
    expect(formatValue(-2.75, 'BF16')).toBe('-2.75');
    expect(formatValue(Math.fround(1e-30), 'F32')).toBe('1e-30');
    expect(formatStat(0.0195312)).toBe('0.01953');
    expect(formatStat(-1.25e-5)).toBe('-1.250e-5');
    expect(formatStat(0)).toBe('0');
  });
});
