import { createInterface } from 'node:readline/promises';
import {
  CONTEXT_OVERFLOWS,
  DEFAULT_CONTEXT_OVERFLOW,
  contextFullNotice,
  leftOutNotice,
  type ContextOverflow,
} from '../../../src-preload/api';
import { fillContext } from '../../backend/chat/fill-context';
import { answerShape, openModelText, planPrompt, unfitMessage, type PromptTurn } from '../../backend/chat/prompt';
import { CliError, CTX_OPTION, integerOption, log, type Command, type CommandArgs } from '../command';
import { defaultPromptFormat, promptFormatProblem, promptFormats, type PromptFormat } from '../../core/prompt-format';
import { openGguf } from '../../node/gguf-io';
import { MAX_ROUNDS, openChatTools, TOOLS_HELP, TOOLS_OPTIONS } from './chat-tools';
import {
  KV_CACHE_HELP,
  KV_CACHE_OPTIONS,
  kvCacheOptions,
  SAMPLING_OPTIONS,
  samplingOptions,
  startEngine,
  trainedContext,
} from './run';

/** Where `gufo chat` sets the policy, for its messages. */
const OVERFLOW_OPTION = '--context-overflow';

/** The built-in template families --template takes (core/prompt-format.ts). */
const BUILTIN_FAMILIES = promptFormats(false)
  .map((f) => f.value)
  .filter((f) => f !== 'completion')
  .join(', ');

const HELP = `Usage: gufo chat <model> [--system "..."] [--template F] [--temp T] [--ctx N] [-n N]
                 [--context-overflow POLICY] [--cache-type-k T] [--cache-type-v T]
                 [--mcp FILE [--yes] [--tool-choice C]]

Chat with a model in the terminal, on the GPU, with the model's own chat template. Answers
stream as they are written; the conversation stays in the KV cache, so each turn only evaluates
what is new. Ctrl-C stops an answer (or a tool call); Ctrl-C again as it ends, at the prompt (or
Ctrl-D) exits. When stdin is not a terminal, each line of it is a message (or the y/n answer to a call).

Options:
  --system TEXT         a system message
  --template F          how the conversation becomes the model's text, as the app's chats:
                        model (the file's own template: the default when it has one),
                        completion (plain text, continued as written: the default for a base
                        model, which has none) or a built-in family: ${BUILTIN_FAMILIES}
  -n N                  tokens per answer at most (default 1024)
  -c, --ctx N           context length (default: the model's, at most 4096)
  --context-overflow P  when the conversation outgrows the context, as the app's chats:
                        truncate-middle (default) keeps the system prompt and the first
                        exchange and leaves out the oldest messages after them; rolling-window
                        leaves out the oldest messages; stop leaves nothing out, and an answer
                        ends where the context does
${KV_CACHE_HELP}
${TOOLS_HELP}
  --temp T              temperature (default 0.8; 0 is greedy)
  -s, --seed S, --top-k K, --top-p P, --min-p P, --repeat-penalty R   as in gufo run
`;

