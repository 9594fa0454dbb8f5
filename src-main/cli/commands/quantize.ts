import { availableParallelism } from 'node:os';
import { ggmlTypeByName, type GgmlType } from '../../core/ggml-types';
import { predictExport } from '../../core/export-size';
import { isQuantFileType, QUANT_FILE_TYPES, type QuantFileType, type RecipeOptions } from '../../core/quant-recipes';
import { parseTensorTypeArg } from '../../core/recipe-overrides';
import { tensorName } from '../../core/tensor-names';
import { FileExistsError } from '../../node/atomic-write';
import { openGguf } from '../../node/gguf-io';
import { loadImatrix } from '../../node/imatrix-file';
import { quantizeFile } from '../../node/quantize';
import { ExportStore } from '../../node/store/exports';
import { CliError, log, printJson, type Command } from '../command';
import { formatBytes } from '../format';
import { interruptSignal, progressBar } from '../progress';
import { storeInAppData } from '../results-store';
import { printPlan } from './quantize-plan';

const HELP = `Usage: gufo quantize <in.gguf> <out.gguf> --type <T> [options]
       gufo quantize --plan <in.gguf> [--imatrix FILE] [recipe options] [--json]

Re-quantizes a model the way llama-quantize does: each tensor gets the type llama.cpp's rules
choose for the file type T (by role, layer and shape). The output is written tensor by tensor
with bounded memory, under a temporary name that takes the output's name only when complete:
Ctrl-C, a crash or a full disk leave no partial file (and the next run into that folder removes
what a killed run left). Like cp -n, an existing <out.gguf> is never replaced, unless --force;
the input itself is always refused as the output, by any name (a hard link, a symlink).

File types: ${QUANT_FILE_TYPES.join(', ')}

Options:
  --type T                    the file type to produce (required)
  --imatrix FILE              importance matrix from llama-imatrix (GGUF or legacy .dat);
                              the IQ1_*, IQ2_* types, IQ3_XXS, IQ3_XS and Q2_K_S need one
                              (gufo imatrix makes one)
  --allow-requantize          convert tensors that are already quantized (through f32)
  --output-tensor-type t      ggml type for ${tensorName('output')} (e.g. q8_0)
  --token-embedding-type t    ggml type for ${tensorName('token_embd')}
  --pure                      one type for every quantizable tensor, no mixture
  --tensor-type PATTERN=TYPE  (repeatable) tensors whose name matches the regular expression
                              PATTERN get TYPE instead of the mixture's choice; the first
                              matching PATTERN wins; rows whose length is not a multiple of TYPE's block still fall back.
                              A file written with any of these four options records them in
                              its metadata (gufo.quantize.recipe), shown by gufo inspect
  --threads N                 threads that encode (default: every core, here ${availableParallelism()});
                              the output is the same for any N
  --force                     replace an existing <out.gguf>: the new file is renamed over it,
                              so it has the default permissions (umask), not the old file's
  --json                      print { input, output, type, tensors: [{ name, from, to, rmse }],
                              bytesIn, bytesOut, seconds } on stdout
  --plan                      write nothing: for every file type, the exact size of the file
                              it would write, bits per weight, fallbacks and predicted quality
                              (a sample of rows of every tensor encoded and decoded back; see
                              docs/quality.md); with --json an array of { type, bytes,
                              bitsPerWeight, fallbacks: [{ from, to, tensors }], predicted:
                              { elements, sampledElements, rmse, relativeError, snrDb },
                              unavailable }

The file is recorded as an export of the input in the app's database, as the app records its
own (GUFO_HOME/gufo.db, else the one in the OS user-data folder the app uses), and both files join
the app's library if they are not in it; nothing of it is written into the file.
`;

function typeOption(value: string | boolean | undefined, flag: string): GgmlType | undefined {
  if (value === undefined) return undefined;
  const type = typeof value === 'string' ? ggmlTypeByName(value) : undefined;
  if (!type) throw new CliError(`${flag}: unknown ggml type "${String(value)}"`);
  return type;
}

function threadsOption(value: string | boolean | undefined): number {
  if (value === undefined) return availableParallelism();
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : 0;
  if (n < 1) throw new CliError(`--threads must be a whole number of at least 1, not "${String(value)}"`);
  return n;
}

