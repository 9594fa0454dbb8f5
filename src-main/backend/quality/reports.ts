/**
 * Quality reports: how far a quantized model's next-token distributions lie from its base's (KL
 * divergence, top-1 agreement, perplexity of both) over a text, measured on the GPU exactly as
 * `gufo kld` measures them (divergence.ts), as a 'quality' job, and kept in
 * quality_reports. The text is Gufo's built-in one, or the user's recent chats replayed as text.
 */
import type {
  ExportApi,
  ModelEntry,
  QualityPair,
  QualityReport,
  QualityReportRequest,
  QualityTextSource,
} from '../../../src-preload/api';
import { BUILTIN_TEXT, BUILTIN_TEXT_LABEL } from '../../core/quality/builtin-text';
import type { WindowPlan } from '../../core/quality/perplexity';
import { modelSha256 } from '../../node/library/model-sha256';
import { ChatStore } from '../../node/store/chats';
import { ExportStore } from '../../node/store/exports';
import { QualityReportStore } from '../../node/store/quality-reports';
import { branchPath } from '../chat/tree';
import { requireReadableModel, type BackendContext } from '../context';
import { untilAborted, type JobContext } from '../jobs';
import { promised } from '../promised';
import {
  defaultWindow,
  measureDivergence,
  planComparison,
  type ComparedModel,
  type EngineRunner,
  type QualityText,
} from './divergence';
import { qualityReportRecord, type MeasuredModel } from './record';

export interface QualityReports {
  api: Pick<ExportApi, 'startQualityReport' | 'listQualityReports'>;
  /** Starts the report of a finished export; when it cannot start, the job fails saying why. */
  startForExport(exportId: number, text: QualityTextSource): string;
}

const TEXT_SOURCES: readonly QualityTextSource[] = ['builtin', 'chats'];

/** The replayed chats: the most recent ones, up to this many characters of their messages. */
const CHATS_AT_MOST = 20;
const CHAT_TEXT_CHARS = 16_000;

/** Everything a report needs before the engine runs: checked at once, so bad requests fail before a job starts. */
interface PreparedReport {
  base: ModelEntry;
  quant: ModelEntry;
  exportId: number | null;
  textSource: QualityTextSource;
  text: QualityText;
  plan: WindowPlan;
}

export function isQualityTextSource(value: unknown): value is QualityTextSource {
  return TEXT_SOURCES.includes(value as QualityTextSource);
}

