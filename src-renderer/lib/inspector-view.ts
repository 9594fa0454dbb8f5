/** How the inspector shows its data: type colours, bars, histogram geometry, number text. Plain functions, kept out of markup. */
import type { BlockFieldView, Histogram, JsonNumber, RecipeNote, TypeShareView } from '../../src-preload/api';
import { formatFloat } from './format';

/** Bits per weight of a share of the tensors: its bytes over its parameters. */
export function shareBitsPerWeight(share: TypeShareView): number {
  return share.parameters ? (share.bytes * 8) / share.parameters : 0;
}

/** A colour as OKLCH: lightness 0–1, chroma, hue in degrees. */
export interface Oklch {
  l: number;
  c: number;
  h: number;
}

/**
 * The type colours, from fewest bits per weight (red: most lossy) along the rainbow to most
 * (violet), one shade per theme: light cells under dark text, dark cells under light text.
 * The hues stop short of the circle's end (red 25° to violet 320°): were they to go round, the
 * most bits (F32) would sit beside the fewest (Q4_K) in colour. 33° apart at one lightness keeps
 * any two clearly apart.
 */
const HUES = Array.from({ length: 10 }, (_, i) => Math.round(25 + (i * (320 - 25)) / 9));
export const TYPE_PALETTE: readonly { light: Oklch; dark: Oklch }[] = HUES.map((h) => ({
  light: { l: 0.86, c: 0.1, h },
  dark: { l: 0.42, c: 0.1, h },
}));

const css = ({ l, c, h }: Oklch) => `oklch(${l} ${c} ${h})`;

/**
 * A colour per type present: the types are ranked by bits per weight and spread over the
 * palette as far apart as it allows, so distinct types get distinct colours however close their
 * bits per weight. The CSS follows the theme by itself (light-dark()).
 */
export function typeColors(shares: readonly TypeShareView[]): Map<string, string> {
  const ranked = [...shares].sort(
    (a, b) => shareBitsPerWeight(a) - shareBitsPerWeight(b) || a.type.localeCompare(b.type),
  );
  const slots = TYPE_PALETTE.length;
  const step = ranked.length > 1 ? (slots - 1) / (ranked.length - 1) : 0;
  return new Map(
    ranked.map((share, i) => {
      // Counted from the most bits, so a lone type gets the calm end, not the lossy red.
      // More types than colours: the palette repeats, still in order of bits.
      const slot = ranked.length > slots ? i % slots : slots - 1 - Math.round((ranked.length - 1 - i) * step);
      const { light, dark } = TYPE_PALETTE[slot]!;
      return [share.type, `light-dark(${css(light)}, ${css(dark)})`];
    }),
  );
}

export interface TypeBar {
  type: string;
  tensors: number;
  bytes: number;
  parameters: number;
  bitsPerWeight: number;
  /** Share of all tensor bytes, 0–100. */
  bytesPercent: number;
  /** Bits per weight against the widest type present, 0–100. */
  bitsPercent: number;
}

export function typeBars(shares: readonly TypeShareView[]): TypeBar[] {
  const total = shares.reduce((n, s) => n + s.bytes, 0);
  const widest = Math.max(0, ...shares.map(shareBitsPerWeight));
  return shares.map((s) => {
    const bitsPerWeight = shareBitsPerWeight(s);
    return {
      ...s,
      bitsPerWeight,
      bytesPercent: total ? (100 * s.bytes) / total : 0,
      bitsPercent: widest ? (100 * bitsPerWeight) / widest : 0,
    };
  });
}

/** A statistic in four significant digits ("0.01953", "-1.25e-5"). */
export function formatStat(x: number): string {
  if (x === 0) return '0';
  const abs = Math.abs(x);
  return abs >= 1e-3 && abs < 1e5 ? String(Number(x.toPrecision(4))) : x.toExponential(3);
}

/** Significant bits of the values a type decodes to: ggml decodes every block type to f32. */
const VALUE_BITS: Readonly<Record<string, number>> = { F16: 11, BF16: 8 };

/** A decoded value to the precision its type has ("NaN"/"Infinity" as the back end sends them). */
export function formatValue(x: JsonNumber, type: string): string {
  return typeof x === 'string' ? x : formatFloat(x, VALUE_BITS[type] ?? 24);
}

