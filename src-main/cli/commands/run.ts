import type { GgufFile } from '../../core/gguf/gguf-file';
import { summarizeModel } from '../../core/model-summary';
import { whyNotRunnable } from '../../core/runnable';
import { createTokenizer, readVocab, type Tokenizer } from '../../core/tokenizer/index';
import { EngineHost } from '../../engine-wire/host';
import type { EngineInfo, GenerateResult, ModelUse, SamplingParams } from '../../engine-wire/protocol';
import { openGguf } from '../../node/gguf-io';
import { CliError, CTX_OPTION, integerOption, log, printJson, type Command, type CommandArgs } from '../command';
import { formatBytes } from '../format';
import { interruptSignal, progressBar } from '../progress';
import {
  DEFAULT_KV_CACHE_TYPES,
  isKvCacheType,
  KV_CACHE_TYPES,
  type KvCacheTypes,
} from '../../../src-preload/api/kv-cache';

export const KV_CACHE_HELP = `  --cache-type-k TYPE   KV cache type for K: ${KV_CACHE_TYPES.join(', ')} (default f16; q8_0 takes about
                        half the memory, q4_0 a quarter), as llama.cpp's --cache-type-k
  --cache-type-v TYPE   the same for V`;

export const KV_CACHE_OPTIONS = {
  'cache-type-k': { type: 'string' },
  'cache-type-v': { type: 'string' },
} as const;

/** --cache-type-k and --cache-type-v, f16 each unless given. */
export function kvCacheOptions(args: CommandArgs): KvCacheTypes {
  const type = (flag: 'cache-type-k' | 'cache-type-v', fallback: KvCacheTypes['k']) => {
    const raw = args.values[flag];
    if (raw === undefined) return fallback;
    if (!isKvCacheType(raw))
      throw new CliError(`--${flag} must be one of ${KV_CACHE_TYPES.join(', ')}, got "${String(raw)}"`);
    return raw;
  };
  return { k: type('cache-type-k', DEFAULT_KV_CACHE_TYPES.k), v: type('cache-type-v', DEFAULT_KV_CACHE_TYPES.v) };
}

const HELP = `Usage: gufo run <model> --prompt "<text>" [-n 64] [--temp 0] [--seed S] [--top-k K]
                [--top-p P] [--min-p P] [--repeat-penalty R] [--ctx N] [--cache-type-k T]
                [--cache-type-v T] [--top-logprobs K] [--json]

Plain text completion on the GPU (WebGPU): continues the prompt, streaming the text to stdout.
The prompt gets a BOS token when the model's vocabulary asks for one; special-token texts in it
(such as "<|im_start|>") are read as those tokens. Stops at the model's end-of-generation token.
Ctrl-C stops the generation.

Options:
  -p, --prompt TEXT     the text to continue (required)
  -n N                  tokens to generate at most (default 64)
  --temp T              temperature; 0 (the default) is greedy: always the most likely token
  -s, --seed S          random seed for sampling (default: random)
  --top-k K             keep the K most likely tokens (default 40 when sampling; 0: off)
  --top-p P             keep the most likely tokens up to probability P (default 0.95 when sampling)
  --min-p P             drop tokens less likely than P × the most likely (default 0.05 when sampling)
  --repeat-penalty R    penalize the last 64 tokens (default 1: off)
  -c, --ctx N           context length (default: prompt + n, at most the model's)
${KV_CACHE_HELP}
  --top-logprobs K      with --json: the K most likely tokens of each step (raw distribution)
  --json                one JSON document on stdout: { promptIds, ids, text, logprobs?,
                        timings: { loadMs, ttftMs, prefillTokS, decodeTokS }, adapter, memory }

GUFO_ADAPTER picks the GPU adapter by name.
`;

