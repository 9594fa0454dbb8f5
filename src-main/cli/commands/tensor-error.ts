import { QualityError } from '../../core/quality/perplexity';
import { tensorErrorSteps, type ErrorFigures, type TensorErrorReport } from '../../core/quality/tensor-error';
import { openGguf } from '../../node/gguf-io';
import { CliError, printJson, type Command } from '../command';
import { formatInteger, table } from '../format';
import { interruptSignal, progressBar } from '../progress';

const HELP = `Usage: gufo tensor-error <source.gguf> <export.gguf> [--tensors] [--json]

The error an exported (re-quantized) model carries against its source, tensor by tensor: every
element of both files is decoded to f32 and compared.
  RMSE       sqrt(mean (export − source)²)
  relative   ‖export − source‖ / ‖source‖
  SNR        10·log10(Σ source² / Σ (export − source)²) in dB; "—" for an unchanged tensor
Pooled by layer, by role (attn_q, ffn_down, ...) and over the whole model. Both files must hold
the same tensors with the same shapes.

Options:
  --tensors   also list every tensor (the JSON always has them)
  --json      one JSON document on stdout: { source, export, total, byLayer: [{ layer, ... }],
              byRole: [{ role, ... }], tensors: [{ name, layer, role, sourceType, exportType, ... }] },
              each with { elements, rmse, relativeError, snrDb } (null: zero source, or no error)

Ctrl-C stops.
`;

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

function figureCells(f: ErrorFigures): string[] {
  return [
    formatInteger(f.elements),
    f.rmse.toExponential(3),
    f.relativeError === null ? '—' : `${(f.relativeError * 100).toFixed(3)}%`,
    f.snrDb === null ? '—' : f.snrDb.toFixed(2),
  ];
}

const FIGURE_HEADER = ['elements', 'RMSE', 'relative', 'SNR dB'];

function printReport(r: TensorErrorReport, withTensors: boolean): void {
  const right = [1, 2, 3, 4];
  const sections = [
    table(
      ['role', ...FIGURE_HEADER],
      r.byRole.map((g) => [g.role, ...figureCells(g)]),
      right,
    ),
    table(
      ['layer', ...FIGURE_HEADER],
      r.byLayer.map((g) => [g.layer === null ? 'other' : String(g.layer), ...figureCells(g)]),
      right,
    ),
    table(['', ...FIGURE_HEADER], [['total', ...figureCells(r.total)]], right),
  ];
  if (withTensors) {
    sections.push(
      table(
        ['tensor', 'types', ...FIGURE_HEADER],
        r.tensors.map((t) => [t.name, `${t.sourceType} → ${t.exportType}`, ...figureCells(t)]),
        [2, 3, 4, 5],
      ),
    );
  }
  process.stdout.write(sections.join('\n\n') + '\n');
}

export const tensorErrorCommand: Command = {
  help: HELP,
  modelArgs: [0, 1],
  options: {
    tensors: { type: 'boolean' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [sourcePath, exportPath, ...extra] = args.positionals;
    if (!sourcePath || !exportPath)
      throw new CliError('expected a source and an export GGUF file (see gufo tensor-error --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const signal = interruptSignal();
    const source = openGguf(sourcePath);
    try {
      const exported = openGguf(exportPath);
      const bar = progressBar('comparing');
      let report: TensorErrorReport;
      try {
        const steps = tensorErrorSteps(source.gguf, exported.gguf);
        for (let step = steps.next(); ; step = steps.next()) {
          if (step.done) {
            report = step.value;
            break;
          }
          const p = step.value;
          bar.update(p.elementsDone / p.elementsTotal, `${p.index + 1}/${p.count} ${p.tensor}`);
          // Let Ctrl-C in between chunks.
          await nextTurn();
          signal.throwIfAborted();
        }
      } catch (err) {
        if (err instanceof QualityError) throw new CliError(err.message);
        throw err;
      } finally {
        bar.done();
        exported.file.close();
      }
      if (args.values.json) return printJson({ source: sourcePath, export: exportPath, ...report });
      printReport(report, args.values.tensors === true);
    } finally {
      source.file.close();
    }
  },
};
