/** `gufo quantize --plan IN`: every file type's exact size, bits per weight, fallbacks and predicted quality, nothing written. */
import { openGguf } from '../../node/gguf-io';
import { quantizePlan, type QuantizePlanRow, type QuantPlanOptions } from '../../node/quant-plan';
import { CliError, printJson } from '../command';
import { formatBytes, table } from '../format';
import { interruptSignal, progressBar } from '../progress';

function planCells(row: QuantizePlanRow): string[] {
  if (row.unavailable !== null || row.bytes === null || row.predicted === null)
    return [row.type, '—', '—', '—', '—', row.unavailable ?? ''];
  const { relativeError, snrDb } = row.predicted;
  const fallbacks = row.fallbacks.map((f) => `${f.tensors} ${f.from} → ${f.to}`).join(', ');
  return [
    row.type,
    formatBytes(row.bytes),
    row.bitsPerWeight!.toFixed(2),
    relativeError === null ? '—' : `${(relativeError * 100).toFixed(3)}%`,
    snrDb === null ? '—' : snrDb.toFixed(2),
    fallbacks,
  ];
}

export async function printPlan(
  positionals: string[],
  options: Omit<QuantPlanOptions, 'signal' | 'onProgress'>,
  json: boolean,
): Promise<void> {
  const [input, ...extra] = positionals;
  if (!input || extra.length > 0)
    throw new CliError('--plan takes one input file and no output (see gufo quantize --help)');
  const { gguf, file } = openGguf(input);
  const bar = progressBar('predicting');
  let rows: QuantizePlanRow[];
  try {
    rows = await quantizePlan(gguf, {
      ...options,
      signal: interruptSignal(),
      onProgress: (done, total, next) => bar.update(done / total, next ?? ''),
    });
  } finally {
    bar.done();
    file.close();
  }
  if (json) return printJson(rows);
  const header = ['type', 'size', 'bits/weight', 'predicted relative error', 'predicted SNR dB', 'fallbacks'];
  process.stdout.write(table(header, rows.map(planCells), [1, 2, 3, 4]) + '\n');
}