/** A string option parsed as a finite number, or the default when absent. */
export function numberOption(args: CommandArgs, name: string, fallback: number): number {
  const raw = args.values[name];
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (typeof raw !== 'string' || raw.trim() === '' || !Number.isFinite(n))
    throw new CliError(`--${name} must be a number, got "${String(raw)}"`);
  return n;
}

/** Sampling settings from the command line; llama.cpp's defaults for the filters when sampling. */
export function samplingOptions(args: CommandArgs): SamplingParams {
  const temperature = numberOption(args, 'temp', 0);
  const sampling = temperature > 0;
  const seed =
    args.values.seed === undefined ? Math.floor(Math.random() * 2 ** 32) : integerOption(args, 'seed', 0) >>> 0;
  return {
    temperature,
    topK: integerOption(args, 'top-k', sampling ? 40 : 0),
    topP: numberOption(args, 'top-p', sampling ? 0.95 : 1),
    minP: numberOption(args, 'min-p', sampling ? 0.05 : 0),
    repeatPenalty: numberOption(args, 'repeat-penalty', 1),
    presencePenalty: 0,
    frequencyPenalty: 0,
    penaltyLastN: 64,
    seed,
  };
}

export const SAMPLING_OPTIONS = {
  temp: { type: 'string' },
  seed: { type: 'string', short: 's' },
  'top-k': { type: 'string' },
  'top-p': { type: 'string' },
  'min-p': { type: 'string' },
  'repeat-penalty': { type: 'string' },
} as const;

/** The model's trained context length, from its metadata. */
export function trainedContext(gguf: GgufFile): number | undefined {
  const arch = gguf.getString('general.architecture');
  return arch ? gguf.getNumber(`${arch}.context_length`) : undefined;
}

/** Starts an engine process and loads the model with a progress bar on stderr. */
export async function startEngine(
  path: string,
  ctx: number,
  quiet = false,
  { kvTypes, use }: { kvTypes?: KvCacheTypes; use?: ModelUse } = {},
): Promise<{ host: EngineHost; info: EngineInfo }> {
  // The library's rule and words (core/runnable.ts), before an engine process starts.
  const { gguf, file } = openGguf(path);
  try {
    const problem = whyNotRunnable(summarizeModel(gguf));
    if (problem) throw new CliError(`${path} cannot run: ${problem}`);
  } finally {
    file.close();
  }
  const host = new EngineHost();
  const bar = progressBar('loading');
  let kernels: ReturnType<typeof progressBar> | undefined;
  try {
    const info = await host.load(path, { ctx, kvTypes, use }, (e) => {
      if (e.stage === 'weights') return bar.update(e.done / e.total, formatBytes(e.done));
      // The first run of each kernel compiles it: minutes on a software GPU with an empty shader cache.
      if (!kernels) {
        bar.done();
        kernels = progressBar('preparing GPU kernels');
      }
      kernels.update(e.done / e.total, `${e.done} of ${e.total}`);
    });
    bar.done();
    kernels?.done();
    const m = info.memory!;
    if (!quiet)
      log(
        `${info.adapter.name} (${info.adapter.backend}): ${formatBytes(m.residentWeightBytes)} of weights, KV cache ${formatBytes(m.kvBytes)} for ${ctx} tokens (K ${m.kvTypes.k}, V ${m.kvTypes.v})`,
      );
    // Said even when quiet: a CPU standing in for the GPU explains every number that follows.
    if (info.adapter.isFallbackAdapter)
      log(`software GPU: slow (${info.adapter.name}); install your GPU's driver to use the GPU`);
    return { host, info };
  } catch (err) {
    bar.done();
    kernels?.done();
    await host.close();
    throw err;
  }
}

/** The public shape of the adapter and memory in --json output. */
export function adapterJson(info: EngineInfo) {
  const { name, vendor, architecture, backend, features } = info.adapter;
  return { name, vendor, architecture, backend, features };
}

