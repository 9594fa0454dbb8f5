import { createTokenizer, readVocab } from '../../core/tokenizer/index';
import { imatrixChunks } from '../../core/imatrix';
import { openGguf } from '../../node/gguf-io';
import { writeImatrixFile } from '../../node/imatrix-file';
import { CliError, CTX_OPTION, integerOption, log, TEXT_FILE_OPTION, type Command } from '../command';
import { formatInteger } from '../format';
import { interruptSignal, progressBar } from '../progress';
import { readTextOption, windowOption, withEngine } from './perplexity';

const HELP = `Usage: gufo imatrix <model> --text <file.txt> [--ctx N] [--chunks N] -o <out.imatrix.gguf>

Computes an importance matrix on the GPU, as llama.cpp's llama-imatrix does: for every weight
matrix of the layers (attention Q/K/V/output, FFN gate/up/down, MoE router and shared expert; not
the output head), the sums of the input activations and of their squares per column and the
number of tokens, written in llama-imatrix's GGUF format. Mixture-of-experts models get them per
expert, over the tokens routed to each. gufo quantize --imatrix reads it (so does llama-quantize).

The text is tokenized with BOS when the model's vocabulary adds one and cut into chunks of N
tokens (--ctx); tokens after the last whole chunk are not used. Each chunk is evaluated from an
empty context with its first token replaced by BOS. The text must hold at least two chunks.

Options:
  -f, --text FILE     the calibration text, UTF-8 (required)
  -c, --ctx N         chunk size in tokens, at least 16 (default 512, or the model's training context if smaller)
  --chunks N          evaluate at most N chunks (default: all)
  -o, --output FILE   the imatrix file to write (required; written whole or not at all)

Ctrl-C stops without writing anything.
GUFO_ADAPTER picks the GPU adapter by name.
`;

export const imatrixCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    text: TEXT_FILE_OPTION,
    ctx: CTX_OPTION,
    chunks: { type: 'string' },
    output: { type: 'string', short: 'o' },
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo imatrix --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const out = args.values.output;
    if (typeof out !== 'string') throw new CliError('-o <out.imatrix.gguf> is required (see gufo imatrix --help)');
    const maxChunks = integerOption(args, 'chunks', Number.MAX_SAFE_INTEGER);
    if (maxChunks < 1) throw new CliError(`--chunks must be at least 1, not ${maxChunks}`);
    const text = readTextOption(args, 'imatrix');
    const { gguf, file } = openGguf(path);
    let chunks: number[][];
    let ctx: number;
    try {
      ctx = windowOption(gguf, args);
      const vocab = readVocab(gguf);
      const tokens = createTokenizer(vocab).tokenize(text.text, { addBos: true });
      try {
        chunks = imatrixChunks(tokens, ctx, maxChunks, vocab.addBos ? vocab.bos : null, text.label);
      } catch (err) {
        throw new CliError((err as Error).message);
      }
    } finally {
      file.close();
    }
    const signal = interruptSignal();
    const bar = progressBar('imatrix');
    const weights = await withEngine(path, ctx, false, signal, async (host) => {
      try {
        return await host.collectChunks(chunks, signal, (i) =>
          bar.update(i / chunks.length, `${i + 1}/${chunks.length} chunks`),
        );
      } finally {
        bar.done();
      }
    });
    signal.throwIfAborted();
    await writeImatrixFile(out, { datasets: [text.label], chunkCount: chunks.length, chunkSize: ctx, weights }, signal);
    log(
      `${out}: ${weights.length} matrices from ${chunks.length} chunks of ${ctx} tokens (${formatInteger(chunks.length * ctx)} tokens)`,
    );
  },
};
