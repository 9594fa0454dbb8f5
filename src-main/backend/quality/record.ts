/** The quality_reports row of a measurement: the one the app's quality jobs and `gufo kld` (with GUFO_HOME set) store. */
import type { ModelEntry, QualityReport } from '../../../src-preload/api';
import type { DivergenceSummary } from '../../core/quality/divergence';
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
  // The contract's report repeats core's DivergenceSummary (core may not read the contract): this
  // fails to compile when a figure is renamed, retyped or added on one side only.
  const figures: Pick<QualityReport, keyof DivergenceSummary> = m.result.summary;
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
    ...figures,
    adapter: m.result.adapter.name,
    appVersion,
  };
}
