/**
 * A model handed to Ollama: `<dir>/<name>.gguf` (re-quantized when a file type is asked for, else
 * the same file, linked where the disk allows) and a Modelfile beside it; then, when an Ollama
 * server answers, the file uploaded as a blob (skipped if Ollama has it) and the model created
 * with its template and parameters. Without a server, the `ollama create` command to run is given.
 */
import { constants, existsSync } from 'node:fs';
import { copyFile, link, mkdir, rename, stat, unlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import type { ImportanceMatrix } from '../../core/imatrix';
import type { QuantFileType } from '../../core/quant-recipes';
import type { OllamaExportResult } from '../../../src-preload/api/ollama';
import { writeAtomically } from '../atomic-write';
import { openGguf } from '../gguf-io';
import { sha256File } from '../library/sha256-file';
import { quantizeFile } from '../quantize';
import { OLLAMA_MIN_VERSION, OllamaClient, versionAtLeast } from './client';
import { checkOllamaName, createFields, ollamaFileStem, ollamaSettings, renderModelfile } from './modelfile';

export type OllamaExportPhase = 'write' | 'hash' | 'upload' | 'create';

export interface OllamaExportProgress {
  phase: OllamaExportPhase;
  /** Bytes (of the source while re-quantizing, of the output after), of `total`. */
  done: number;
  total: number;
  detail: string;
}

export interface OllamaExportOptions {
  source: string;
  name: string;
  fileType?: QuantFileType;
  allowRequantize?: boolean;
  /** The importance matrix that weighs the re-quantization, and the file it came from. */
  imatrix?: { matrix: ImportanceMatrix; path: string };
  /** Threads that re-quantize (quantizeFile's option; default 1). */
  threads?: number;
  outDir: string;
  /** Replace `<name>.gguf` and the Modelfile when they exist (default: refuse). */
  overwrite?: boolean;
  system?: string;
  contextSize?: number;
  /** The Ollama server's base URL; null: write the files only. */
  host: string | null;
  signal?: AbortSignal;
  onProgress?: (progress: OllamaExportProgress) => void;
}

/** The contract's result before the library knows the output (outputModelId). */
export type OllamaExportOutcome = Omit<OllamaExportResult, 'outputModelId'>;

export async function exportForOllama(options: OllamaExportOptions): Promise<OllamaExportOutcome> {
  const { source, signal } = options;
  const name = checkOllamaName(options.name);
  const progress = (phase: OllamaExportPhase, done: number, total: number, detail: string) =>
    options.onProgress?.({ phase, done, total, detail });
  const fileName = `${ollamaFileStem(name)}.gguf`;
  const outputPath = join(options.outDir, fileName);
  const modelfilePath = join(options.outDir, 'Modelfile');
  if (!options.overwrite) {
    for (const path of [outputPath, modelfilePath])
      if (existsSync(path)) throw new Error(`${path} already exists (choose another folder or name, or replace it)`);
  }
  await mkdir(options.outDir, { recursive: true });

  const sourceBytes = (await stat(source)).size;
  if (options.fileType) {
    const fileType = options.fileType;
    await quantizeFile(source, outputPath, fileType, {
      imatrix: options.imatrix?.matrix,
      allowRequantize: options.allowRequantize,
      threads: options.threads,
      overwrite: options.overwrite,
      signal,
      onProgress: (p) =>
        progress(
          'write',
          Math.round((p.elementsDone / p.elementsTotal) * sourceBytes),
          sourceBytes,
          `Quantizing to ${fileType}: ${p.tensor}`,
        ),
    });
  } else {
    progress('write', 0, sourceBytes, `Writing ${fileName}`);
    await sameFile(source, outputPath);
  }
  signal?.throwIfAborted();

  const { gguf, file } = openGguf(outputPath);
  let settings;
  try {
    settings = ollamaSettings(gguf, { system: options.system, contextSize: options.contextSize });
  } finally {
    file.close();
  }
  const modelfile = renderModelfile(
    fileName,
    settings,
    `${name}: written by Gufo from ${basename(source)}. Create it with: ollama create ${name} -f Modelfile`,
  );
  await writeAtomically(modelfilePath, (put) => put(new TextEncoder().encode(modelfile)));
  const command = `ollama create ${name} -f ${quoteArg(modelfilePath)}`;

  const bytes = (await stat(outputPath)).size;
  const sha256 = await sha256File(outputPath, {
    signal,
    onProgress: (done) => progress('hash', done, bytes, 'Computing SHA-256'),
  });
  const outcome: OllamaExportOutcome = {
    name,
    outputPath,
    modelfilePath,
    modelfile,
    sha256,
    created: false,
    ollamaVersion: null,
    command,
    notes: [...quantizedNote(options), ...settings.notes],
  };
  if (options.host === null) return outcome;

  // The result gives the command to run when the model was not created: the notes say why only.
  const client = new OllamaClient(options.host);
  const version = await client.version(signal);
  if (version === null) {
    outcome.notes.push(`No Ollama server answers at ${options.host}.`);
    return outcome;
  }
  outcome.ollamaVersion = version;
  if (!versionAtLeast(version, OLLAMA_MIN_VERSION)) {
    outcome.notes.push(
      `Ollama ${version} at ${options.host} is older than ${OLLAMA_MIN_VERSION}, whose API Gufo uses: update it, or run the command.`,
    );
    return outcome;
  }
  const digest = `sha256:${sha256}`;
  if (!(await client.hasBlob(digest, signal))) {
    await client.pushBlob(outputPath, digest, bytes, {
      signal,
      onProgress: (sent) => progress('upload', sent, bytes, `Uploading to Ollama at ${options.host}`),
    });
  }
  await client.create(
    { model: name, files: { [fileName]: digest }, ...createFields(settings) },
    { signal, onStatus: (s) => progress('create', s.completed ?? 0, s.total ?? 0, `Ollama: ${s.status}`) },
  );
  outcome.created = true;
  return outcome;
}

/**
 * `to` with the bytes of `from`: a hard link where the disk allows (no copy of gigabytes), else a
 * copy (a clone where the file system can); either under a temporary name renamed into place.
 */
async function sameFile(from: string, to: string): Promise<void> {
  const temp = join(dirname(to), `.${basename(to)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await link(from, temp).catch(() => copyFile(from, temp, constants.COPYFILE_FICLONE));
    await rename(temp, to);
    // Renaming a link onto another link of the same file does nothing, leaving the temporary name.
    await unlink(temp).catch(() => {});
  } catch (err) {
    await unlink(temp).catch(() => {});
    throw err;
  }
}

/** A path as one shell argument (quoted when it holds anything but plain characters). */
function quoteArg(path: string): string {
  return /^[\w@%+=:,./-]+$/.test(path) ? path : `'${path.replace(/'/g, `'\\''`)}'`;
}

/** Whether an importance matrix weighed a re-quantization (nothing to say of a file sent as it is). */
function quantizedNote(options: OllamaExportOptions): string[] {
  if (!options.fileType) return [];
  return [
    options.imatrix
      ? `Quantized to ${options.fileType} with the importance matrix ${options.imatrix.path}.`
      : `Quantized to ${options.fileType} without an importance matrix.`,
  ];
}
