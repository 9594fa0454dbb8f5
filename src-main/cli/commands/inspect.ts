import { fileTypeLabel, guessedFileType } from '../../../src-preload/api';
import { bitsPerWeight } from '../../core/ggml-types';
import type { GgufFile } from '../../core/gguf/gguf-file';
import { ggufToJson, ggufTypeName, ggufValueToJson } from '../../core/gguf/json';
import { GgufType, type GgufKv } from '../../core/gguf/values';
import { summarizeModel, type ModelSummary } from '../../core/model-summary';
import { openGguf } from '../../node/gguf-io';
import { CliError, CTX_OPTION, integerOption, printJson, type Command } from '../command';
import { clip, formatBytes, formatCount, formatInteger, table } from '../format';

const HELP = `Usage: gufo inspect <model> [--json] [--ctx N]

Shows what a GGUF file holds: a summary (architecture, sizes, tokenizer, memory needed),
its metadata, every tensor with its type, shape and size, and totals by type.
Reads only the header: opening a file of any size takes milliseconds.

Options:
  --json        one JSON document on stdout: { version, alignment, dataOffset, fileBytes,
                metadata, tensors: [{ name, type, ne, offset, bytes }], summary }
                summary.fileType: general.file_type as llama.cpp names it, null when the file does
                not say; summary.guessedFileType: then the type of the largest share of the tensors'
                bytes (the text shows it marked "(guessed)"), else null
  -c, --ctx N   context length for the KV cache estimate (default: the model's own)
`;

/** Items of an array shown in the human metadata table. */
const ARRAY_PREVIEW = 6;

function kvType(kv: GgufKv): string {
  if (kv.type !== GgufType.ARRAY || typeof kv.value !== 'object') return ggufTypeName(kv.type);
  return `[${ggufTypeName(kv.value.itemType)}]`;
}

function kvValue(kv: GgufKv): string {
  if (typeof kv.value !== 'object') return clip(String(ggufValueToJson(kv.value, kv.type)), 80);
  const length = kv.value.items.length;
  const json = ggufValueToJson(kv.value, kv.type);
  const head = (Array.isArray(json) ? json : (json as { head: unknown[] }).head).slice(0, ARRAY_PREVIEW);
  const shown = head.map((v) => (typeof v === 'string' ? `"${clip(v, 16)}"` : JSON.stringify(v))).join(', ');
  return `${formatInteger(length)} items: ${shown}${length > head.length ? ', …' : ''}`;
}

function perLayerText(v: number | readonly number[] | null): string {
  if (v === null) return '—';
  return typeof v === 'number' ? String(v) : `per layer: ${v.join(', ')}`;
}

function summaryLines(s: ModelSummary): string {
  const rows: [string, string][] = [
    ['architecture', s.architecture ?? '—'],
    ['name', s.name ?? '—'],
    ['parameters', `${formatCount(s.parameters)} (${formatInteger(s.parameters)})`],
    ['file type', fileTypeLabel(s.fileType, s.typeMix) ?? '— (no tensors)'],
    ...(s.recipe ? [['recipe', s.recipe] as [string, string]] : []),
    ['type mix', s.typeMix.map((t) => `${t.type} ${t.tensors}`).join(', ') || '— (no tensors)'],
    ['context length', s.contextLength?.toString() ?? '—'],
    ['layers', s.layers?.toString() ?? '—'],
    ['heads', perLayerText(s.heads)],
    ['kv heads', perLayerText(s.kvHeads)],
    [
      'head size',
      s.headSize === null
        ? '—'
        : s.valueHeadSize !== s.headSize
          ? `${s.headSize} (k), ${s.valueHeadSize} (v)`
          : String(s.headSize),
    ],
    ['embedding size', s.embeddingSize?.toString() ?? '—'],
    ['feed-forward size', s.feedForwardSize?.toString() ?? '—'],
    ['vocab size', s.vocabSize?.toString() ?? '—'],
    ['tokenizer', [s.tokenizerModel ?? '—', s.tokenizerPre ? `(pre: ${s.tokenizerPre})` : ''].join(' ').trim()],
    ['chat template', s.hasChatTemplate ? 'yes' : 'no'],
    ['weights memory', formatBytes(s.weightBytes)],
    [
      'KV cache memory',
      s.kvCache
        ? `${formatBytes(s.kvCache.bytes)} at context ${formatInteger(s.kvCache.context)} (${formatBytes(s.kvCache.bytesPerToken)} per token, F16)`
        : '— (metadata lacks layers, heads or head size)',
    ],
  ];
  return rows.map(([k, v]) => `  ${k.padEnd(18)} ${v}`).join('\n');
}

function shape(ne: readonly number[]): string {
  return `[${ne.join(', ')}]`;
}

function render(path: string, gguf: GgufFile, summary: ModelSummary): string {
  const sections = [
    `${path}\n  GGUF v${gguf.version}, ${formatBytes(gguf.fileBytes)}, ${gguf.tensors.length} tensors, ` +
      `${gguf.kvs.length} metadata keys, alignment ${gguf.alignment}, data at ${gguf.dataOffset} (read via ${gguf.source.access})`,
    `Summary\n${summaryLines(summary)}`,
    `Metadata\n${table(
      ['key', 'type', 'value'],
      gguf.kvs.map((kv) => [kv.key, kvType(kv), kvValue(kv)]),
    )}`,
  ];
  if (gguf.tensors.length > 0) {
    const rows = gguf.tensors.map((t) => [
      t.name,
      t.type.name,
      shape(t.ne),
      formatInteger(t.bytes),
      bitsPerWeight(t.type).toFixed(2),
    ]);
    sections.push(`Tensors\n${table(['name', 'type', 'shape', 'bytes', 'bpw'], rows, [3, 4])}`);
    const totals = summary.typeMix.map((m) => [
      m.type,
      String(m.tensors),
      formatInteger(m.parameters),
      formatBytes(m.bytes),
      ((m.bytes * 8) / m.parameters || 0).toFixed(2),
    ]);
    const all = gguf.tensors.reduce((n, t) => n + t.bytes, 0);
    totals.push([
      'total',
      String(gguf.tensors.length),
      formatInteger(summary.parameters),
      formatBytes(all),
      ((all * 8) / summary.parameters || 0).toFixed(2),
    ]);
    sections.push(`Totals by type\n${table(['type', 'tensors', 'parameters', 'bytes', 'bpw'], totals, [1, 2, 3, 4])}`);
  }
  return sections.join('\n\n');
}

export const inspectCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    json: { type: 'boolean' },
    ctx: CTX_OPTION,
  },
  run(args) {
    const [path, ...extra] = args.positionals;
    if (!path || extra.length > 0) throw new CliError('expected exactly one file (see gufo inspect --help)');
    const { gguf, file } = openGguf(path);
    try {
      const ctx = args.values.ctx === undefined ? undefined : integerOption(args, 'ctx', 0);
      const summary = summarizeModel(gguf, ctx);
      if (args.values.json)
        printJson({
          ...ggufToJson(gguf),
          summary: { ...summary, guessedFileType: guessedFileType(summary.fileType, summary.typeMix) },
        });
      else process.stdout.write(render(path, gguf, summary) + '\n');
    } finally {
      file.close();
    }
  },
};
