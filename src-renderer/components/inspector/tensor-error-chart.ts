/** The tensor-error panel's data: one error figure per layer (pooled, or of one role), and the layer × role matrix. */
import type { ErrorFigures, TensorErrorComparison, TensorErrorRow } from '../../../src-preload/api';

export type ErrorMetric = 'snr' | 'relative';

export interface MetricView {
  label: string;
  /** The chart's axis title. */
  axis: string;
  /** Higher or lower is better, for the panel's explanation. */
  better: 'higher' | 'lower';
  /** Null where the figure has no finite value (an unchanged tensor's SNR, a zero source's relative error). */
  value(f: ErrorFigures): number | null;
  format(value: number): string;
}

export const METRICS: Record<ErrorMetric, MetricView> = {
  snr: { label: 'SNR', axis: 'SNR (dB)', better: 'higher', value: (f) => f.snrDb, format: (v) => `${v.toFixed(1)} dB` },
  relative: {
    label: 'Relative error',
    axis: 'Relative error (%)',
    better: 'lower',
    value: (f) => (f.relativeError === null ? null : f.relativeError * 100),
    format: (v) => `${v.toFixed(v < 1 ? 3 : 2)}%`,
  },
};

export interface LayerBar {
  layer: number;
  /** The pooled figures of the layer, or its one tensor of the chosen role; null when it has none. */
  figures: ErrorFigures | null;
}

/** The block layers in order, each with its pooled figures (role null) or its tensor of `role`. */
export function layerBars(c: TensorErrorComparison, role: string | null): LayerBar[] {
  return c.byLayer.flatMap(({ layer, ...pooled }): LayerBar[] => {
    if (layer === null) return [];
    if (role === null) return [{ layer, figures: pooled }];
    return [{ layer, figures: c.tensors.find((t) => t.layer === layer && t.role === role) ?? null }];
  });
}

export interface LayerRoleMatrix {
  /** Roles of the block tensors, in order of first appearance. */
  roles: string[];
  rows: { layer: number; cells: (TensorErrorRow | null)[] }[];
}

/** Each block layer's tensor of each role (null where the layer has none). */
export function layerRoleMatrix(c: TensorErrorComparison): LayerRoleMatrix {
  const inBlocks = c.tensors.filter((t) => t.layer !== null);
  const roles = c.byRole.map((r) => r.role).filter((role) => inBlocks.some((t) => t.role === role));
  const layers = c.byLayer.flatMap((g) => (g.layer === null ? [] : [g.layer]));
  return {
    roles,
    rows: layers.map((layer) => ({
      layer,
      cells: roles.map((role) => inBlocks.find((t) => t.layer === layer && t.role === role) ?? null),
    })),
  };
}

/** "–" for a figure without a finite value: SNR of an unchanged tensor is unbounded. */
export function formatFigure(metric: ErrorMetric, f: ErrorFigures): string {
  const v = METRICS[metric].value(f);
  if (v !== null) return METRICS[metric].format(v);
  return metric === 'snr' && f.rmse === 0 ? 'unchanged' : '—';
}
