import { resolve } from 'node:path';
import { measureDivergences, planComparison, type DivergenceResult } from '../../backend/quality/divergence';
import { qualityReportRecord } from '../../backend/quality/record';
import type { DivergenceSummary } from '../../core/quality/divergence';
import { summarizeModel } from '../../core/model-summary';
import { openGguf } from '../../node/gguf-io';
import { QualityReportStore } from '../../node/store/quality-reports';
import { CliError, log, printJson, type Command } from '../command';
import { formatBytes, formatInteger, table } from '../format';
import { interruptSignal } from '../progress';
import { STORE_HELP, storeResults } from '../results-store';
import {
  describePlan,
  readTextOption,
  TEXT_WINDOW_OPTIONS,
  windowBar,
  windowOption,
  withEngine,
  WINDOWS_HELP,
} from './perplexity';

const HELP = `Usage: gufo kld <base.gguf> <quantized.gguf>... --text <file.txt> [--ctx N] [--json]

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

Several quantized files (gufo kld base.gguf q8_0.gguf q4_k_m.gguf ...) are compared with the
base over the same windows, the base evaluated once: each file's figures are those of its own
gufo kld run. Every file's vocabulary is checked before the base runs; the first file that
cannot be compared (unreadable, another vocabulary, failing to load) stops the command with an
error naming it, and nothing is printed or stored.

Options:
  -f, --text FILE   the text, UTF-8 (required)
  -c, --ctx N       window size in tokens (default 512, or the base's training context if smaller)
  --json            one JSON document on stdout: { meanKl, p99Kl, maxKl, top1, meanDeltaP,
                    meanDeltaPNext, pplBase, pplQuant, positions }; with several quantized files,
                    an array with one such object per file, in the order given, each with the
                    file's path, its size in bytes and its bits per weight added:
                    [{ file, bytes, bitsPerWeight, meanKl, ... }]

${STORE_HELP}

Ctrl-C stops. GUFO_ADAPTER picks the GPU adapter by name.
`;

const percent = (v: number) => `${(v * 100).toFixed(3)}%`;

function printSummary(s: DivergenceSummary): void {
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

/** Size and bits per weight (tensor bytes × 8 / weights) of the file at `path`, as the inspector gives them. */
function fileFigures(path: string): { file: string; bytes: number; bitsPerWeight: number } {
  const { gguf, file } = openGguf(path);
  try {
    const s = summarizeModel(gguf);
    return { file: path, bytes: gguf.fileBytes, bitsPerWeight: s.parameters ? (s.weightBytes * 8) / s.parameters : 0 };
  } finally {
    file.close();
  }
}

/** One row per quantized file, the base's perplexity above them. */
function printLevels(files: ReturnType<typeof fileFigures>[], results: DivergenceResult[]): void {
  const rows = files.map((f, i) => {
    const s = results[i]!.summary;
    return [
      f.file,
      formatBytes(f.bytes),
      f.bitsPerWeight.toFixed(2),
      s.meanKl.toExponential(4),
      s.p99Kl.toExponential(4),
      percent(s.top1),
      s.pplQuant.toFixed(4),
    ];
  });
  process.stdout.write(`PPL base            ${results[0]!.summary.pplBase.toFixed(4)}\n`);
  process.stdout.write(
    table(['file', 'size', 'bits/weight', 'mean KL', 'p99 KL', 'same top token', 'PPL'], rows, [1, 2, 3, 4, 5, 6]) +
      '\n',
  );
}

export const kldCommand: Command = {
  help: HELP,
  modelArgs: 'all',
  options: TEXT_WINDOW_OPTIONS,
  async run(args) {
    const [basePath, ...quantPaths] = args.positionals;
    if (!basePath || quantPaths.length === 0)
      throw new CliError('expected a base and a quantized GGUF file (see gufo kld --help)');
    const several = quantPaths.length > 1;
    const json = args.values.json === true;
    const text = readTextOption(args, 'kld');
    const plan = planComparison(basePath, quantPaths, text, (base) => windowOption(base, args));
    const files = quantPaths.map(fileFigures);
    const signal = interruptSignal();
    let bar = windowBar('base');
    let results: DivergenceResult[];
    try {
      results = await measureDivergences({
        basePath,
        quantPaths,
        plan,
        signal,
        runEngine: (path, ctx, work) => withEngine(path, ctx, json, signal, work),
        onProgress: (index, done, total) => {
          if (index !== null && done === 0) {
            bar.finish();
            if (several) log(`${index + 1} of ${quantPaths.length}: ${quantPaths[index]}`);
            bar = windowBar(several ? `quantized ${index + 1}/${quantPaths.length}` : 'quantized');
          }
          bar.update(done, total);
        },
      });
    } finally {
      bar.finish();
    }
    if (json) {
      printJson(several ? files.map((f, i) => ({ ...f, ...results[i]!.summary })) : results[0]!.summary);
    } else {
      if (several) printLevels(files, results);
      else printSummary(results[0]!.summary);
      log(describePlan(plan));
    }
    await storeResults(async (store) => {
      const base = await store.model(basePath);
      for (const [i, quantPath] of quantPaths.entries()) {
        const measurement = {
          base,
          quant: await store.model(quantPath),
          exportId: null,
          textSource: 'file' as const,
          textLabel: resolve(text.label),
          plan,
          result: results[i]!,
        };
        new QualityReportStore(store.db).add(qualityReportRecord(measurement, store.appVersion));
      }
    });
  },
};
