import { describe, expect, it } from 'vitest';
import type { ErrorFigures, TensorErrorComparison, TensorErrorRow } from '../../src-preload/api';
import {
  formatFigure,
  layerBars,
  layerRoleMatrix,
  METRICS,
} from '../../src-renderer/components/inspector/tensor-error-chart';

const figures = (snrDb: number | null, relativeError: number | null = 0.01, rmse = 1e-3): ErrorFigures => ({
  elements: 100,
  rmse,
  relativeError,
  snrDb,
});
const tensor = (name: string, layer: number | null, role: string, snrDb: number | null): TensorErrorRow => ({
  name,
  layer,
  role,
  sourceType: 'F32',
  exportType: 'Q4_0',
  ...figures(snrDb),
});

const comparison: TensorErrorComparison = {
  modelId: 2,
  modelName: 'q4',
  sourceModelId: 1,
  sourceName: 'f32',
  tensors: [
    tensor('token_embd.weight', null, 'token_embd', 30),
    tensor('blk.0.attn_q.weight', 0, 'attn_q', 20),
    tensor('blk.0.ffn_up.weight', 0, 'ffn_up', 21),
    tensor('blk.1.ffn_up.weight', 1, 'ffn_up', 22),
  ],
  byLayer: [
    { layer: 0, ...figures(20.5) },
    { layer: 1, ...figures(22) },
    { layer: null, ...figures(30) },
  ],
  byRole: [
    { role: 'token_embd', ...figures(30) },
    { role: 'attn_q', ...figures(20) },
    { role: 'ffn_up', ...figures(21.5) },
  ],
  total: figures(25),
};

describe('tensor error chart data', () => {
  it('gives each block layer its pooled figures, or its tensor of one role', () => {
    expect(layerBars(comparison, null).map((b) => [b.layer, b.figures?.snrDb])).toEqual([
      [0, 20.5],
      [1, 22],
    ]);
    expect(layerBars(comparison, 'attn_q').map((b) => [b.layer, b.figures?.snrDb ?? null])).toEqual([
      [0, 20],
      [1, null],
    ]);
  });

  it('lays out layers × the roles found in blocks', () => {
    const m = layerRoleMatrix(comparison);
    expect(m.roles).toEqual(['attn_q', 'ffn_up']);
    expect(m.rows.map((r) => [r.layer, r.cells.map((c) => c?.name ?? null)])).toEqual([
      [0, ['blk.0.attn_q.weight', 'blk.0.ffn_up.weight']],
      [1, [null, 'blk.1.ffn_up.weight']],
    ]);
  });

  it('formats SNR and relative error, and says when a tensor is unchanged', () => {
    expect(formatFigure('snr', figures(46.123))).toBe('46.1 dB');
    expect(formatFigure('relative', figures(46, 0.005))).toBe('0.500%');
    expect(formatFigure('relative', figures(10, 0.032))).toBe('3.20%');
    expect(formatFigure('snr', figures(null, 0, 0))).toBe('unchanged');
    expect(formatFigure('relative', figures(null, null, 0))).toBe('—');
    expect(METRICS.relative.value(figures(1, 0.25))).toBe(25);
  });
});
