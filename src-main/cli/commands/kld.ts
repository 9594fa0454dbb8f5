import { mkdtempSync, rmSync, statfsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DivergenceStats, vocabularyMismatch, type DivergenceSummary } from '../../core/quality/divergence';
import type { WindowPlan } from '../../core/quality/perplexity';
import { readVocab } from '../../core/tokenizer/index';
import { openGguf } from '../../node/gguf-io';
import { CliError, log, printJson, type Command, type CommandArgs } from '../command';
import { formatBytes, formatInteger } from '../format';
import { interruptSignal } from '../progress';
import { describePlan, planWindows, readTextOption, scoreWindows, withEngine, WINDOWS_HELP, type TextFile } from './perplexity';

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

Ctrl-C stops. GUFO_ADAPTER picks the GPU adapter by name.
`;

/** The base's windows for the text, once both files' vocabularies are known to agree. */
function planComparison(basePath: string, quantPath: string, text: TextFile, args: CommandArgs): WindowPlan {
  const base = openGguf(basePath);
  try {
    const quant = openGguf(quantPath);
    try {
      const mismatch = vocabularyMismatch(readVocab(base.gguf), readVocab(quant.gguf));
      if (mismatch) throw new CliError(mismatch);
    } finally {
      quant.file.close();
    }
    return planWindows(base.gguf, text, args);
  } finally {
    base.file.close();
  }
}

/** Refuses to start when the temporary folder cannot hold the base's log-probabilities. */
function checkSpace(dir: string, bytes: number): void {
  const { bavail, bsize } = statfsSync(dir);
  if (bavail * bsize < bytes) {
    throw new CliError(`${dir}: the base's log-probabilities need ${formatBytes(bytes)} of temporary space, only ${formatBytes(bavail * bsize)} is free (set TMPDIR, or use a shorter text)`);
  }
}

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
  name: 'kld',
  summary: 'KL divergence, top-1 agreement and perplexity of a quantized model against its base',
  help: HELP,
  options: {
    text: { type: 'string' },
    ctx: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [basePath, quantPath, ...extra] = args.positionals;
    if (!basePath || !quantPath) throw new CliError('expected a base and a quantized GGUF file (see gufo kld --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const json = args.values.json === true;
    const text = readTextOption(args, 'kld');
    const plan = planComparison(basePath, quantPath, text, args);
    const signal = interruptSignal();
    const stats = new DivergenceStats();
    const dir = mkdtempSync(join(tmpdir(), 'gufo-kld-'));
    const logProbs = join(dir, 'base.logprobs');
    try {
      writeFileSync(logProbs, '');
      const vocab = await withEngine(basePath, plan.ctx, json, signal, async (host, info) => {
        const n = info.model!.vocab;
        checkSpace(dir, plan.scored * n * 4);
        await scoreWindows(host, plan, 'base', signal, (position) => ({ saveLogProbs: { path: logProbs, position } }), (s) => stats.addBase(s));
        return n;
      });
      await withEngine(quantPath, plan.ctx, json, signal, async (host, info) => {
        if (info.model!.vocab !== vocab) {
          throw new CliError(`${quantPath}: its output has ${info.model!.vocab} logits per token, ${basePath}'s has ${vocab}; KL divergence needs the same vocabulary`);
        }
        await scoreWindows(host, plan, 'quantized', signal, (position) => ({ baseLogProbs: { path: logProbs, position } }), (s) => stats.addCompared(s));
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const summary = stats.summary();
    if (json) return printJson(summary);
    printSummary(summary);
    log(describePlan(plan));
  },
};
