import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { isQuantFileType, QUANT_FILE_TYPES } from '../../core/quant-recipes';
import { OLLAMA_MIN_VERSION } from '../../node/ollama/client';
import { exportForOllama, type OllamaExportPhase, type OllamaExportProgress } from '../../node/ollama/export';
import { ollamaBaseUrl } from '../../node/ollama/host';
import { CliError, CTX_OPTION, integerOption, log, printJson, type Command } from '../command';
import { interruptSignal, progressBar } from '../progress';

const HELP = `Usage: gufo ollama export <model> --name <name[:tag]> [options]

Hands a model to Ollama: writes <out>/<name>.gguf (re-quantized with --type, else the file as it
is) and a Modelfile beside it (FROM, TEMPLATE when Ollama would not recognize the file's own chat
template, PARAMETER stop for its end-of-turn tokens, PARAMETER num_ctx, SYSTEM). Then, if an Ollama
server answers on OLLAMA_HOST (default 127.0.0.1:11434), uploads the file as a blob and creates the
model, showing Ollama's progress; otherwise prints the \`ollama create\` command to run.
Follows Ollama's REST API as of ${OLLAMA_MIN_VERSION} (/api/blobs/:digest, /api/create with "files").

Options:
  --name NAME          the Ollama model name, [namespace/]name[:tag] (required)
  --type T             re-quantize to this file type: ${QUANT_FILE_TYPES.join(', ')}
  --allow-requantize   let --type convert tensors that are already quantized
  --out DIR            where to write the files (default: the current folder)
  --system TEXT        the model's system prompt
  -c, --ctx N          PARAMETER num_ctx (default: the model's context length, at most 8192)
  --no-upload          only write the files, even if Ollama is running
  --force              replace <name>.gguf and Modelfile if they exist
  --json               print { name, outputPath, modelfilePath, modelfile, sha256, created,
                       ollamaVersion, command, notes } on stdout
`;

const PHASES: Record<OllamaExportPhase, string> = {
  write: 'write',
  hash: 'sha256',
  upload: 'upload',
  create: 'create',
};

export const ollamaCommand: Command = {
  help: HELP,
  modelArgs: [1],
  options: {
    name: { type: 'string' },
    type: { type: 'string' },
    'allow-requantize': { type: 'boolean' },
    out: { type: 'string' },
    system: { type: 'string' },
    ctx: CTX_OPTION,
    'no-upload': { type: 'boolean' },
    force: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [action, source, ...extra] = args.positionals;
    if (action !== 'export' || !source || extra.length > 0)
      throw new CliError('expected: gufo ollama export <model.gguf> --name <name> (see gufo ollama --help)');
    if (typeof args.values.name !== 'string')
      throw new CliError('--name is required: the Ollama model name, e.g. --name mymodel:q4');
    const fileType = args.values.type === undefined ? undefined : String(args.values.type).toUpperCase();
    if (fileType !== undefined && !isQuantFileType(fileType))
      throw new CliError(`--type must be one of ${QUANT_FILE_TYPES.join(', ')}, not "${String(args.values.type)}"`);
    const contextSize = args.values.ctx === undefined ? undefined : integerOption(args, 'ctx', 0);
    const host = args.values['no-upload'] ? null : ollamaBaseUrl(process.env);
    const progress = phaseProgress();
    let result;
    try {
      result = await exportForOllama({
        source: resolve(source),
        name: args.values.name,
        fileType,
        allowRequantize: Boolean(args.values['allow-requantize']),
        threads: availableParallelism(),
        outDir: resolve(typeof args.values.out === 'string' ? args.values.out : '.'),
        overwrite: Boolean(args.values.force),
        system: typeof args.values.system === 'string' ? args.values.system : undefined,
        contextSize,
        host,
        signal: interruptSignal(),
        onProgress: (p) => progress.update(p),
      });
    } finally {
      progress.done();
    }
    if (args.values.json) return printJson(result);
    log(`Wrote ${result.outputPath} and ${result.modelfilePath}.`);
    for (const note of result.notes) log(note);
    if (result.created)
      log(`Created ${result.name} in Ollama ${result.ollamaVersion} at ${host}: ollama run ${result.name}`);
    else process.stdout.write(`${result.command}\n`);
  },
};

/** A progress bar per phase (writing, hashing, uploading, creating), each ended when the next begins. */
function phaseProgress() {
  let phase: OllamaExportPhase | null = null;
  let bar: ReturnType<typeof progressBar> | null = null;
  return {
    update(p: OllamaExportProgress): void {
      if (p.phase !== phase) {
        bar?.done();
        phase = p.phase;
        bar = progressBar(PHASES[p.phase]);
      }
      bar?.update(p.total > 0 ? p.done / p.total : 0, p.detail);
    },
    done(): void {
      bar?.done();
    },
  };
}
