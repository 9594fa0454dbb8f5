/**
 * Export: a library model re-quantized to another llama.cpp file type (node/quantize.ts, the
 * same tensors llama-quantize writes), as an 'export' job with progress and cancel. The file is
 * written under a temporary name that takes the output's name only when complete and only if no
 * file has appeared there meanwhile (an export never overwrites), then joins the library; every
 * export is kept in the exports table with how it ended. When asked, a quality
 * report (quality/reports.ts) of the new file against its source follows as a job of its own. An
 * importance matrix (imatrix.ts) weighs the encoders, as `gufo quantize --imatrix` does.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import type {
  ExportApi,
  ExportPlanView,
  ExportRecord,
  ExportRequest,
  ExportTypeOption,
  QualityTextSource,
} from '../../src-preload/api';
import { bytesWrittenAt, predictExport, type ExportPrediction } from '../core/export-size';
import type { GgufFile } from '../core/gguf/gguf-file';
import { isQuantFileType, planQuantization, QUANT_FILE_TYPES, type QuantFileType } from '../core/quant-recipes';
import { recipeFileTag, resolveOverrides, type ResolvedOverrides } from '../core/recipe-overrides';
import { recipeTypes } from '../core/recipe-types';
import { FileExistsError, removeStaleTemps } from '../node/atomic-write';
import { openGguf } from '../node/gguf-io';
import { readModelFile } from '../node/model-file';
import { pooledPrediction } from '../node/quant-plan';
import { appQuantizeThreads, quantizeFile } from '../node/quantize';
import { ExportStore } from '../node/store/exports';
import { requireReadableModel, type BackendContext } from './context';
import { cpuTurnsOf } from './cpu-turns';
import { createImatrixApi, loadChosenImatrix, type ChosenImatrix } from './imatrix';
import { isAbort, type JobContext } from './jobs';
import { promised } from './promised';
import { createQualityReports, isQualityTextSource } from './quality/reports';
import { createQualityPredictions } from './quality/prediction';

export function createExportApi(ctx: BackendContext): ExportApi {
  const store = new ExportStore(ctx.db);
  const quality = createQualityReports(ctx);
  const predictions = createQualityPredictions(ctx);
  // The folder's owner is new: no export of an earlier run can still be going; clear what they left.
  // (A second back end, such as a CLI command while the app runs, leaves the owner's exports alone.)
  if (ctx.owner) for (const output of store.markInterrupted()) void removeStaleTemps(dirname(output));
  /** Outputs being written now: a second export must not pick the same free name. */
  const writing = new Set<string>();

  const outputDir = () => ctx.settings.get().exportDir ?? ctx.modelsDir;

  /** `<dir>/<source>-<tag>.gguf` (the type, or recipeFileTag's name of a custom recipe), or the first of "-2", "-3", … that neither exists nor is being written. */
  const freeOutputPath = (sourcePath: string, tag: string): string => {
    const stem = join(resolve(outputDir()), `${basename(sourcePath).replace(/\.gguf$/i, '')}-${tag}`);
    for (let n = 1; ; n++) {
      const path = `${stem}${n === 1 ? '' : `-${n}`}.gguf`;
      if (!existsSync(path) && !writing.has(path)) return path;
    }
  };

  return promised<ExportApi>({
    async exportPlan(modelId, options = {}): Promise<ExportPlanView> {
      const model = requireReadableModel(ctx, modelId);
      const allow = options.allowRequantize === true;
      const recipe = checkedRecipe(options.recipe);
      const imatrix = await chosenImatrix(options.imatrix);
      const measured = predictions.cached(model, imatrix)?.tensors ?? null;
      const optionsView = withGguf(model.path, (gguf) =>
        QUANT_FILE_TYPES.map((fileType): ExportTypeOption => {
          const defaultOutputPath = freeOutputPath(model.path, recipeFileTag(fileType, recipe));
          try {
            const p = predictExport(gguf, fileType, { ...recipe, imatrixEntries: imatrix?.matrix.size });
            const unavailable = blocker(p, allow);
            return {
              fileType,
              predictedBytes: p.fileBytes,
              bitsPerWeight: p.bitsPerWeight,
              fallbacks: p.fallbacks,
              requantizes: p.requantized.length,
              unavailable,
              defaultOutputPath,
              needsImatrix:
                imatrix === null &&
                p.unsupported !== null &&
                predictExport(gguf, fileType, { ...recipe, imatrixEntries: 1 }).unsupported === null,
              predicted:
                unavailable === null && measured
                  ? pooledPrediction(
                      planQuantization(gguf, fileType, { ...recipe, hasImatrix: imatrix !== null }).tensors,
                      measured,
                    )
                  : null,
            };
          } catch (err) {
            return {
              fileType,
              predictedBytes: null,
              bitsPerWeight: null,
              fallbacks: [],
              requantizes: 0,
              unavailable: errorText(err),
              defaultOutputPath,
              needsImatrix: false,
              predicted: null,
            };
          }
        }),
      );
      return {
        modelId,
        sourceBytes: model.bytes,
        options: optionsView,
        defaultOutputDir: resolve(outputDir()),
        recipeTypes: recipeTypes(),
      };
    },

    async startExport(request: ExportRequest): Promise<string> {
      const model = requireReadableModel(ctx, request.modelId);
      const { fileType } = request;
      if (!isQuantFileType(fileType))
        throw new Error(`unknown file type "${fileType}"; Gufo writes ${QUANT_FILE_TYPES.join(', ')}`);
      const recipe = checkedRecipe(request.recipe);
      const imatrix = await chosenImatrix(request.imatrix);
      const prediction = withGguf(model.path, (gguf) => {
        try {
          return predictExport(gguf, fileType, { ...recipe, imatrixEntries: imatrix?.matrix.size });
        } catch (err) {
          throw new Error(`${model.path}: cannot export to ${fileType}: ${errorText(err)}`);
        }
      });
      const problem = blocker(prediction, request.allowRequantize === true);
      if (problem) throw new Error(`${model.path}: cannot export to ${fileType}: ${problem}`);
      const qualityText = request.qualityReport;
      if (qualityText !== undefined && !isQualityTextSource(qualityText))
        throw new Error(`unknown quality report text "${String(qualityText)}": use builtin or chats`);
      const output = chooseOutput(request.outputPath, () => {
        mkdirSync(outputDir(), { recursive: true });
        return freeOutputPath(model.path, recipeFileTag(fileType, recipe));
      });
      if (writing.has(output)) throw new Error(`${output} is being written by another export`);

      const record = store.start({
        sourceModelId: model.id,
        sourceName: model.name,
        sourcePath: model.path,
        outputPath: output,
        fileType,
      });
      writing.add(output);
      const title = `Export ${model.name} to ${fileType}`;
      const jobId = ctx.jobs.start({ kind: 'export', title, unit: 'bytes', modelId: model.id }, (job) =>
        runExport(job, {
          recordId: record.id,
          title,
          source: model.path,
          output,
          fileType,
          prediction,
          recipe,
          imatrix,
          allowRequantize: request.allowRequantize === true,
          qualityText,
        }).finally(() => writing.delete(output)),
      );
      store.setJob(record.id, jobId);
      return jobId;
    },

    listExports() {
      return store.list();
    },

    ...quality.api,
    ...predictions.api,
    ...createImatrixApi(ctx),
  });

  async function runExport(job: JobContext, e: ExportJob): Promise<ExportRecord> {
    const started = performance.now();
    const seconds = () => (performance.now() - started) / 1000;
    job.progress(0, e.prediction.fileBytes, null);
    try {
      const report = await cpuTurnsOf(ctx).run(job, e.title, () => {
        job.progress(0, e.prediction.fileBytes, null);
        return quantizeFile(e.source, e.output, e.fileType, {
          ...e.recipe,
          imatrix: e.imatrix?.matrix,
          allowRequantize: e.allowRequantize,
          threads: appQuantizeThreads(),
          signal: job.signal,
          onProgress: (p) =>
            job.progress(bytesWrittenAt(e.prediction, p.index, p.elementsDone), e.prediction.fileBytes, p.tensor),
        });
      });
      // The file is complete: it joins the library (again, if the user had removed that path).
      ctx.models.unexclude(e.output);
      const entry = ctx.models.upsert(readModelFile(e.output, 'exported'));
      ctx.events.emit({ type: 'library-changed' });
      job.progress(report.bytesOut, e.prediction.fileBytes, null);
      const done = store.finish(e.recordId, {
        status: 'done',
        bytesOut: report.bytesOut,
        seconds: report.seconds,
        outputModelId: entry.id,
      });
      if (e.qualityText) quality.startForExport(done.id, e.qualityText);
      return done;
    } catch (err) {
      const cancelled = isAbort(err, job.signal);
      const error = cancelled ? null : failureText(err, e);
      store.finish(e.recordId, { status: cancelled ? 'cancelled' : 'failed', seconds: seconds(), error });
      throw cancelled ? err : new Error(error!);
    }
  }
}

