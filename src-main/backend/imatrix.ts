/**
 * Importance matrices for the Export screen: computed on the GPU as `gufo imatrix` computes them
 * (llama-imatrix's chunking, the engine's activation sums, llama-imatrix's GGUF file) from the
 * built-in text, the user's recent chats or a text file, as an 'imatrix' job; kept in
 * `<dataDir>/imatrix/` under the model file's SHA-256 and the text's, and reused. A file that is
 * already an importance matrix (.gguf or legacy .dat) is checked and used as it is.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ExportApi, ImatrixSource, ImatrixView, ModelEntry } from '../../src-preload/api';
import { GgufType } from '../core/gguf/values';
import { imatrixChunks, MIN_IMATRIX_CHUNK, type ImportanceMatrix } from '../core/imatrix';
import { BUILTIN_TEXT, BUILTIN_TEXT_LABEL } from '../core/quality/builtin-text';
import { createTokenizer, readVocab } from '../core/tokenizer/index';
import { openGguf } from '../node/gguf-io';
import { loadImatrix, writeImatrixFile } from '../node/imatrix-file';
import { modelSha256 } from '../node/library/model-sha256';
import { sha256File } from '../node/library/sha256-file';
import { requireReadableModel, type BackendContext } from './context';
import type { JobContext } from './jobs';
import { promised } from './promised';
import { chatsText } from './quality/reports';
import { defaultWindow, type QualityText } from './quality/divergence';

/** An importance matrix named by a request: loaded, with its file's SHA-256 (predictions are cached per it). */
export interface ChosenImatrix {
  path: string;
  matrix: ImportanceMatrix;
  sha256: string;
}

/** The matrix at `path`, or an error naming the file and what is wrong with it. */
export async function loadChosenImatrix(path: unknown): Promise<ChosenImatrix> {
  if (typeof path !== 'string' || path.trim() === '')
    throw new Error('imatrix must be the path of an importance matrix file');
  const file = resolve(path);
  if (!existsSync(file)) throw new Error(`${file}: no such importance matrix file`);
  let matrix: ImportanceMatrix;
  try {
    matrix = loadImatrix(file);
  } catch (err) {
    const text = err instanceof Error ? err.message : String(err);
    throw new Error(text.includes(file) ? text : `${file}: not an importance matrix (${text})`);
  }
  if (matrix.size === 0) throw new Error(`${file}: the importance matrix holds no weight matrices`);
  return { path: file, matrix, sha256: await sha256File(file) };
}

