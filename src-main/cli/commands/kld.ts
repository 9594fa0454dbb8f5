import { resolve } from 'node:path';
import { measureDivergence, planComparison, type ComparedModel, type DivergenceResult } from '../../backend/quality-divergence';
import { qualityReportRecord } from '../../backend/quality-record';
import type { DivergenceSummary } from '../../core/quality/divergence';
import { QualityReportStore } from '../../node/store/quality-reports';
import { CliError, log, printJson, type Command } from '../command';
import { formatInteger } from '../format';
import { interruptSignal } from '../progress';
import { STORE_HELP, storeResults } from '../results-store';
import { describePlan, readTextOption, TEXT_WINDOW_OPTIONS, windowBar, windowOption, withEngine, WINDOWS_HELP } from './perplexity';

const HELP = `Usage: gufo kld <base.gguf> <quantized.gguf> --text <file.txt> [--ctx N] [--json]

How far a quantized model's next-token distributions lie from its base model's over a text: the
figures llama.cpp's llama-perplexity --kl-divergence reports. Per scored position, over the
full vocabulary in float64:
  KL     KL(base ‖ quantized) = Σ p_base·(ln p_base − ln p_quantized), in nats
  top-1  whether both models rank the same token first
  Δp     p_quantized(t) − p_base(t) for t the base's most likely token (meanDeltaP); llama.cpp's
         "Mean Δp" takes t = the text's next token instead (meanDeltaPNext)
with the mean and the 99th percentile of KL (interpolated between ranks as llama.cpp does), and
the perplexity of each model over the same positions.

${WINDOWS_HELP}

The base model runs first and writes its log-probabilities to a temporary file in TMPDIR
(4 bytes × vocabulary per scored position, removed at the end); the quantized model then reads
them back one position at a time. Both files must have the same vocabulary.

Options:
  --text FILE   the text, UTF-8 (required)
  --ctx N       window size in tokens (default 512, or the base's training context if smaller)
  --json        one JSON document on stdout: { meanKl, p99Kl, maxKl, top1, meanDeltaP,
                meanDeltaPNext, pplBase, pplQuant, positions }

${STORE_HELP}

Ctrl-C stops. GUFO_ADAPTER picks the GPU adapter by name.
`;

function printSummary(s: DivergenceSummary): void {
  const percent = (v: number) => `${(v * 100).toFixed(3)}%`;
  const rows: [string, string][] = [
    ['positions', formatInteger(s.positions)],
    ['mean KL', s.meanKl.toExponential(4)],
    ['p99 KL', s.p99Kl.toExponential(4)],
    ['max KL', s.maxKl.toExponential(4)],
    ['same top token', percent(s.top1)],
    ['mean Δp (base top)', percent(s.meanDeltaP)],
    ['mean Δp (next)', percent(s.meanDeltaPNext)],
    ['PPL base', s.pplBase.toFixed(4)],
    ['PPL quantized', s.pplQuant.toFixed(4)],
  ];
  process.stdout.write(rows.map(([k, v]) => `${k.padEnd(20)}${v}\n`).join(''));
}

export const kldCommand: Command = {
  help: HELP,
  options: TEXT_WINDOW_OPTIONS,
  async run(args) {
    const [basePath, quantPath, ...extra] = args.positionals;
    if (!basePath || !quantPath) throw new CliError('expected a base and a quantized GGUF file (see gufo kld --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const json = args.values.json === true;
    const text = readTextOption(args, 'kld');
    const plan = planComparison(basePath, quantPath, text, (base) => windowOption(base, args));
    const signal = interruptSignal();
    const bars: Record<ComparedModel, ReturnType<typeof windowBar>> = { base: windowBar('base'), quantized: windowBar('quantized') };
    let result: DivergenceResult;
    try {
      result = await measureDivergence({
        basePath,
        quantPath,
        plan,
        signal,
        runEngine: (path, ctx, work) => withEngine(path, ctx, json, signal, work),
        onProgress: (model, done, total) => bars[model].update(done, total),
      });
    } finally {
      bars.base.finish();
      bars.quantized.finish();
    }
    if (json) {
      printJson(result.summary);
    } else {
      printSummary(result.summary);
      log(describePlan(plan));
    }
    await storeResults(async (store) => {
      const [base, quant] = [await store.model(basePath), await store.model(quantPath)];
      const measurement = { base, quant, exportId: null, textSource: 'file' as const, textLabel: resolve(text.label), plan, result };
      new QualityReportStore(store.db).add(qualityReportRecord(measurement, store.appVersion));
    });
  },
};