export const chatCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    system: { type: 'string' },
    template: { type: 'string' },
    n: { type: 'string', short: 'n' },
    ctx: CTX_OPTION,
    'context-overflow': { type: 'string' },
    ...KV_CACHE_OPTIONS,
    ...SAMPLING_OPTIONS,
    ...TOOLS_OPTIONS,
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo chat --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    if (args.values.temp === undefined) args.values.temp = '0.8';
    const sampling = samplingOptions(args);
    const maxTokens = integerOption(args, 'n', 1024);
    const overflow = overflowOption(args);
    const kvTypes = kvCacheOptions(args);
    const ctx = integerOption(args, 'ctx', Math.min(trainedContextOf(path) ?? 4096, 4096));
    const text = openModelText(path);
    try {
      const format = templateOption(args, text.hasChatTemplate);
      if (!text.hasChatTemplate && args.values.template === undefined)
        log(
          'The model has no chat template (a base model): your text is continued as written (--template F for a chat template).',
        );
      const tools = await openChatTools(text, args.values);
      const { host } = await startEngine(path, ctx, false, { kvTypes }).catch(async (err: unknown) => {
        await tools.close();
        throw err;
      });
      const system = typeof args.values.system === 'string' ? args.values.system : '';
      const limits = { contextSize: ctx, maxTokens, overflow };
      const { stop, stripLeadingSpace } = answerShape(text, format);
      const turns: PromptTurn[] = [];
      const templateTools = tools.set.tools.length > 0 ? tools.set.tools : undefined;

      /** The answer (or tool call) under way, which Ctrl-C stops. */
      let answering: AbortController | null = null;

      /** One answer to the turns so far, streamed out; null when it does not fit. `forced`: the call it must be. */
      const answerOnce = async (signal: AbortSignal, forced: typeof tools.forced): Promise<string | null> => {
        const prefill = forced ? text.tokenizer.tokenize(forced.prefill, { addBos: false, parseSpecial: true }) : [];
        const planWith = (answer: readonly number[]) =>
          planPrompt(text, system, turns, limits, format, templateTools, [...prefill, ...answer]);
        const plan = planWith([]);
        if (!plan.fits) {
          log(unfitMessage(plan, limits, OVERFLOW_OPTION));
          return null;
        }
        if (plan.dropped > 0) log(`[${leftOutNotice(plan.dropped, ctx)}]`);
        const stream = text.answerDecoder(stripLeadingSpace && !forced, templateTools !== undefined);
        // A forced call's marker ends the prompt: the answer is read as starting with it.
        let answer = forced?.prefill ?? '';
        process.stdout.write(answer);
        const filled = await fillContext(host, plan, {
          contextSize: ctx,
          maxTokens,
          sampling,
          stop,
          constraint: forced?.constraint ?? null,
          signal,
          onToken: (token) => {
            if (stop.includes(token)) return;
            const piece = stream.push(token);
            answer += piece;
            process.stdout.write(piece);
          },
          replan: overflow === 'stop' ? null : planWith,
        });
        const rest = stream.flush();
        answer += rest;
        process.stdout.write(rest + '\n');
        if (filled.stopReason === 'cancelled') log('[stopped]');
        if (filled.plan.dropped > plan.dropped) log(`[${leftOutNotice(filled.plan.dropped, ctx)}]`);
        if (filled.stopReason === 'context') log(`[${contextFullNotice(ctx, OVERFLOW_OPTION)}]`);
        log(`[${filled.answer.length} tokens, ${filled.result.timings.decodeTokS.toFixed(1)} tok/s]`);
        // A Ctrl-C the engine got after its last token (the answer ended on its own) was meant for the prompt: quit.
        if (signal.aborted && filled.stopReason !== 'cancelled') quit();
        sampling.seed = (sampling.seed + 1) >>> 0;
        return answer;
      };

      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
      // One reader for messages and for the y/n of calls: piped input answers both, line by line.
      const lines = rl[Symbol.asyncIterator]();
      const ask = async (question: string): Promise<string | null> => {
        process.stderr.write(question);
        const next = await lines.next();
        return next.done ? null : String(next.value);
      };

      /** One exchange: the user's line in, the model's answer out, and its tool calls run round after round. */
      const turn = async (line: string): Promise<void> => {
        turns.push({ role: 'user', content: line });
        answering = new AbortController();
        const { signal } = answering;
        try {
          for (let round = 0; ; round++) {
            const answer = await answerOnce(signal, round === 0 ? tools.forced : null);
            if (answer === null) {
              if (round === 0) turns.pop();
              return;
            }
            turns.push({ role: 'assistant', content: answer });
            if (signal.aborted || round >= MAX_ROUNDS) return;
            const results = await tools.runCalls(answer, ask, signal);
            if (!results || signal.aborted) return;
            for (const content of results) turns.push({ role: 'tool', content });
          }
        } finally {
          answering = null;
        }
      };

      /** Ctrl-C asked to quit (the end of piped input still answers the lines read before it). */
      let quitting = false;
      const quit = () => {
        quitting = true;
        rl.close();
      };
      // Ctrl-C stops the answer being written; once it is stopping (a second Ctrl-C, pressed as it
      // ends), or at the prompt, it quits.
      const onInterrupt = () => {
        if (answering && !answering.signal.aborted) return answering.abort();
        answering?.abort();
        quit();
      };
      rl.on('SIGINT', onInterrupt);
      process.on('SIGINT', onInterrupt);
      try {
        log('Type a message; Ctrl-C stops an answer, Ctrl-C again or at the prompt, or Ctrl-D, exits.');
        rl.setPrompt('> ');
        rl.prompt();
        // Lines typed (or piped) while an answer streams wait their turn in the reader.
        for (let next = await lines.next(); !next.done; next = await lines.next()) {
          const line = String(next.value);
          if (line.trim() !== '') await turn(line);
          if (quitting) break;
          rl.prompt();
        }
      } finally {
        process.off('SIGINT', onInterrupt);
        rl.close();
        await tools.close();
        await host.close();
      }
    } finally {
      text.close();
    }
  },
};

function trainedContextOf(path: string): number | undefined {
  const { gguf, file } = openGguf(path);
  try {
    return trainedContext(gguf);
  } finally {
    file.close();
  }
}

/** --template, checked by the rule the app's chat settings use; absent: the app's default for the model. */
function templateOption(args: CommandArgs, hasChatTemplate: boolean): PromptFormat {
  const value = args.values.template;
  if (value === undefined) return defaultPromptFormat(hasChatTemplate);
  const problem = promptFormatProblem(value, hasChatTemplate);
  if (problem) throw new CliError(`--template ${problem}`);
  return value as PromptFormat;
}

function overflowOption(args: CommandArgs): ContextOverflow {
  const value = args.values['context-overflow'] ?? DEFAULT_CONTEXT_OVERFLOW;
  if (!(CONTEXT_OVERFLOWS as readonly unknown[]).includes(value))
    throw new CliError(
      `${OVERFLOW_OPTION} must be one of ${CONTEXT_OVERFLOWS.join(', ')} (got ${JSON.stringify(value)})`,
    );
  return value as ContextOverflow;
}