/**
 * What the written file holds, from the plan the export screen shows: real bits per weight,
 * tensors per output type, and the tensors whose rows could not hold the mixture's type.
 */
function planSummary(
  input: string,
  fileType: QuantFileType,
  recipe: RecipeOptions,
  imatrixEntries: number | undefined,
): string {
  // Positional reads: a map would load koffi (a native addon) for a few header reads.
  const { gguf, file } = openGguf(input, { mmap: false });
  try {
    const p = predictExport(gguf, fileType, { ...recipe, imatrixEntries });
    const types = p.outputTypes.map((t) => `${t.tensors} ${t.type}`).join(', ');
    const fallbacks = p.fallbacks.map((f) => `${f.tensors} ${f.from} → ${f.to}`).join(', ');
    return `${p.bitsPerWeight.toFixed(2)} bits per weight; tensors: ${types}${fallbacks ? `; fell back (row length not a multiple of the type's block): ${fallbacks}` : ''}`;
  } finally {
    file.close();
  }
}

export const quantizeCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    type: { type: 'string' },
    imatrix: { type: 'string' },
    'allow-requantize': { type: 'boolean' },
    'output-tensor-type': { type: 'string' },
    'token-embedding-type': { type: 'string' },
    pure: { type: 'boolean' },
    'tensor-type': { type: 'string', multiple: true },
    plan: { type: 'boolean' },
    threads: { type: 'string' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const imatrixPath = args.values.imatrix;
    const imatrix = typeof imatrixPath === 'string' ? loadImatrix(imatrixPath) : undefined;
    const recipe: RecipeOptions = {
      outputTensorType: typeOption(args.values['output-tensor-type'], '--output-tensor-type'),
      tokenEmbeddingType: typeOption(args.values['token-embedding-type'], '--token-embedding-type'),
      pure: Boolean(args.values.pure),
      // parseArgs gives a repeatable option as a list.
      tensorTypes: ((args.values['tensor-type'] as unknown as string[] | undefined) ?? []).map(parseTensorTypeArg),
    };
    if (args.values.plan) return printPlan(args.positionals, { ...recipe, imatrix }, Boolean(args.values.json));
    const [input, output, ...extra] = args.positionals;
    if (!input || !output || extra.length > 0)
      throw new CliError('expected an input and an output file (see gufo quantize --help)');
    const fileType = String(args.values.type ?? '').toUpperCase();
    if (!isQuantFileType(fileType)) {
      throw new CliError(
        `--type must be one of ${QUANT_FILE_TYPES.join(', ')}${args.values.type ? `, not "${String(args.values.type)}"` : ''}`,
      );
    }
    const threads = threadsOption(args.values.threads);
    const bar = progressBar(`${fileType}`);
    let report;
    try {
      report = await quantizeFile(input, output, fileType, {
        imatrix,
        allowRequantize: Boolean(args.values['allow-requantize']),
        ...recipe,
        overwrite: Boolean(args.values.force),
        threads,
        thisThreadEncodes: true,
        // Only --json prints the tensors' errors.
        measureError: Boolean(args.values.json),
        signal: interruptSignal(),
        onProgress: (p) => bar.update(p.elementsDone / p.elementsTotal, `${p.index + 1}/${p.count} ${p.tensor}`),
      });
    } catch (err) {
      if (err instanceof FileExistsError) throw new CliError(`${err.message} (pass --force to replace it)`);
      throw err;
    } finally {
      bar.done();
    }
    // Recorded as the app records its exports: the app then knows the file's source (the inspector's tensor error).
    const written = report;
    await storeInAppData(async (store) => {
      const source = await store.entry(input);
      const made = await store.entry(output);
      const exports = new ExportStore(store.db);
      const { id } = exports.start({
        sourceModelId: source.id,
        sourceName: source.name,
        sourcePath: source.path,
        outputPath: made.path,
        fileType,
      });
      exports.finish(id, {
        status: 'done',
        bytesOut: written.bytesOut,
        seconds: written.seconds,
        outputModelId: made.id,
      });
    });
    if (args.values.json) return printJson(report);
    log(
      `${output}: ${fileType}, ${formatBytes(report.bytesIn)} → ${formatBytes(report.bytesOut)} in ${report.seconds.toFixed(1)} s`,
    );
    log(planSummary(input, fileType, recipe, imatrix?.size));
  },
};