export function createImatrixApi(ctx: BackendContext): Pick<ExportApi, 'startImatrix'> {
  const folder = join(ctx.dataDir, 'imatrix');

  /** The text to compute from, or null for a file that is an importance matrix already. */
  function textOf(source: ImatrixSource): QualityText | null {
    if (typeof source !== 'object' || source === null)
      throw new Error('imatrix source must be { kind: "builtin" | "chats" | "file" }');
    if (source.kind === 'builtin') return { text: BUILTIN_TEXT, label: BUILTIN_TEXT_LABEL };
    if (source.kind === 'chats') return chatsText(ctx);
    if (source.kind !== 'file')
      throw new Error(
        `unknown imatrix source "${String((source as { kind: unknown }).kind)}": use builtin, chats or file`,
      );
    if (typeof source.path !== 'string' || source.path.trim() === '')
      throw new Error('an imatrix source file needs a path');
    const path = resolve(source.path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new Error(`${path}: cannot read the file (${code === 'ENOENT' ? 'no such file' : (err as Error).message})`);
    }
    if (bytes.subarray(0, 4).toString('latin1') === 'GGUF' || /\.dat$/i.test(path)) return null;
    const text = bytes.toString('utf8');
    if (text.trim() === '') throw new Error(`${path}: the text file is empty`);
    return { text, label: path };
  }

  async function given(modelId: number, path: string): Promise<ImatrixView> {
    const { matrix } = await loadChosenImatrix(path);
    return {
      modelId,
      path: resolve(path),
      label: resolve(path),
      entries: matrix.size,
      chunks: null,
      chunkSize: null,
      cached: false,
    };
  }

  async function compute(job: JobContext, model: ModelEntry, text: QualityText): Promise<ImatrixView> {
    const { sha256, computed } = await modelSha256(ctx.models, model, {
      signal: job.signal,
      onProgress: (bytes) =>
        job.progress(0, null, `Hashing the model file: ${Math.floor((bytes / model.bytes) * 100)}%`),
    });
    if (computed) ctx.events.emit({ type: 'library-changed' });
    const textSha = createHash('sha256').update(text.text).digest('hex');
    const path = join(folder, `${sha256}-${textSha.slice(0, 16)}.imatrix.gguf`);
    if (existsSync(path)) return viewOf(model.id, path, true);

    const chunks = chunksOf(model, text);
    const ctxTokens = chunks[0]!.length;
    const weights = await ctx.engines.withModel(
      {
        path: model.path,
        ctx: ctxTokens,
        use: 'evaluate',
        onProgress: (done, bytes) =>
          job.progress(0, chunks.length, `Loading ${model.name}: ${Math.floor((done / bytes) * 100)}%`),
      },
      ({ host }) =>
        host.collectChunks(chunks, job.signal, (i) =>
          job.progress(i, chunks.length, `Chunk ${i + 1} of ${chunks.length} (${ctxTokens} tokens)`),
        ),
    );
    job.signal.throwIfAborted();
    mkdirSync(folder, { recursive: true });
    await writeImatrixFile(
      path,
      { datasets: [text.label], chunkCount: chunks.length, chunkSize: ctxTokens, weights },
      job.signal,
    );
    job.progress(chunks.length, chunks.length, null);
    return viewOf(model.id, path, false);
  }

  return promised<Pick<ExportApi, 'startImatrix'>>({
    startImatrix(modelId, source) {
      const model = requireReadableModel(ctx, modelId);
      const text = textOf(source);
      const title = `Importance matrix of ${model.name}`;
      if (text === null) {
        const path = (source as { path: string }).path;
        return ctx.jobs.start({ kind: 'imatrix', title, unit: 'steps', modelId }, () => given(modelId, path));
      }
      // Checked now, so a text too short fails before the job starts.
      chunksOf(model, text);
      return ctx.jobs.start({ kind: 'imatrix', title: `${title} from ${text.label}`, unit: 'steps', modelId }, (job) =>
        compute(job, model, text),
      );
    },
  });
}

/**
 * The text's chunks, llama-imatrix's way: chunks of the model's default window, smaller when the
 * text would not fill two of them (the built-in text is a few hundred tokens).
 */
function chunksOf(model: ModelEntry, text: QualityText): number[][] {
  const { gguf, file } = openGguf(model.path);
  try {
    const vocab = readVocab(gguf);
    const tokens = createTokenizer(vocab).tokenize(text.text, { addBos: true });
    const ctx = Math.min(defaultWindow(model.contextLength), Math.floor(tokens.length / 2));
    if (ctx < MIN_IMATRIX_CHUNK) {
      throw new Error(
        `${text.label}: tokenizes to ${tokens.length} tokens; an importance matrix needs at least ${2 * MIN_IMATRIX_CHUNK}`,
      );
    }
    return imatrixChunks(tokens, ctx, Number.MAX_SAFE_INTEGER, vocab.addBos ? vocab.bos : null, text.label);
  } finally {
    file.close();
  }
}

/** The view of a computed matrix file, from its own keys. */
function viewOf(modelId: number, path: string, cached: boolean): ImatrixView {
  const { gguf, file } = openGguf(path);
  try {
    const entries = gguf.tensors.filter((t) => t.name.endsWith('.in_sum2')).length;
    const datasets = gguf.getArray('imatrix.datasets');
    const label = (datasets?.itemType === GgufType.STRING && datasets.items.at(0)) || path;
    return {
      modelId,
      path,
      label,
      entries,
      chunks: gguf.getNumber('imatrix.chunk_count') ?? null,
      chunkSize: gguf.getNumber('imatrix.chunk_size') ?? null,
      cached,
    };
  } finally {
    file.close();
  }
}
