import { createTokenizer, readVocab } from '../../core/tokenizer/index';
import { openGguf } from '../../node/gguf-io';
import { CliError, CTX_OPTION, integerOption, log, printJson, type Command } from '../command';
import { adapterJson, startEngine, trainedContext } from './run';

const HELP = `Usage: gufo embed <model> --text "<text>" [--text "<text>" ...] [--ctx N] [--json]

Embeddings on the GPU (WebGPU), as llama.cpp makes them: each text tokenized with BOS and EOS as
the vocabulary asks (special-token texts read as those tokens), evaluated alone, its final hidden
states pooled by the file's pooling_type (mean, cls or last; mean for a generation model without
one) and L2-normalized. A text longer than the context is an error.

Options:
  --text TEXT   a text to embed (repeat for several)
  -c, --ctx N   context length (default: the longest text, at most the model's)
  --json        one JSON document on stdout: { pooling, embeddings: [[...], ...], tokens: [n, ...], adapter }

Without --json: one line per text, its vector's values separated by spaces.
`;

export const embedCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    text: { type: 'string', multiple: true },
    ctx: CTX_OPTION,
    json: { type: 'boolean' },
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo embed --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"; pass each text with --text`);
    const texts = (args.values.text ?? []) as string[];
    if (texts.length === 0) throw new CliError('--text "<text>" is required (see gufo embed --help)');
    const json = args.values.json === true;

    const { gguf, file } = openGguf(path);
    try {
      const tok = createTokenizer(readVocab(gguf));
      const inputs = texts.map((text, i) => {
        const ids = tok.tokenize(text, { addSpecial: true, parseSpecial: true });
        if (ids.length === 0) throw new CliError(`--text ${i + 1} gives no tokens: give some text`);
        return ids;
      });
      const longest = Math.max(...inputs.map((ids) => ids.length));
      const ctx = integerOption(args, 'ctx', Math.min(trainedContext(gguf) ?? Infinity, Math.max(256, longest)));
      inputs.forEach((ids, i) => {
        if (ids.length > ctx)
          throw new CliError(`--text ${i + 1} has ${ids.length} tokens, more than the context of ${ctx} (see --ctx)`);
      });
      const { host, info } = await startEngine(path, ctx, json, { use: 'evaluate' });
      try {
        const result = await host.embed(inputs);
        if (json) {
          printJson({
            pooling: result.pooling,
            embeddings: result.embeddings,
            tokens: inputs.map((ids) => ids.length),
            adapter: adapterJson(info),
          });
        } else {
          process.stdout.write(result.embeddings.map((v) => v.join(' ') + '\n').join(''));
          log(
            `${result.embeddings.length} embedding${result.embeddings.length === 1 ? '' : 's'} of ${info.model!.embedding} dimensions (${result.pooling} pooling, ${result.promptTokens} tokens)`,
          );
        }
      } finally {
        await host.close();
      }
    } finally {
      file.close();
    }
  },
};
