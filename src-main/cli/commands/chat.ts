import { createInterface } from 'node:readline/promises';
import { renderChat, stopTokenIds, type ChatMessage } from '../../core/chat-template';
import { answerDecoder } from '../../core/harmony';
import { createTokenizer, readVocab } from '../../core/tokenizer/index';
import { openGguf } from '../../node/gguf-io';
import { CliError, integerOption, log, type Command } from '../command';
import { SAMPLING_OPTIONS, samplingOptions, startEngine, trainedContext } from './run';

const HELP = `Usage: gufo chat <file.gguf> [--system "..."] [--temp T] [--ctx N] [-n N]

Chat with a model in the terminal, on the GPU, with the model's own chat template. Answers
stream as they are written; the conversation stays in the KV cache, so each turn only evaluates
what is new. Ctrl-C stops an answer; Ctrl-C at the prompt (or Ctrl-D) exits.

Options:
  --system TEXT         a system message
  -n N                  tokens per answer at most (default 1024)
  --ctx N               context length (default: the model's, at most 4096)
  --temp T              temperature (default 0.8; 0 is greedy)
  --seed S, --top-k K, --top-p P, --min-p P, --repeat-penalty R   as in gufo run
`;

export const chatCommand: Command = {
  help: HELP,
  options: {
    system: { type: 'string' },
    n: { type: 'string', short: 'n' },
    ctx: { type: 'string' },
    ...SAMPLING_OPTIONS,
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo chat --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    if (args.values.temp === undefined) args.values.temp = '0.8';
    const sampling = samplingOptions(args);
    const maxTokens = integerOption(args, 'n', 1024);
    const { gguf, file } = openGguf(path);
    try {
      const vocab = readVocab(gguf);
      const tok = createTokenizer(vocab);
      const architecture = gguf.getString('general.architecture') ?? null;
      const stop = [...new Set([...stopTokenIds(vocab), ...vocab.eog])];
      const ctx = integerOption(args, 'ctx', Math.min(trainedContext(gguf) ?? 4096, 4096));
      const { host } = await startEngine(path, ctx);
      const messages: ChatMessage[] = [];
      if (typeof args.values.system === 'string') messages.push({ role: 'system', content: args.values.system });

      /** The answer being written, which Ctrl-C stops. */
      let answering: AbortController | null = null;

      /** One exchange: the user's line in, the model's answer streamed out. */
      const turn = async (line: string): Promise<void> => {
        messages.push({ role: 'user', content: line });
        const { prompt, template } = renderChat(vocab, messages, { architecture, addBos: vocab.addBos });
        const ids = tok.tokenize(prompt, { addBos: true, parseSpecial: true });
        if (ids.length >= ctx) {
          log(`the conversation (${ids.length} tokens) no longer fits the context of ${ctx}; start a new chat or use --ctx`);
          messages.pop();
          return;
        }
        answering = new AbortController();
        const stream = answerDecoder(tok, template.name, false);
        let answer = '';
        try {
          const result = await host.generate(
            { prompt: ids, maxTokens: Math.min(maxTokens, ctx - ids.length), sampling, stop },
            {
              signal: answering.signal,
              onToken: (e) => {
                if (stop.includes(e.token)) return;
                const piece = stream.push(e.token);
                answer += piece;
                process.stdout.write(piece);
              },
            },
          );
          const rest = stream.flush();
          answer += rest;
          process.stdout.write(rest + '\n');
          if (result.stopReason === 'cancelled') log('[stopped]');
          log(`[${result.timings.generated} tokens, ${result.timings.decodeTokS.toFixed(1)} tok/s]`);
        } finally {
          answering = null;
        }
        messages.push({ role: 'assistant', content: answer });
        sampling.seed = (sampling.seed + 1) >>> 0;
      };

      const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: process.stdin.isTTY });
      const onInterrupt = () => {
        if (answering) answering.abort();
        else rl.close();
      };
      rl.on('SIGINT', onInterrupt);
      process.on('SIGINT', onInterrupt);
      try {
        log('Type a message; Ctrl-C stops an answer, Ctrl-C at the prompt or Ctrl-D exits.');
        rl.setPrompt('> ');
        rl.prompt();
        // Lines typed (or piped) while an answer streams wait their turn in the iterator.
        for await (const line of rl) {
          if (line.trim() !== '') await turn(line);
          rl.prompt();
        }
      } finally {
        process.off('SIGINT', onInterrupt);
        rl.close();
        await host.close();
      }
    } finally {
      file.close();
    }
  },
};