export interface HistogramBar {
  x: number;
  y: number;
  width: number;
  height: number;
  count: number;
  /** The bin's value range. */
  from: number;
  to: number;
}

export interface HistogramGeometry {
  bars: HistogramBar[];
  /** The tallest bin's count (the y axis' top). */
  peak: number;
  /** Where value 0 falls on the x axis, when it lies inside [min, max]. */
  zeroX: number | null;
}

/** Bars for an SVG of `width` × `height` (y grows downward); an empty bin still gets its place. */
export function histogramGeometry(h: Histogram, width: number, height: number): HistogramGeometry {
  const bins = h.counts.length;
  const peak = Math.max(0, ...h.counts);
  const binWidth = width / Math.max(1, bins);
  const step = (h.max - h.min) / Math.max(1, bins);
  const bars = h.counts.map((count, i) => {
    const barHeight = peak ? (count / peak) * height : 0;
    return {
      x: i * binWidth,
      y: height - barHeight,
      width: binWidth,
      height: barHeight,
      count,
      from: h.min + i * step,
      to: h.min + (i + 1) * step,
    };
  });
  const zeroX = h.max > h.min && h.min <= 0 && h.max >= 0 ? ((0 - h.min) / (h.max - h.min)) * width : null;
  return { bars, peak, zeroX };
}

/** The histogram in words, for screen readers. */
export function describeHistogram(h: Histogram): string {
  const sample =
    h.sampled === h.elements
      ? `all ${h.elements.toLocaleString()} values`
      : `${h.sampled.toLocaleString()} of ${h.elements.toLocaleString()} values (${h.rowsSampled} of ${h.rows} rows)`;
  return `Histogram of ${sample}: from ${formatStat(h.min)} to ${formatStat(h.max)}, mean ${formatStat(h.mean)}, standard deviation ${formatStat(h.std)}, ${h.counts.length} bins`;
}

/** "per block", "per 32 values", "per value": what each of a field's values applies to. */
export function fieldSpan(field: BlockFieldView, blockSize: number): string {
  return field.span >= blockSize ? 'whole block' : field.span === 1 ? 'each value' : `each ${field.span} values`;
}

export interface CodeRow {
  /** Index of the row's first element in the block. */
  first: number;
  cells: { index: number; code: number | null; value: JsonNumber }[];
}

/** The block's codes and values in rows of `perRow` elements, for the codes grid. */
export function codeRows(codes: readonly number[] | null, values: readonly JsonNumber[], perRow: number): CodeRow[] {
  const rows: CodeRow[] = [];
  for (let first = 0; first < values.length; first += perRow) {
    const cells = values
      .slice(first, first + perRow)
      .map((value, k) => ({ index: first + k, code: codes?.[first + k] ?? null, value }));
    rows.push({ first, cells });
  }
  return rows;
}

/** A tensor's shape as ggml orders it: "[4096, 32000]". */
export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/** "blk.3 attn_q": how the layer map names a cell. */
export function cellName(layer: number, role: string): string {
  return `blk.${layer} ${role}`;
}

/**
 * Why a layer map cell's type is not its file type's recipe's, in words for its tooltip; null
 * when it is the recipe's. `fileType` is the map's recipeFileType.
 */
export function recipeNoteText(type: string, note: RecipeNote | null, fileType: string | null): string | null {
  if (!note) return null;
  const recipe = `the ${fileType ?? 'file type'} recipe gives ${note.recipeType}`;
  return note.fallback
    ? `Fallback: ${recipe}, but rows of ${note.rowLength} values are not a whole number of its ${note.blockSize}-value blocks, so it is ${type}.`
    : `Not the recipe's type: ${recipe}; this file holds ${type} (an override when it was written, or another tool's choice).`;
}

/** Bits of one element of each plain float type: their codes are bit patterns, shown in hex. */
const PLAIN_BITS: Readonly<Record<string, number>> = { F32: 32, F16: 16, BF16: 16 };

/** A code as the grid shows it: hex bit patterns for plain floats, the integer otherwise. */
export function formatCode(code: number, type: string): string {
  const bits = PLAIN_BITS[type];
  return bits === undefined ? String(code) : `0x${code.toString(16).padStart(bits / 4, '0')}`;
}
