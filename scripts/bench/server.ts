/**
 * Server throughput (issue #29 item 7), `npm run bench:server [-- --model PATH] [--streams 4]
 * [--tokens 96] [--parallel 4] [--rounds 3] [--json]`: a real server on 127.0.0.1 (the OpenAI tests' fixture:
 * a fresh data folder, the engine in its own process, on the adapter the environment picks, e.g.
 * VK_ICD_FILENAMES=/usr/share/vulkan/icd.d/lvp_icd.json for lavapipe) and the official `openai`
 * client, streaming greedy completions:
 *   - one stream, then `--streams` at once (different prompts), `--rounds` times alternating: the
 *     median summed completion tok/s of each, their ratio, the streams' first-token latencies, and
 *     whether the answers at once equal the same requests run one at a time;
 *   - the prompt cache: a long prompt, another prompt, then the long one again: time to first
 *     token and usage.prompt_tokens_details.cached_tokens of each.
 * Default model: ../shared/models/stories260K.gguf. Progress goes to stderr; --json prints one
 * JSON document to stdout.
 */
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import type OpenAI from 'openai';
import { startOpenAiTestServer } from '../../test/backend/fixtures/openai-server';
import { STORIES_260K } from '../../test/support/paths';

const { values } = parseArgs({
  options: {
    model: { type: 'string', default: STORIES_260K },
    streams: { type: 'string', default: '4' },
    tokens: { type: 'string', default: '96' },
    rounds: { type: 'string', default: '3' },
    parallel: { type: 'string', default: '4' },
    json: { type: 'boolean', default: false },
  },
});
const count = (flag: 'streams' | 'tokens' | 'parallel' | 'rounds') => {
  const n = Number(values[flag]);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${flag} must be a positive integer, got "${values[flag]}"`);
  return n;
};
const STREAMS = count('streams');
const TOKENS = count('tokens');
const PARALLEL = count('parallel');
const ROUNDS = count('rounds');

// Story openings that stories260K continues for a while; other models take them as well.
const OPENINGS = [
  'Once upon a time, there was a little girl named Lily.',
  'One day, a big dog went to the park.',
  'Tom and Sue were best friends.',
  'There was a little bird who lived in a tree.',
  'Mia had a red ball that she loved.',
  'The sun was hot and the boy was thirsty.',
  'A small cat found a box in the garden.',
  'Ben wanted to build a tall tower.',
];

interface Stream {
  text: string;
  tokens: number;
  cached: number;
  firstMs: number;
  endMs: number;
}

/** One streamed greedy completion; times from `t0`. */
async function stream(client: OpenAI, model: string, prompt: string, maxTokens: number, t0: number): Promise<Stream> {
  const s = await client.completions.create({
    model,
    prompt,
    max_tokens: maxTokens,
    temperature: 0,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let firstMs = NaN;
  let tokens = 0;
  let cached = 0;
  for await (const chunk of s) {
    const piece = chunk.choices[0]?.text ?? '';
    if (piece !== '' && Number.isNaN(firstMs)) firstMs = performance.now() - t0;
    text += piece;
    if (chunk.usage) {
      tokens = chunk.usage.completion_tokens;
      cached = chunk.usage.prompt_tokens_details?.cached_tokens ?? 0;
    }
  }
  return { text, tokens, cached, firstMs, endMs: performance.now() - t0 };
}

interface Run {
  streams: Stream[];
  wallMs: number;
  tokens: number;
  /** Summed completion tok/s: all streams' tokens over the wall time from the first request to the last answer's end. */
  tokS: number;
}

/** `prompts` all at once, or one after another; times from the first request. */
async function run(client: OpenAI, model: string, prompts: string[], atOnce = true): Promise<Run> {
  const t0 = performance.now();
  const streams: Stream[] = [];
  if (atOnce) streams.push(...(await Promise.all(prompts.map((p) => stream(client, model, p, TOKENS, t0)))));
  else for (const p of prompts) streams.push(await stream(client, model, p, TOKENS, t0));
  const wallMs = Math.max(...streams.map((s) => s.endMs));
  const tokens = streams.reduce((n, s) => n + s.tokens, 0);
  return { streams, wallMs, tokens, tokS: tokens / (wallMs / 1000) };
}

/** The run of median tok/s. */
function median(runs: Run[]): Run {
  return [...runs].sort((a, b) => a.tokS - b.tokS)[Math.floor(runs.length / 2)]!;
}

async function main(): Promise<void> {
  const t = await startOpenAiTestServer([values.model], {}, PARALLEL);
  const client = t.client();
  try {
    const model = basename(values.model, '.gguf').toLowerCase();
    const adapterState = await t.backend.api.gpuAdapter();
    const adapter = adapterState.status === 'ready' ? adapterState.adapter.name : `none (${adapterState.reason})`;
    const prompts = Array.from({ length: STREAMS }, (_, i) => OPENINGS[i % OPENINGS.length]!);

    process.stderr.write(`${model} on ${adapter}, --parallel ${PARALLEL}: loading and warming up...\n`);
    await run(client, model, [prompts[0]!]);
    // Alternating, so that the load of a shared machine falls on both sides.
    const singles: Run[] = [];
    const together: Run[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      process.stderr.write(`round ${r + 1} of ${ROUNDS}: one stream, then ${STREAMS} at once...\n`);
      singles.push(await run(client, model, [prompts[0]!]));
      together.push(await run(client, model, prompts));
    }
    const one = median(singles);
    const many = median(together);
    process.stderr.write(`the same ${STREAMS} one at a time...\n`);
    const sequential = await run(client, model, prompts, false);
    const equal = together.every((r) => r.streams.every((s, i) => s.text === sequential.streams[i]!.text));

    process.stderr.write('prompt cache...\n');
    // Prompts not sent before: the first is evaluated whole (but its BOS, if a slot holds one).
    const long = [...OPENINGS].reverse().join(' ').repeat(3);
    const cache = [];
    for (const [name, prompt] of [
      ['long prompt', long],
      ['another prompt', 'Lily and Ben played with a kite on a windy day.'],
      ['long prompt again', long],
    ] as const) {
      const s = await stream(client, model, prompt, 1, performance.now());
      cache.push({ name, firstMs: s.firstMs, cachedTokens: s.cached });
    }

    const result = {
      bench: 'server',
      model,
      adapter,
      parallel: PARALLEL,
      maxTokens: TOKENS,
      rounds: ROUNDS,
      one: { tokS: one.tokS, tokens: one.tokens, wallMs: one.wallMs, rounds: singles.map((r) => r.tokS) },
      atOnce: {
        streams: STREAMS,
        tokS: many.tokS,
        tokens: many.tokens,
        wallMs: many.wallMs,
        firstMs: many.streams.map((s) => s.firstMs),
        rounds: together.map((r) => r.tokS),
      },
      ratio: many.tokS / one.tokS,
      atOnceEqualsOneAtATime: equal,
      promptCache: cache,
    };
    if (values.json) {
      process.stdout.write(JSON.stringify(result, null, 2) + '\n');
      return;
    }
    const ms = (n: number) => `${n.toFixed(0)} ms`;
    const each = (runs: Run[]) => runs.map((r) => r.tokS.toFixed(1)).join(', ');
    console.log(
      `${model} on ${adapter}, --parallel ${PARALLEL}, up to ${TOKENS} tokens per stream, median of ${ROUNDS}`,
    );
    console.log(`1 stream:          ${one.tokS.toFixed(1)} tok/s (rounds: ${each(singles)})`);
    console.log(
      `${STREAMS} streams at once: ${many.tokS.toFixed(1)} tok/s summed (rounds: ${each(together)}; first tokens at ${many.streams.map((s) => ms(s.firstMs)).join(', ')})`,
    );
    console.log(`ratio:             x${result.ratio.toFixed(2)}`);
    console.log(`answers equal to one at a time: ${equal ? 'yes' : 'NO'}`);
    for (const c of cache)
      console.log(`${c.name.padEnd(20)} first token ${ms(c.firstMs)}, cached_tokens ${c.cachedTokens}`);
  } finally {
    await t.close();
  }
}

await main();
