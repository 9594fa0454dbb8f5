import { readFileSync } from 'node:fs';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { perplexityOf, perplexityWindows, QualityError, scoredIn, type WindowPlan } from '../../core/quality/perplexity';
import { createTokenizer, readVocab } from '../../core/tokenizer/index';
import type { EngineHost } from '../../engine/host';
import type { EngineInfo, EvaluateRequest, WindowScores } from '../../engine/protocol';
import { openGguf } from '../../node/gguf-io';
import { CliError, integerOption, log, printJson, type Command, type CommandArgs } from '../command';
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

const HELP = `Usage: gufo perplexity <file.gguf> --text <file.txt> [--ctx N] [--json]

Perplexity of a model over a text, on the GPU, as llama.cpp's llama-perplexity computes it:
exp of the mean negative log-likelihood of the scored tokens (lower is better).

${WINDOWS_HELP}

Options:
  --text FILE   the text, UTF-8 (required)
  --ctx N       window size in tokens (default 512, or the model's training context if smaller)
  --json        one JSON document on stdout: { ppl, tokens, scored, ctx, windows }

Ctrl-C stops. GUFO_ADAPTER picks the GPU adapter by name.
`;

export interface TextFile {
  path: string;
  text: string;
}

/** The --text file; a missing, unreadable or empty one is an error naming it. */
export function readTextOption(args: CommandArgs, command: string): TextFile {
  const path = args.values.text;
  if (typeof path !== 'string') throw new CliError(`--text <file.txt> is required (see gufo ${command} --help)`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    throw new CliError(`${path}: cannot read the text file (${e.code === 'ENOENT' ? 'no such file' : e.message})`);
  }
  if (text.length === 0) throw new CliError(`${path}: the text file is empty`);
  return { path, text };
}

/** The windows of `text` for the model in `gguf`, its context from --ctx (default 512, capped by the training context). */
export function planWindows(gguf: GgufFile, text: TextFile, args: CommandArgs): WindowPlan {
  const trained = trainedContext(gguf);
  const ctx = integerOption(args, 'ctx', Math.min(512, trained ?? 512));
  if (ctx < 2) throw new CliError(`--ctx must be at least 2, not ${ctx}`);
  if (trained !== undefined && ctx > trained) log(`warning: ${gguf.file} was trained on a context of ${trained} tokens, less than --ctx ${ctx}`);
  const vocab = readVocab(gguf);
  const tokens = createTokenizer(vocab).tokenize(text.text, { addBos: true });
  try {
    return perplexityWindows(tokens, ctx, vocab.addBos ? vocab.bos : null);
  } catch (err) {
    if (err instanceof QualityError) throw new CliError(`${text.path}: ${err.message}`);
    throw err;
  }
}

/** "300 of 1,024 tokens scored in 4 windows of 256", for stderr. */
export function describePlan(plan: WindowPlan): string {
  const n = plan.windows.length;
  return `${formatInteger(plan.scored)} of ${formatInteger(plan.tokens)} tokens scored in ${n} window${n === 1 ? '' : 's'} of ${plan.ctx}`;
}

/** Runs `work` with the model at `path` loaded in a fresh engine process, closed afterwards. */
export async function withEngine<T>(path: string, ctx: number, quiet: boolean, signal: AbortSignal, work: (host: EngineHost, info: EngineInfo) => Promise<T>): Promise<T> {
  try {
    const { host, info } = await startEngine(path, ctx, quiet);
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

/**
 * Evaluates every window in order, with a progress bar; `extra` adds log-probability files to the
 * request for a window whose first scored position has index `position` over the whole text.
 */
export async function scoreWindows(
  host: EngineHost,
  plan: WindowPlan,
  label: string,
  signal: AbortSignal,
  extra: (position: number) => Pick<EvaluateRequest, 'saveLogProbs' | 'baseLogProbs'>,
  onScores: (scores: WindowScores) => void,
): Promise<void> {
  const bar = progressBar(label);
  const n = plan.windows.length;
  let position = 0;
  try {
    for (const [i, w] of plan.windows.entries()) {
      signal.throwIfAborted();
      bar.update(i / n, `${i}/${n} windows`);
      onScores(await host.evaluate({ ids: [...w.ids], first: w.first, ...extra(position) }));
      position += scoredIn(w);
    }
    bar.update(1, `${n}/${n} windows`);
  } finally {
    bar.done();
  }
}

export const perplexityCommand: Command = {
  name: 'perplexity',
  summary: 'perplexity of a model over a text, as llama-perplexity computes it',
  help: HELP,
  options: {
    text: { type: 'string' },
    ctx: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo perplexity --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const json = args.values.json === true;
    const text = readTextOption(args, 'perplexity');
    const { gguf, file } = openGguf(path);
    let plan: WindowPlan;
    try {
      plan = planWindows(gguf, text, args);
    } finally {
      file.close();
    }
    const signal = interruptSignal();
    let nll = 0;
    await withEngine(path, plan.ctx, json, signal, (host) =>
      scoreWindows(host, plan, 'perplexity', signal, () => ({}), (scores) => {
        for (const v of scores.nll) nll += v;
      }),
    );
    const ppl = perplexityOf(nll, plan.scored);
    if (json) return printJson({ ppl, tokens: plan.tokens, scored: plan.scored, ctx: plan.ctx, windows: plan.windows.length });
    process.stdout.write(`PPL = ${ppl.toFixed(4)}\n`);
    log(describePlan(plan));
  },
};
