import { benchRunRecord } from '../../backend/bench-record';
import { BenchRunStore } from '../../node/store/bench-runs';
import { log, printJson, CliError, integerOption, type Command } from '../command';
import { formatBytes } from '../format';
import { STORE_HELP, storeResults } from '../results-store';
import { adapterJson, memoryJson, startEngine } from './run';

const HELP = `Usage: gufo bench <file.gguf> [-p 512] [-n 128] [--json]

Measures the engine like llama-bench: prompt processing (prefill) of -p tokens, then generation
(decode) of -n tokens, greedy, on the GPU. Also reports what decode speed means for memory
traffic: the weight and KV cache bytes each decoded token reads (of a mixture-of-experts model's
expert tensors, only the share of the experts a token runs), and that traffic as a fraction of
this adapter's copy bandwidth, measured by a copy kernel in the same run (the roofline).

Options:
  -p N      prompt tokens (default 512)
  -n N      generated tokens (default 128)
  --json    one JSON document on stdout: { promptTokens, genTokens, prefillTokS, decodeTokS,
            bytesPerToken, achievedBytesPerSecond, copyBytesPerSecond, rooflineFraction,
            adapter, memory }

${STORE_HELP}

GUFO_ADAPTER picks the GPU adapter by name.
`;

export const benchCommand: Command = {
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
    let measured: Awaited<ReturnType<typeof host.bench>>;
    try {
      measured = await host.bench(p, n);
    } finally {
      await host.close();
    }
    const { result, info } = measured;
    if (json) {
      printJson({ ...result, adapter: adapterJson(info), memory: memoryJson(info) });
    } else {
      const model = info.model!;
      const experts = model.experts ? `, ${model.experts} experts per layer (${model.expertsUsed} per token)` : '';
      log(`${model.path}: ${model.architecture}, ${model.layers} layers${experts}, ${formatBytes(info.memory!.residentWeightBytes)} of weights`);
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
    }
    await storeResults(async (store) => {
      const { entry, sha256 } = await store.model(path);
      // A loaded model always has its load time.
      new BenchRunStore(store.db).add(benchRunRecord(entry, sha256, { result, info, loadMs: info.loadMs! }, store.appVersion));
    });
  },
};
