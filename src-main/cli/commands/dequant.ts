import { dequantizeRange, expertRange } from '../../core/dequantize';
import { decodedValues } from '../../core/quants/decoders';
import { openGguf } from '../../node/gguf-io';
import { writeAtomically } from '../../node/atomic-write';
import { CliError, integerOption, printJson, type Command } from '../command';

const HELP = `Usage: gufo dequant <model> <tensor> -o <out.f32> [--expert <e>] [--json]

Writes one tensor as raw little-endian f32 values in GGML order (ne[0] fastest), decoded
exactly as llama.cpp decodes it. For checks outside Gufo, e.g. numpy.fromfile(out, "<f4").

Options:
  -o, --output FILE   where to write the f32 values (written whole or not at all)
  --expert E          only expert E of a stacked MoE tensor [cols, rows, experts]
  --json              print { file, tensor, type, ne, elements, output, bytes } on stdout
`;

/** Elements decoded and written at a time: bounded memory for tensors of any size. */
const CHUNK_ELEMENTS = 1 << 20;

export const dequantCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    output: { type: 'string', short: 'o' },
    expert: { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [path, name, ...extra] = args.positionals;
    const output = args.values.output;
    if (!path || !name || extra.length > 0)
      throw new CliError('expected a file and a tensor name (see gufo dequant --help)');
    if (typeof output !== 'string') throw new CliError('missing -o <out.f32> (see gufo dequant --help)');
    const { gguf, file } = openGguf(path);
    try {
      const tensor = gguf.tensor(name);
      if (!tensor) throw new CliError(`${path}: no tensor named "${name}"`);
      let [start, end] = [0, tensor.elements];
      if (args.values.expert !== undefined) [start, end] = expertRange(gguf, tensor, integerOption(args, 'expert', 0));
      // Whole rows per chunk, so every chunk starts on a block boundary.
      const rowLength = tensor.ne[0] ?? 1;
      const step = Math.max(1, Math.floor(CHUNK_ELEMENTS / rowLength)) * rowLength;
      // One buffer for every chunk, where the WebAssembly decoders write without a copy.
      const into = decodedValues(Math.min(step, end - start));
      await writeAtomically(output, async (put) => {
        for (let at = start; at < end; at += step) {
          const values = dequantizeRange(gguf, tensor, at, Math.min(end, at + step), into);
          await put(new Uint8Array(values.buffer, values.byteOffset, values.byteLength));
        }
      });
      if (args.values.json) {
        printJson({
          file: path,
          tensor: name,
          type: tensor.type.name,
          ne: tensor.ne,
          elements: end - start,
          output,
          bytes: (end - start) * 4,
        });
      }
    } finally {
      file.close();
    }
  },
};
