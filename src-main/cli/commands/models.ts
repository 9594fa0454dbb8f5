import { fileTypeLabel, guessedFileType, type ModelEntry } from '../../../src-preload/api';
import { printJson, type Command } from '../command';
import { formatBytes, table } from '../format';
import { withLibrary } from '../library-backend';

const HELP = `Usage: gufo models [--json] [--rescan] [--hash]

Lists the model library: the models in Gufo's own folder (downloads and exports), in the folders
of GUFO_MODELS_DIRS and Settings, and those other apps already have, read in place:
  Ollama        OLLAMA_MODELS, else ~/.ollama/models (Linux service: /usr/share/ollama/.ollama/models)
  LM Studio     ~/.lmstudio/models, ~/.cache/lm-studio/models
  Hugging Face  HF_HUB_CACHE, else HF_HOME/hub, else ~/.cache/huggingface/hub
  Jan           <app data>/Jan/data/{llamacpp/models,models}, ~/jan/models
  GPT4All       <app data>/nomic.ai/GPT4All (Windows: %LOCALAPPDATA%)
A split GGUF set (name-00001-of-0000N.gguf) is one model; the same file (by SHA-256) in several
places is one model with several locations. A model is named from where it is: the file name
without .gguf (Ollama's name:tag, the Hugging Face cache's org/repo/file); general.name is shown
beside it. Models Gufo cannot run (vocabulary-only files, architectures the engine lacks, split
sets with a part missing) are listed with the reason, marked "not runnable".

Options:
  --json     one JSON array on stdout, one entry per model: { id, name, generalName, path, source,
             bytes, architecture, fileType, guessedFileType, parameters, contextLength, parts,
             sha256, error, runnable, notRunnable, locations: [{ path, source, label }] }
             fileType: general.file_type as llama.cpp names it, null when the file does not say
             (the table then shows the type guessed from the tensors, marked "(guessed)");
             guessedFileType: that guess (the largest share of the tensors' bytes), else null;
             runnable: whether Gufo can run it; notRunnable: why not, null when it can
  --rescan   read every file's header again, changed or not
  --hash     first compute the SHA-256 of files that have none (finds copies of one file)
`;

export const modelsCommand: Command = {
  help: HELP,
  options: {
    json: { type: 'boolean' },
    rescan: { type: 'boolean' },
    hash: { type: 'boolean' },
  },
  async run(args) {
    const models = await withLibrary(async ({ api, context }) => {
      const listed = args.values.rescan ? await api.rescanLibrary() : await api.listModels();
      if (!args.values.hash) return listed;
      for (const job of context.jobs.list().filter((j) => j.kind === 'hash' && j.status === 'running'))
        await context.jobs.wait(job.id);
      return api.listModels();
    });
    if (args.values.json) return printJson(models.map(jsonEntry));
    if (models.length === 0) return void process.stdout.write('No models found.\n');
    const rows = models.map((m) => [
      m.name,
      m.generalName ?? '—',
      m.source,
      m.architecture ?? '—',
      fileTypeLabel(m.fileType, m.typeMix) ?? '—',
      formatBytes(m.bytes),
      m.notRunnable
        ? `${m.path} (not runnable: ${m.notRunnable})`
        : m.locations.length > 1
          ? `${m.path} (+${copies(m.locations.length - 1)})`
          : m.path,
    ]);
    process.stdout.write(table(['name', 'general.name', 'source', 'arch', 'type', 'size', 'path'], rows, [5]) + '\n');
  },
};

function copies(n: number): string {
  return `${n} ${n === 1 ? 'copy' : 'copies'}`;
}

function jsonEntry(m: ModelEntry) {
  return {
    id: m.id,
    name: m.name,
    generalName: m.generalName,
    path: m.path,
    source: m.source,
    bytes: m.bytes,
    architecture: m.architecture,
    fileType: m.fileType,
    guessedFileType: guessedFileType(m.fileType, m.typeMix),
    parameters: m.parameters,
    contextLength: m.contextLength,
    parts: m.parts,
    sha256: m.sha256,
    error: m.error,
    runnable: m.notRunnable === null,
    notRunnable: m.notRunnable,
    locations: m.locations,
  };
}