export function memoryJson(info: EngineInfo) {
  const m = info.memory!;
  return {
    fileTensorBytes: m.fileTensorBytes,
    residentWeightBytes: m.residentWeightBytes,
    kvBytes: m.kvBytes,
    kvTypes: m.kvTypes,
  };
}

function promptIds(tok: Tokenizer, text: string): number[] {
  const ids = tok.tokenize(text, { addBos: true, parseSpecial: true });
  if (ids.length === 0) throw new CliError('the prompt gives no tokens (and the model adds no BOS): give some text');
  return ids;
}

function timingLine(r: GenerateResult, loadMs: number): string {
  const t = r.timings;
  return (
    `load ${loadMs.toFixed(0)} ms, prompt ${t.promptTokens} tokens in ${t.ttftMs.toFixed(0)} ms (${t.prefillTokS.toFixed(1)} tok/s), ` +
    `${t.generated} generated at ${t.decodeTokS.toFixed(1)} tok/s (${r.stopReason})`
  );
}

export const runCommand: Command = {
  help: HELP,
  modelArgs: [0],
  options: {
    prompt: { type: 'string', short: 'p' },
    n: { type: 'string', short: 'n' },
    ...SAMPLING_OPTIONS,
    ctx: CTX_OPTION,
    ...KV_CACHE_OPTIONS,
    'top-logprobs': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run(args) {
    const [path, ...extra] = args.positionals;
    if (!path) throw new CliError('expected a GGUF file (see gufo run --help)');
    if (extra.length > 0)
      throw new CliError(`unexpected argument "${extra[0]}"; quote the prompt and pass it with --prompt`);
    const text = args.values.prompt;
    if (typeof text !== 'string') throw new CliError('--prompt "<text>" is required (see gufo run --help)');
    const maxTokens = integerOption(args, 'n', 64);
    const topLogprobs = integerOption(args, 'top-logprobs', 0);
    const json = args.values.json === true;
    const sampling = samplingOptions(args);
    const kvTypes = kvCacheOptions(args);

    const { gguf, file } = openGguf(path);
    try {
      const tok = createTokenizer(readVocab(gguf));
      const prompt = promptIds(tok, text);
      const trained = trainedContext(gguf) ?? Infinity;
      const ctx = integerOption(
        args,
        'ctx',
        Math.min(trained, Math.max(256, Math.ceil((prompt.length + maxTokens) / 256) * 256)),
      );
      if (prompt.length > ctx)
        throw new CliError(`the prompt has ${prompt.length} tokens, more than the context of ${ctx} (see --ctx)`);

      const { host, info } = await startEngine(path, ctx, json, { kvTypes });
      const signal = interruptSignal();
      try {
        const stream = tok.streamDecoder({ stripLeadingSpace: false });
        const result = await host.generate(
          { prompt, maxTokens, sampling, topLogprobs },
          {
            signal,
            onToken: json ? undefined : (e) => process.stdout.write(stream.push(e.token)),
          },
        );
        const loadMs = info.loadMs ?? 0;
        if (json) {
          const decoder = tok.streamDecoder({ stripLeadingSpace: false });
          const out = result.ids.map((id) => decoder.push(id)).join('') + decoder.flush();
          printJson({
            promptIds: prompt,
            ids: result.ids,
            text: out,
            stopReason: result.stopReason,
            ...(topLogprobs > 0 ? { logprobs: result.logprobs ?? [] } : {}),
            timings: {
              loadMs,
              ttftMs: result.timings.ttftMs,
              prefillTokS: result.timings.prefillTokS,
              decodeTokS: result.timings.decodeTokS,
            },
            adapter: adapterJson(info),
            memory: memoryJson(info),
          });
        } else {
          process.stdout.write(stream.flush() + '\n');
          log(timingLine(result, loadMs));
          if (result.stopReason === 'context')
            log(`the context is full (${ctx} tokens): the output stops here; raise --ctx for more`);
        }
      } finally {
        await host.close();
      }
    } finally {
      file.close();
    }
  },
};
