/** The inline SVG charts' geometry: the plot box, scales, round ticks, and the axes ChartFrame draws. */

/** The SVG's size and the room around the plot for tick labels and axis titles. */
export interface ChartBox {
  width: number;
  height: number;
  margin: { top: number; right: number; bottom: number; left: number };
}

/** The value axis, a grid line per tick from 0 up. */
export interface YAxis {
  ticks: number[];
  scale: (value: number) => number;
  title: string;
}

export interface XTick {
  key: number;
  x: number;
  label: string;
}

export interface XAxis {
  ticks: XTick[];
  /** How far below the plot the tick labels stand, in SVG units. */
  gap: number;
  title: string;
}

/** Maps [d0, d1] linearly onto [r0, r1]; a point domain maps to the middle of the range. */
export function linearScale([d0, d1]: [number, number], [r0, r1]: [number, number]): (v: number) => number {
  if (d1 === d0) return () => (r0 + r1) / 2;
  return (v) => r0 + ((v - d0) / (d1 - d0)) * (r1 - r0);
}

/** About `count` round tick values (1, 2 or 5 × a power of ten apart) from 0 up to at least `max`. */
export function valueTicks(max: number, count = 5): number[] {
  if (!(max > 0)) return [0, 1];
  const raw = max / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw)!;
  const ticks: number[] = [];
  for (let v = 0; v < max + step; v += step) ticks.push(Number(v.toPrecision(12)));
  return ticks;
}

/** The plot's left and right edges. */
export function plotXRange(box: ChartBox): [number, number] {
  return [box.margin.left, box.width - box.margin.right];
}

/** A value axis from 0 up past `max`, bottom of the plot to its top. */
export function yAxisTo(box: ChartBox, max: number, title: string): YAxis {
  const ticks = valueTicks(max);
  return { ticks, scale: linearScale([0, ticks.at(-1)!], [box.height - box.margin.bottom, box.margin.top]), title };
}

/** An x axis of about four round values from 0 up past `max`, across the plot; `scale` places the marks. */
export function xAxisTo(
  box: ChartBox,
  max: number,
  title: string,
  label: (value: number) => string,
): XAxis & { scale: (value: number) => number } {
  const values = valueTicks(max, 4);
  const scale = linearScale([0, values.at(-1)!], plotXRange(box));
  return { ticks: values.map((v) => ({ key: v, x: scale(v), label: label(v) })), gap: 16, title, scale };
}
