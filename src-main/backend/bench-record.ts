/** The bench_runs row of a measurement: the one the Benchmarks screen and `gufo bench` (with GUFO_HOME set) store. */
import type { ModelEntry } from '../../src-preload/api';
import type { BenchResult, EngineInfo } from '../engine-wire/protocol';
import type { NewBenchRun } from '../node/store/bench-runs';

export interface BenchMeasurement {
  result: BenchResult;
  /** The engine that ran it. */
  info: EngineInfo;
  /** How long the engine took to load the model. */
  loadMs: number;
}

export function benchRunRecord(
  model: ModelEntry,
  fileSha256: string,
  measured: BenchMeasurement,
  appVersion: string,
): NewBenchRun {
  const { result, info } = measured;
  return {
    modelId: model.id,
    modelName: model.name,
    modelPath: model.path,
    fileSha256,
    adapter: info.adapter.name,
    backend: info.adapter.backend,
    promptTokens: result.promptTokens,
    genTokens: result.genTokens,
    prefillTokS: result.prefillTokS,
    decodeTokS: result.decodeTokS,
    // The bench prefills from an empty KV cache and the engine's prefill rate is prompt tokens
    // over the time from the call to the first generated token: that time is the TTFT.
    ttftMs: (result.promptTokens * 1000) / result.prefillTokS,
    loadMs: measured.loadMs,
    rooflineFraction: Number.isFinite(result.rooflineFraction) ? result.rooflineFraction : null,
    appVersion,
  };
}