interface ExportJob {
  recordId: number;
  /** The job's title, which a job waiting for its turn names. */
  title: string;
  source: string;
  output: string;
  fileType: QuantFileType;
  prediction: ExportPrediction;
  recipe: ResolvedOverrides;
  imatrix: ChosenImatrix | null;
  allowRequantize: boolean;
  /** The text of the quality report to run once the file is written, if any. */
  qualityText: QualityTextSource | undefined;
}

/** The request's recipe with its patterns and types checked; an error names the bad one. */
function checkedRecipe(recipe: ExportRequest['recipe']): ResolvedOverrides {
  if (recipe === undefined || recipe === null) return {};
  if (typeof recipe !== 'object')
    throw new Error('recipe must be an object { tensorTypes, outputTensorType, tokenEmbeddingType, pure }');
  try {
    return resolveOverrides(recipe);
  } catch (err) {
    throw new Error(`recipe: ${errorText(err)}`);
  }
}

/** The request's importance matrix, loaded; null when it names none. */
async function chosenImatrix(path: string | undefined): Promise<ChosenImatrix | null> {
  if (path === undefined || path === null) return null;
  try {
    return await loadChosenImatrix(path);
  } catch (err) {
    throw new Error(`imatrix: ${errorText(err)}`);
  }
}

