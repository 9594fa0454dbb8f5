/** The quality_reports row of a measurement: the one the app's quality jobs and `gufo kld` (with GUFO_HOME set) store. */
import type { ModelEntry, QualityReport } from '../../../src-preload/api';
import type { WindowPlan } from '../../core/quality/perplexity';
import type { NewQualityReport } from '../../node/store/quality-reports';
import type { DivergenceResult } from './divergence';

export interface MeasuredModel {
  entry: ModelEntry;
  sha256: string;
}

export interface QualityMeasurement {
  base: MeasuredModel;
  quant: MeasuredModel;
  /** The export the report is for, if any. */
  exportId: number | null;
  textSource: QualityReport['textSource'];
  textLabel: string;
  plan: WindowPlan;
  result: DivergenceResult;
}

export function qualityReportRecord(m: QualityMeasurement, appVersion: string): NewQualityReport {
  const { summary } = m.result;
  return {
    exportId: m.exportId,
    baseModelId: m.base.entry.id,
    baseName: m.base.entry.name,
    basePath: m.base.entry.path,
    baseSha256: m.base.sha256,
    quantModelId: m.quant.entry.id,
    quantName: m.quant.entry.name,
    quantPath: m.quant.entry.path,
    quantSha256: m.quant.sha256,
    textSource: m.textSource,
    textLabel: m.textLabel,
    ctx: m.plan.ctx,
    tokens: m.plan.tokens,
    positions: summary.positions,
    meanKl: summary.meanKl,
    p99Kl: summary.p99Kl,
    maxKl: summary.maxKl,
    top1: summary.top1,
    meanDeltaP: summary.meanDeltaP,
    meanDeltaPNext: summary.meanDeltaPNext,
    pplBase: summary.pplBase,
    pplQuant: summary.pplQuant,
    adapter: m.result.adapter.name,
    appVersion,
  };
}
