/**
 * Send to Ollama: a library model written for Ollama (re-quantized if asked) as an 'ollama-export'
 * job with progress and cancel; the file joins the library as 'exported', and the model is
 * created in the Ollama server on OLLAMA_HOST when one answers.
 */
import { join, resolve } from 'node:path';
import type { OllamaApi, OllamaExportRequest, OllamaExportResult } from '../../src-preload/api';
import { isQuantFileType, QUANT_FILE_TYPES } from '../core/quant-recipes';
import { OLLAMA_MIN_VERSION, OllamaClient, versionAtLeast } from '../node/ollama/client';
import { exportForOllama } from '../node/ollama/export';
import { ollamaBaseUrl } from '../node/ollama/host';
import { appQuantizeThreads } from '../node/quantize';
import { checkOllamaName, ollamaFileStem } from '../node/ollama/modelfile';
import { requireReadableModel, type BackendContext } from './context';
import { loadChosenImatrix } from './imatrix';
import { libraryOf } from './library';
import { promised } from './promised';

export function createOllamaApi(ctx: BackendContext): OllamaApi {
  const host = () => ollamaBaseUrl(ctx.env);

  return promised<OllamaApi>({
    async ollamaServer() {
      const version = await new OllamaClient(host()).version();
      const problem =
        version === null
          ? `no Ollama server answers at ${host()}`
          : versionAtLeast(version, OLLAMA_MIN_VERSION)
            ? null
            : `Ollama ${version} is older than ${OLLAMA_MIN_VERSION}, whose API Gufo uses`;
      return { host: host(), version, problem };
    },

    async startOllamaExport(request: OllamaExportRequest) {
      const model = requireReadableModel(ctx, request.modelId);
      const name = checkOllamaName(request.name);
      const fileType = request.fileType || undefined;
      if (fileType !== undefined && !isQuantFileType(fileType))
        throw new Error(`unknown file type "${fileType}"; Gufo writes ${QUANT_FILE_TYPES.join(', ')}`);
      // Gufo's own folder for the name is Gufo's to replace (a second send of the same name); a folder the user chose is not.
      if (request.imatrix !== undefined && fileType === undefined)
        throw new Error('imatrix: an importance matrix weighs a re-quantization: choose a file type');
      const imatrix =
        request.imatrix === undefined
          ? undefined
          : await loadChosenImatrix(request.imatrix).catch((err: unknown) => {
              throw new Error(`imatrix: ${err instanceof Error ? err.message : String(err)}`);
            });
      const ownFolder = !request.outputDir;
      const outDir = resolve(
        request.outputDir || join(ctx.settings.get().exportDir ?? ctx.modelsDir, 'ollama', ollamaFileStem(name)),
      );
      return ctx.jobs.start(
        { kind: 'ollama-export', title: `Send ${model.name} to Ollama as ${name}`, unit: 'bytes', modelId: model.id },
        async (job): Promise<OllamaExportResult> => {
          const outcome = await exportForOllama({
            source: model.path,
            name,
            fileType,
            ...(imatrix && { imatrix: { matrix: imatrix.matrix, path: imatrix.path } }),
            threads: appQuantizeThreads(),
            outDir,
            overwrite: ownFolder,
            system: request.system,
            contextSize: request.contextSize,
            host: request.upload === false ? null : host(),
            signal: job.signal,
            onProgress: (p) => job.progress(p.done, p.total, p.detail),
          });
          const { added } = await libraryOf(ctx).addFiles([outcome.outputPath], 'exported', { sha256: outcome.sha256 });
          return { ...outcome, outputModelId: added[0]?.id ?? ctx.models.byPath(outcome.outputPath)?.id ?? null };
        },
      );
    },
  });
}