export function createQualityReports(ctx: BackendContext): QualityReports {
  const reports = new QualityReportStore(ctx.db);
  const exports = new ExportStore(ctx.db);

  function models(pair: QualityPair): Pick<PreparedReport, 'base' | 'quant' | 'exportId'> {
    if ('exportId' in pair) {
      const e = exports.get(pair.exportId);
      if (!e) throw new Error(`no export with id ${pair.exportId}`);
      if (e.status !== 'done')
        throw new Error(
          `export ${e.id} (${e.outputPath}) is ${e.status}: only a finished export has a file to compare`,
        );
      if (e.sourceModelId === null)
        throw new Error(`the source of export ${e.id}, ${e.sourcePath}, is no longer in the library`);
      if (e.outputModelId === null)
        throw new Error(`${e.outputPath}, written by export ${e.id}, is no longer in the library`);
      return {
        base: requireReadableModel(ctx, e.sourceModelId),
        quant: requireReadableModel(ctx, e.outputModelId),
        exportId: e.id,
      };
    }
    const { baseModelId, quantModelId } = pair;
    if (!Number.isSafeInteger(baseModelId) || !Number.isSafeInteger(quantModelId)) {
      throw new Error('a quality report needs an exportId, or a baseModelId and a quantModelId');
    }
    if (baseModelId === quantModelId)
      throw new Error(`a quality report compares two models; both ids are ${baseModelId}`);
    return {
      base: requireReadableModel(ctx, baseModelId),
      quant: requireReadableModel(ctx, quantModelId),
      exportId: null,
    };
  }

  function prepare(request: QualityReportRequest): PreparedReport {
    if (typeof request !== 'object' || request === null)
      throw new Error('a quality report needs an exportId, or a baseModelId and a quantModelId');
    const textSource = request.text ?? 'builtin';
    if (!isQualityTextSource(textSource))
      throw new Error(`unknown text "${String(textSource)}": a quality report scores ${TEXT_SOURCES.join(' or ')}`);
    const pair = models(request);
    const text = textSource === 'builtin' ? { text: BUILTIN_TEXT, label: BUILTIN_TEXT_LABEL } : chatsText(ctx);
    const plan = planComparison(pair.base.path, [pair.quant.path], text, () => defaultWindow(pair.base.contextLength));
    return { ...pair, textSource, text, plan };
  }

  function start(p: PreparedReport): string {
    return ctx.jobs.start(
      {
        kind: 'quality',
        title: `Quality report: ${p.quant.name} against ${p.base.name}`,
        unit: 'steps',
        modelId: p.quant.id,
      },
      (job) => run(job, p),
    );
  }

  async function run(job: JobContext, p: PreparedReport): Promise<QualityReport> {
    // Steps: each window of the text, for the base then the quantized model; then hashing the files.
    const windows = p.plan.windows.length;
    const total = 2 * windows + 1;
    const phase = (path: string) =>
      path === p.base.path ? { model: p.base, offset: 0 } : { model: p.quant, offset: windows };
    const runEngine: EngineRunner = (path, tokens, work) => {
      const { model, offset } = phase(path);
      const loading = `Loading ${model.name}`;
      job.progress(offset, total, loading);
      return ctx.engines.withModel(
        {
          path,
          ctx: tokens,
          use: 'evaluate',
          onProgress: (done, bytes) => job.progress(offset, total, `${loading}: ${Math.floor((done / bytes) * 100)}%`),
        },
        ({ host, info }) => {
          // Cancelled while waiting for the engine or loading: evaluate nothing nobody waits for.
          job.signal.throwIfAborted();
          return work(host, info);
        },
      );
    };
    const label: Record<ComparedModel, string> = { base: `${p.base.name} (base)`, quantized: p.quant.name };
    const result = await untilAborted(
      measureDivergence({
        basePath: p.base.path,
        quantPath: p.quant.path,
        plan: p.plan,
        signal: job.signal,
        runEngine,
        onProgress: (model, done, of) =>
          job.progress(
            (model === 'base' ? 0 : windows) + done,
            total,
            `${label[model]}: window ${Math.min(done + 1, of)} of ${of}`,
          ),
      }),
      job.signal,
    );
    const base = await hashed(p.base, job, total);
    const quant = await hashed(p.quant, job, total);
    job.signal.throwIfAborted();
    job.progress(total, total, null);
    return reports.add(
      qualityReportRecord(
        { base, quant, exportId: p.exportId, textSource: p.textSource, textLabel: p.text.label, plan: p.plan, result },
        ctx.version,
      ),
    );
  }

  async function hashed(entry: ModelEntry, job: JobContext, total: number): Promise<MeasuredModel> {
    const { sha256, computed } = await modelSha256(ctx.models, entry, {
      signal: job.signal,
      onProgress: (bytes) =>
        job.progress(total - 1, total, `Hashing ${entry.name}: ${Math.floor((bytes / entry.bytes) * 100)}%`),
    });
    if (computed) ctx.events.emit({ type: 'library-changed' });
    return { entry, sha256 };
  }

  return {
    api: promised<QualityReports['api']>({
      startQualityReport(request) {
        return start(prepare(request));
      },
      listQualityReports(query = {}) {
        return reports.list(query);
      },
    }),
    startForExport(exportId, text) {
      try {
        return start(prepare({ exportId, text }));
      } catch (err) {
        return ctx.jobs.start({ kind: 'quality', title: `Quality report of export ${exportId}`, unit: 'steps' }, () =>
          Promise.reject(err instanceof Error ? err : new Error(String(err))),
        );
      }
    },
  };
}

/** The active branch of the most recent chats, message by message, as plain text (quality reports, importance matrices). */
export function chatsText(ctx: BackendContext): QualityText {
  const chats = new ChatStore(ctx.db);
  const messages: string[] = [];
  let chars = 0;
  let used = 0;
  for (const { id } of chats.list().slice(0, CHATS_AT_MOST)) {
    if (chars >= CHAT_TEXT_CHARS) break;
    const branch = branchPath(chats.messages(id), chats.get(id)?.activeLeafId ?? null).filter(
      (m) => m.status !== 'error' && m.content.trim() !== '',
    );
    if (branch.length === 0) continue;
    used++;
    for (const m of branch) {
      messages.push(m.content.trim());
      chars += m.content.length + 2;
    }
  }
  if (used === 0)
    throw new Error('there are no chats to replay yet: chat with a model first, or use the built-in text');
  return { text: cutAt(messages.join('\n\n'), CHAT_TEXT_CHARS), label: `${used} recent chat${used === 1 ? '' : 's'}` };
}

/** At most `max` characters of `text`, cut after a word. */
function cutAt(text: string, max: number): string {
  if (text.length <= max) return text;
  const space = text.lastIndexOf(' ', max);
  return text.slice(0, space > 0 ? space : max);
}
