import { log, printJson, CliError, integerOption, type Command } from '../command';
import { formatBytes } from '../format';
import { adapterJson, memoryJson, startEngine } from './run';

const HELP = `Usage: gufo bench <file.gguf> [-p 512] [-n 128] [--json]

Measures the engine like llama-bench: prompt processing (prefill) of -p tokens, then generation
(decode) of -n tokens, greedy, on the GPU. Also reports what decode speed means for memory
traffic: the weight and KV cache bytes each decoded token reads, and that traffic as a fraction
of this adapter's copy bandwidth, measured by a copy kernel in the same run (the roofline).

Options:
  -p N      prompt tokens (default 512)
  -n N      generated tokens (default 128)
  --json    one JSON document on stdout: { promptTokens, genTokens, prefillTokS, decodeTokS,
            bytesPerToken, achievedBytesPerSecond, copyBytesPerSecond, rooflineFraction,
            adapter, memory }

GUFO_ADAPTER picks the GPU adapter by name.
`;

export const benchCommand: Command = {
  name: 'bench',
  summary: 'measure prefill and decode speed on the GPU, against the memory roofline',
  help: HELP,
  options: {
    p: { type: 'string', short: 'p' },
    n: { type: 'string', short: 'n' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo bench --help)');
    if (extra.length > 0) throw new CliError(`unexpected argument "${extra[0]}"`);
    const p = integerOption(args, 'p', 512);
    const n = integerOption(args, 'n', 128);
    if (p < 1 || n < 1) throw new CliError('-p and -n must be at least 1');
    const json = args.values.json === true;
    const { host } = await startEngine(path, p + n, json);
    try {
      const { result, info } = await host.bench(p, n);
      if (json) {
        printJson({ ...result, adapter: adapterJson(info), memory: memoryJson(info) });
        return;
      }
      const model = info.model!;
      log(`${model.path}: ${model.architecture}, ${model.layers} layers, ${formatBytes(info.memory!.residentWeightBytes)} of weights`);
      const rows: [string, string][] = [
        ['adapter', `${info.adapter.name} (${info.adapter.backend})`],
        [`prefill (pp${p})`, `${result.prefillTokS.toFixed(1)} tok/s`],
        [`decode (tg${result.genTokens})`, `${result.decodeTokS.toFixed(1)} tok/s`],
        ['bytes per token', formatBytes(result.bytesPerToken)],
        ['achieved', `${formatBytes(result.achievedBytesPerSecond)}/s`],
        ['copy bandwidth', `${formatBytes(result.copyBytesPerSecond)}/s`],
        ['roofline fraction', `${(result.rooflineFraction * 100).toFixed(1)}%`],
      ];
      process.stdout.write(rows.map(([k, v]) => `${k.padEnd(20)}${v}\n`).join(''));
    } finally {
      await host.close();
    }
  },
};
