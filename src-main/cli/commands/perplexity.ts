import { readFileSync } from 'node:fs';
import { defaultWindow, planTextWindows, scoreWindows, type QualityText } from '../../backend/quality/divergence';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { perplexityOf, type WindowPlan } from '../../core/quality/perplexity';
import type { EngineHost } from '../../engine-wire/host';
import type { EngineInfo } from '../../engine-wire/protocol';
import { openGguf } from '../../node/gguf-io';
import {
  CliError,
  CTX_OPTION,
  integerOption,
  log,
  printJson,
  TEXT_FILE_OPTION,
  type Command,
  type CommandArgs,
} from '../command';
import { fileProblem } from '../file-errors';
import { formatInteger } from '../format';
import { interruptSignal, progressBar } from '../progress';
import { startEngine, trainedContext } from './run';

/** Which tokens are scored: shared by gufo perplexity and gufo kld. */
export const WINDOWS_HELP = `Which tokens are scored (llama.cpp's llama-perplexity convention):
  The text is tokenized with BOS when the model's vocabulary adds one, then cut into windows of
  N tokens (--ctx); tokens after the last whole window are not used. Each window is evaluated
  from an empty context with its first token replaced by BOS, and only its second half is
  scored: the tokens at positions floor(N/2)+1 … N−1 of the window, each predicted from all the
  tokens before it. Exception: a text that fits in one window is evaluated whole, and every
  token after the first (BOS) is scored.`;

const HELP = `Usage: gufo perplexity <model> --text <file.txt> [--ctx N] [--json]

Perplexity of a model over a text, on the GPU, as llama.cpp's llama-perplexity computes it:
exp of the mean negative log-likelihood of the scored tokens (lower is better).

${WINDOWS_HELP}

Options:
  -f, --text FILE   the text, UTF-8 (required)
  -c, --ctx N       window size in tokens (default 512, or the model's training context if smaller)
  --json            one JSON document on stdout: { ppl, tokens, scored, ctx, windows }

Ctrl-C stops. GUFO_ADAPTER picks the GPU adapter by name.
`;

/** The options of the commands that run a model over windows of a text (perplexity, kld). */
export const TEXT_WINDOW_OPTIONS: Command['options'] = {
  text: TEXT_FILE_OPTION,
  ctx: CTX_OPTION,
  json: { type: 'boolean' },
};

/** The --text file (labelled by its path); a missing, unreadable or empty one is an error naming it. */
export function readTextOption(args: CommandArgs, command: string): QualityText {
  const path = args.values.text;
  if (typeof path !== 'string') throw new CliError(`--text <file.txt> is required (see gufo ${command} --help)`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new CliError(`${path}: cannot read the text file (${fileProblem(err)})`);
  }
  if (text.length === 0) throw new CliError(`${path}: the text file is empty`);
  return { label: path, text };
}

/** The window size from --ctx (default 512, capped by the model's training context). */
export function windowOption(gguf: GgufFile, args: CommandArgs): number {
  const trained = trainedContext(gguf);
  const ctx = integerOption(args, 'ctx', defaultWindow(trained));
  if (ctx < 2) throw new CliError(`--ctx must be at least 2, not ${ctx}`);
  if (trained !== undefined && ctx > trained)
    log(`warning: ${gguf.file} was trained on a context of ${trained} tokens, less than --ctx ${ctx}`);
  return ctx;
}

/** "300 of 1,024 tokens scored in 4 windows of 256", for stderr. */
export function describePlan(plan: WindowPlan): string {
  const n = plan.windows.length;
  return `${formatInteger(plan.scored)} of ${formatInteger(plan.tokens)} tokens scored in ${n} window${n === 1 ? '' : 's'} of ${plan.ctx}`;
}

/** Runs `work` with the model at `path` loaded to evaluate (ModelUse) in a fresh engine process, closed afterwards. */
export async function withEngine<T>(
  path: string,
  ctx: number,
  quiet: boolean,
  signal: AbortSignal,
  work: (host: EngineHost, info: EngineInfo) => Promise<T>,
): Promise<T> {
  try {
    const { host, info } = await startEngine(path, ctx, quiet, { use: 'evaluate' });
    try {
      return await work(host, info);
    } finally {
      await host.close();
    }
  } catch (err) {
    // Ctrl-C reaches the engine process too: report the cancel, not the engine's exit.
    signal.throwIfAborted();
    throw err;
  }
}

/** A progress bar over windows (scoreWindows' onWindow), ended by the last window or by finish(). */
export function windowBar(label: string): { update(done: number, total: number): void; finish(): void } {
  const bar = progressBar(label);
  let open = true;
  const finish = () => {
    if (open) bar.done();
    open = false;
  };
  return {
    update(done, total) {
      if (!open) return;
      bar.update(done / total, `${done}/${total} windows`);
      if (done === total) finish();
    },
    finish,
  };
}

export const perplexityCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: TEXT_WINDOW_OPTIONS,
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo perplexity --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const json = args.values.json === true;
    const text = readTextOption(args, 'perplexity');
    const { gguf, file } = openGguf(path);
    let plan: WindowPlan;
    try {
      plan = planTextWindows(gguf, text, windowOption(gguf, args));
    } finally {
      file.close();
    }
    const signal = interruptSignal();
    let nll = 0;
    const bar = windowBar('perplexity');
    try {
      await withEngine(path, plan.ctx, json, signal, (host) =>
        scoreWindows(
          host,
          plan,
          signal,
          () => ({}),
          (scores) => {
            for (const v of scores.nll) nll += v;
          },
          (fraction, detail) => bar.update(fraction, detail),
        ),
      );
    } finally {
      bar.finish();
    }
    const ppl = perplexityOf(nll, plan.scored);
    if (json)
      return printJson({ ppl, tokens: plan.tokens, scored: plan.scored, ctx: plan.ctx, windows: plan.windows.length });
    process.stdout.write(`PPL = ${ppl.toFixed(4)}\n`);
    log(describePlan(plan));
  },
};