/** Why `prediction` cannot be exported, or null. */
function blocker(p: ExportPrediction, allowRequantize: boolean): string | null {
  if (p.unsupported) return p.unsupported;
  if (p.requantized.length > 0 && !allowRequantize) {
    const [first] = p.requantized;
    const count = p.requantized.length;
    return (
      `re-quantizes ${count} already-quantized tensor${count === 1 ? '' : 's'} (e.g. "${first!.name}" ${first!.from} → ${first!.to}), ` +
      'losing some quality; allow re-quantizing to choose it'
    );
  }
  return null;
}

/** The output path asked for (checked), or the default one. */
function chooseOutput(asked: string | undefined, byDefault: () => string): string {
  if (asked === undefined || asked.trim() === '') return byDefault();
  const path = resolve(asked.trim());
  if (!/\.gguf$/i.test(path)) throw new Error(`${path}: the output must be a .gguf file`);
  // Never overwrite: not the source, not another model, not anything else.
  if (existsSync(path))
    throw new Error(`${path} already exists; choose a new file name (an export never overwrites a file)`);
  if (!existsSync(dirname(path))) throw new Error(`${dirname(path)}: no such folder`);
  return path;
}

function withGguf<T>(path: string, use: (gguf: GgufFile) => T): T {
  const { gguf, file } = openGguf(path);
  try {
    return use(gguf);
  } finally {
    file.close();
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** The failure as the user reads it: naming the file, and saying what to do about a full disk or a file that appeared. */
function failureText(err: unknown, e: ExportJob): string {
  if (err instanceof FileExistsError) return `${e.output} appeared while exporting; not overwritten`;
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOSPC' || code === 'EDQUOT') {
    return (
      `Not enough disk space to write ${e.output} (the export needs ${e.prediction.fileBytes.toLocaleString('en-US')} bytes). ` +
      `Nothing was written and ${e.source} is untouched: free some space or export to another folder.`
    );
  }
  const text = errorText(err);
  return text.includes(e.output) || text.includes(e.source) ? text : `${e.output}: ${text}`;
}
